"""16-bit activations with 8-bit weights (issue 15, item 6, `--a16`): the
layers that have an int16 kernel run through `ptec::*_a16` (CMSIS-NN's s16
numerics), for the whole model or the layers under given module paths. The
programs run byte-identical to the numpy reference interpreter on the host
and on the emulated M55 and M33, and come closer to PyTorch float than int8
(docs/aot.md, "16-bit activations")."""

import copy
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn as nn

from conftest import ROOT
from model_checks import board_matches_reference, smooth_images as images
from ptec import host_runtime
from ptec.compiler import CompileError, compile_model
from ptec.interpreter import run_program
from ptec.pte import parse_program

A16_CONV_FAMILY = {"ptec::quantized_conv2d_a16.out", "ptec::quantized_depthwise_conv2d_a16.out",
                   "ptec::quantized_linear_a16.out"}


class ConvNet(nn.Module):
    """Every int16 kernel of a CNN: conv, depthwise, pointwise, a residual
    add, a product with a gate, max and average pools, a flatten, linear."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 12, 3, padding=1)
        self.dw = nn.Conv2d(12, 12, 3, padding=1, groups=12)
        self.pw = nn.Conv2d(12, 12, 1)
        self.gate = nn.Conv2d(12, 12, 1)
        self.c2 = nn.Conv2d(12, 16, 3, stride=2, padding=1)
        self.fc = nn.Linear(16 * 4 * 4, 10)

    def forward(self, x):
        x = torch.relu(self.c1(x))
        y = self.pw(torch.relu(self.dw(x))) + x
        y = y * self.gate(y)
        y = nn.functional.max_pool2d(torch.relu(self.c2(y)), 2, ceil_mode=True)
        y = nn.functional.avg_pool2d(y, 1)
        return self.fc(torch.flatten(y, 1))


class Attention(nn.Module):
    """Softmax over the last dim of a rank-3 tensor, between two linears."""

    def __init__(self):
        super().__init__()
        self.score = nn.Linear(16, 12)
        self.out = nn.Linear(12, 6)

    def forward(self, x):
        return self.out(torch.softmax(self.score(x), -1))


def tokens(n, seed):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(1, 5, 16, generator=g) * 1.5,) for _ in range(n)]


@pytest.fixture(scope="module")
def convnet():
    torch.manual_seed(5)
    return ConvNet().eval()


@pytest.fixture(scope="module")
def compiled(convnet):
    return compile_model(convnet, [images(1, 0)[0][0]], images(16, 0), a16=True)


def with_int8_weights(model):
    """The float model with its weights rounded as --a16 stores them
    (symmetric int8: per output channel for convs, per tensor for linears):
    what is left of the error once the activations are exact."""
    q = copy.deepcopy(model)
    for mod in q.modules():
        if isinstance(mod, (nn.Conv2d, nn.Linear)):
            w = mod.weight.data
            top = (w.abs().reshape(w.shape[0], -1).max(1).values.reshape([-1] + [1] * (w.dim() - 1))
                   if isinstance(mod, nn.Conv2d) else w.abs().max())
            mod.weight.data = torch.round(w * 127 / top) * top / 127
    return q


def errors(model, res, inputs, workdir):
    """The largest |ptec - float| and |ptec - float with int8 weights| over
    inputs, after checking that ptec-run gives the reference interpreter's
    bytes for each."""
    prog = parse_program(res.data)
    weights8 = with_int8_weights(model)
    worst, worst_w8 = 0.0, 0.0
    for (x,) in inputs:
        want = run_program(prog, [x.numpy()])[0]
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(workdir))[0]
        assert got.tobytes() == want.tobytes(), "ptec-run differs from the reference interpreter"
        with torch.no_grad():
            worst = max(worst, float(np.abs(got - model(x).numpy()).max()))
            worst_w8 = max(worst_w8, float(np.abs(got - weights8(x).numpy()).max()))
    return worst, worst_w8


def test_every_layer_takes_an_int16_kernel(compiled):
    ops = set(compiled.lowered.operators)
    assert A16_CONV_FAMILY | {"ptec::quantized_add_a16.out", "ptec::quantized_mul_a16.out",
                              "ptec::quantized_max_pool2d_a16.out", "ptec::quantized_avg_pool2d_a16.out"} <= ops, ops
    assert not [o for o in ops if o.startswith("cortex_m::quantized")], ops
    # one conversion in (the float input onto int16), one out
    assert ops - A16_CONV_FAMILY - {o for o in ops if o.endswith("_a16.out")} == {
        "quantized_decomposed::quantize_per_tensor.out", "quantized_decomposed::dequantize_per_tensor.out",
        "dim_order_ops::_clone_dim_order.out"}, ops


def test_host_equals_reference_and_beats_int8(convnet, compiled, tmp_path):
    # calibration inputs: inputs beyond the calibrated ranges clip alike in both
    a16, a16_w8 = errors(convnet, compiled, images(16, 0)[:8], tmp_path)
    int8 = compile_model(convnet, [images(1, 0)[0][0]], images(16, 0))
    i8, _ = errors(convnet, int8, images(16, 0)[:8], tmp_path)
    step16 = compiled.graph.node(compiled.graph.outputs[0]).attrs["scale16"]
    step8 = int8.graph.node(int8.graph.outputs[0]).qparams[0]
    print(f"worst |ptec - float|: a16 {a16 / step8:.2f} int8 output steps, int8 {i8 / step8:.2f}; "
          f"a16 vs float with the same int8 weights: {a16_w8 / step16:.2f} int16 output steps")
    # measured: a16 0.70 int8 steps, int8 1.93; a16 within 2.41 int16 steps
    # of the float model with int8 weights (docs/aot.md)
    assert a16_w8 <= 4 * step16, (a16_w8, step16)
    assert a16 < 0.5 * i8, (a16, i8)


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
def test_boards_equal_reference(convnet, tmp_path, target):
    data = compile_model(convnet, [images(1, 0)[0][0]], images(16, 0), target=target, a16=True).data
    board_matches_reference(data, images(1, 9)[0][0].numpy(), target, tmp_path)


def test_softmax_over_the_last_dim(tmp_path):
    torch.manual_seed(2)
    model = Attention().eval()
    res = compile_model(model, [tokens(1, 0)[0][0]], tokens(16, 0), a16=True)
    assert {"ptec::softmax_a16.out", "ptec::quantized_linear_a16.out"} <= set(res.lowered.operators)
    a16, _ = errors(model, res, tokens(16, 0)[:8], tmp_path)
    i8, _ = errors(model, compile_model(model, [tokens(1, 0)[0][0]], tokens(16, 0)), tokens(16, 0)[:8], tmp_path)
    print(f"worst |ptec - float|: a16 {a16:.5f}, int8 {i8:.5f}")
    assert a16 < 0.5 * i8, (a16, i8)
    board_matches_reference(res.data, tokens(1, 4)[0][0].numpy(), "cortex-m55", tmp_path)


def test_chosen_layers_only(convnet, tmp_path):
    res = compile_model(convnet, [images(1, 0)[0][0]], images(16, 0), a16=["c2", "fc"])
    ops = set(res.lowered.operators)
    assert {"ptec::quantized_conv2d_a16.out", "ptec::quantized_linear_a16.out"} <= ops, ops
    # the layers not named stay int8: c1, dw, pw, gate, the add, the mul
    assert {"cortex_m::quantized_conv2d.out", "cortex_m::quantized_depthwise_conv2d.out",
            "cortex_m::quantized_add.out", "cortex_m::quantized_mul.out"} <= ops, ops
    assert "ptec::quantized_depthwise_conv2d_a16.out" not in ops and "ptec::quantized_add_a16.out" not in ops
    marked = sorted(n.name for n in res.graph.nodes if n.attrs.get("a16"))
    assert [res.graph.node(m).attrs["source"].split(" ")[0] for m in marked] == ["c2", "fc"], marked
    errors(convnet, res, images(3, 7), tmp_path)
    board_matches_reference(res.data, images(1, 9)[0][0].numpy(), "cortex-m33", tmp_path)


def test_an_unknown_layer_is_named():
    torch.manual_seed(5)
    with pytest.raises(CompileError, match=r"^16-bit activations for classifier: the model has no such layer "
                                           r"\(its layers: c1, dw, pw, add, gate, mul, c2, max_pool2d, avg_pool2d, flatten, fc\)$") as e:
        compile_model(ConvNet().eval(), [images(1, 0)[0][0]], images(4, 0), a16=["classifier"])
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("args,message", [
    (["--a16", "--target", "ethos-u55-128"], "--a16 is for the Cortex-M kernels"),
    (["--a16", "--a16-layers", "fc"], "give one of them"),
    (["--a16-layers", ","], "--a16-layers takes module paths"),
    (["--a16-layers", "classifier"], "16-bit activations for classifier: the model has no such layer"),
])
def test_cli_refusals_are_one_line(tmp_path, args, message):
    out = tmp_path / "m.pte"
    r = subprocess.run([sys.executable, "-m", "ptec", "compile", "mobilenet_v1_025", "-o", str(out)] + args,
                       capture_output=True, text=True, cwd=tmp_path,
                       env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python")))
    assert r.returncode == 2, r.stderr
    assert message in r.stderr and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr
    assert not out.exists()
