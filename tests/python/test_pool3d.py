"""3-D pools, pads and norms (issue 15): captured as 2-D nodes ptec
already lowers (python/ptec/pool3d.py; BatchNorm3d folds or becomes a 1x1
depthwise conv in quantize.prepare). Each decomposition equals the PyTorch
layer in float over many argument combinations; a small video model with
every layer compiles to int8 with no fp32 fallback, runs on the host
byte-identical to the numpy int8 reference and within a few output steps of
float, and byte-identical to the reference on the emulated M55 and M33."""

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from model_checks import board_matches_reference, host_steps_from_float
from test_conv3d import clips          # short video clips: a moving blob over noise
from ptec.capture import capture
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.pte import parse_program
from ptec.ir import evaluate
from ptec.quantize import prepare

# ops the stand-ins may use: all have an int8 lowering
TWO_D = {"input", "reshape", "max_pool2d", "avg_pool2d", "slice", "maximum", "cat", "pad", "constant", "mul",
         "batch_norm", "conv2d", "clamp", "add"}


def same_as_torch(model, x, exact):
    g = capture(model, [x])
    assert {n.op for n in g.nodes} <= TWO_D, g.summary()
    got = evaluate(g, [x])[0]
    with torch.no_grad():
        want = model(x)
    assert got.shape == want.shape, (got.shape, want.shape)
    if exact:           # a max or a pad only moves values
        assert torch.equal(got, want), (got - want).abs().max()
    else:
        assert torch.allclose(got, want, atol=1e-5), (got - want).abs().max()
    return g


@pytest.mark.parametrize("kw,shape", [
    (dict(kernel_size=2), (1, 2, 4, 4, 4)),
    (dict(kernel_size=3, stride=2, padding=1), (2, 3, 7, 6, 5)),
    (dict(kernel_size=(3, 2, 2), stride=(1, 2, 2)), (1, 2, 5, 6, 6)),
    (dict(kernel_size=(2, 3, 3), stride=(2, 1, 2), padding=(1, 1, 0), ceil_mode=True), (1, 2, 5, 7, 6)),
    (dict(kernel_size=3, stride=2, ceil_mode=True), (1, 1, 6, 6, 6)),
    (dict(kernel_size=(3, 2, 2), dilation=(2, 1, 1), padding=(1, 0, 0)), (1, 2, 7, 4, 4)),
    (dict(kernel_size=(2, 2, 2), stride=(3, 1, 1), dilation=(3, 1, 1), ceil_mode=True), (1, 2, 8, 3, 3)),
    (dict(kernel_size=(2, 3, 3), stride=1, dilation=(1, 2, 2)), (1, 2, 3, 7, 7)),
    (dict(kernel_size=(1, 2, 2)), (1, 3, 3, 4, 4)),
    (dict(kernel_size=(3, 1, 1), stride=(2, 1, 1), padding=(1, 0, 0)), (1, 3, 6, 2, 3)),
    (dict(kernel_size=2), (2, 4, 4, 4)),           # unbatched [C, D, H, W]
])
def test_max_pool3d_equals_torch(kw, shape):
    torch.manual_seed(0)
    same_as_torch(nn.Sequential(nn.MaxPool3d(**kw)), torch.randn(shape), exact=True)


@pytest.mark.parametrize("kw,shape", [
    (dict(kernel_size=2), (1, 2, 4, 4, 4)),
    (dict(kernel_size=3, stride=2, padding=1), (2, 3, 7, 6, 5)),
    (dict(kernel_size=3, stride=2, padding=1, count_include_pad=False), (1, 2, 7, 6, 5)),
    (dict(kernel_size=(2, 3, 3), stride=(2, 1, 2), padding=(1, 1, 0), ceil_mode=True), (1, 2, 5, 7, 6)),
    (dict(kernel_size=(2, 3, 3), stride=(2, 2, 2), padding=(1, 1, 1), ceil_mode=True,
          count_include_pad=False), (1, 2, 6, 6, 7)),
    (dict(kernel_size=3, stride=2, ceil_mode=True), (1, 1, 6, 6, 6)),
    (dict(kernel_size=(3, 4, 5)), (1, 2, 6, 4, 5)),                 # whole planes: one pool
    (dict(kernel_size=(2, 4, 4), stride=(1, 1, 1), padding=(1, 0, 0)), (1, 2, 3, 4, 4)),
    (dict(kernel_size=2, divisor_override=3), (1, 2, 4, 4, 4)),
    (dict(kernel_size=3, stride=2, padding=1, divisor_override=5), (1, 2, 5, 5, 5)),
    (dict(kernel_size=2, ceil_mode=True, divisor_override=3), (1, 2, 3, 5, 4)),
    (dict(kernel_size=(3, 2, 3), stride=2, padding=(1, 0, 1), ceil_mode=True, divisor_override=7), (2, 6, 5, 6)),
    (dict(kernel_size=(1, 2, 2)), (1, 3, 3, 4, 4)),
    (dict(kernel_size=(3, 1, 1), stride=(2, 1, 1), padding=(1, 0, 0), count_include_pad=False), (1, 3, 6, 2, 3)),
    (dict(kernel_size=2, stride=1), (2, 3, 3, 3)),                 # unbatched
])
def test_avg_pool3d_equals_torch(kw, shape):
    torch.manual_seed(1)
    same_as_torch(nn.Sequential(nn.AvgPool3d(**kw)), torch.randn(shape), exact=False)


def test_whole_planes_is_one_pool():
    g = capture(nn.Sequential(nn.AdaptiveAvgPool3d(1)), [torch.randn(1, 2, 4, 3, 5)])
    assert [n.op for n in g.nodes].count("avg_pool2d") == 1, g.summary()


@pytest.mark.parametrize("cls", [nn.AdaptiveAvgPool3d, nn.AdaptiveMaxPool3d])
@pytest.mark.parametrize("out,shape", [(1, (1, 2, 4, 4, 4)), ((2, 1, 3), (2, 3, 4, 5, 6)),
                                       ((None, 2, 2), (1, 2, 3, 4, 6)), ((1, 1, 1), (2, 4, 4, 4))])
def test_adaptive_pool3d_equals_torch(cls, out, shape):
    torch.manual_seed(2)
    same_as_torch(nn.Sequential(cls(out)), torch.randn(shape), exact=cls is nn.AdaptiveMaxPool3d)


@pytest.mark.parametrize("cls", [nn.AdaptiveAvgPool3d, nn.AdaptiveMaxPool3d])
@pytest.mark.parametrize("out,shape", [((2, 2, 2), (1, 2, 3, 4, 4)), ((2, 3, 3), (1, 2, 5, 4, 4)),
                                       ((3, None, 2), (2, 2, 5, 5, 4)), (3, (2, 7, 7, 7)),
                                       ((4, 3, 5), (1, 1, 6, 7, 9)), ((1, 3, 1), (1, 2, 3, 5, 2))])
def test_adaptive_pool3d_that_does_not_divide(cls, out, shape):
    # torch's windows are boxes of different sizes: one slice and pool per window and dim
    torch.manual_seed(7)
    g = same_as_torch(nn.Sequential(cls(out)), torch.randn(shape), exact=cls is nn.AdaptiveMaxPool3d)
    assert "slice" in {n.op for n in g.nodes}, g.summary()


class Functional(nn.Module):
    def forward(self, x):
        a = F.max_pool3d(x, (2, 2, 2), stride=(1, 2, 2), padding=(1, 0, 0), ceil_mode=True)
        b = F.avg_pool3d(a, 2, 1, 0, False, True, None)
        c = F.adaptive_max_pool3d(x, (2, 2, 2)) + F.adaptive_avg_pool3d(x, 2)
        return torch.cat([torch.flatten(b, 1), torch.flatten(c, 1),
                          torch.flatten(F.avg_pool3d(x, kernel_size=3, stride=2, count_include_pad=False,
                                                     padding=1), 1)], 1)


def test_functional_forms_equal_torch():
    same_as_torch(Functional().eval(), torch.randn(1, 2, 4, 4, 4), exact=False)


@pytest.mark.parametrize("layer", [
    nn.ReplicationPad3d(1), nn.ReplicationPad3d((1, 0, 2, 1, 0, 2)), nn.ReplicationPad3d((0, 0, 0, 0, 1, 2)),
    nn.ReflectionPad3d(1), nn.ReflectionPad3d((2, 0, 1, 1, 1, 0)), nn.ReflectionPad3d((1, 2, 0, 0, 0, 0)),
    nn.ConstantPad3d(1, 0.5), nn.ConstantPad3d((1, 0, 2, 1, 0, 2), -1.0),
])
@pytest.mark.parametrize("shape", [(2, 3, 3, 4, 5), (1, 1, 4, 3, 3), (3, 3, 4, 5)])
def test_pad3d_equals_torch(layer, shape):
    torch.manual_seed(3)
    same_as_torch(nn.Sequential(layer), torch.randn(shape), exact=True)


class FPad(nn.Module):
    def __init__(self, pads, mode):
        super().__init__()
        self.pads, self.mode = pads, mode

    def forward(self, x):
        return F.pad(x, self.pads, mode=self.mode) if self.mode != "constant" else F.pad(x, self.pads, value=0.25)


@pytest.mark.parametrize("mode,pads,shape", [
    ("constant", (1, 1), (1, 2, 3, 4, 4)), ("constant", (1, 0, 0, 2), (1, 2, 3, 4, 4)),
    ("constant", (1, 2, 0, 1, 2, 1), (1, 2, 3, 4, 4)), ("reflect", (1, 2, 0, 1, 2, 1), (1, 2, 3, 4, 4)),
    ("replicate", (1, 2, 0, 1, 2, 1), (1, 2, 3, 4, 4)), ("replicate", (0, 0, 0, 0, 1, 0), (1, 2, 3, 4, 4)),
    ("reflect", (1, 2, 0, 1, 2, 1), (2, 3, 4, 4)), ("replicate", (0, 1, 1, 0, 2, 2), (2, 3, 4, 4)),
])
def test_functional_pad_on_5d_equals_torch(mode, pads, shape):
    # torch pads a 5-D input by reflection or replication in all three dims only,
    # and a 4-D one in three dims as an unbatched volume
    torch.manual_seed(4)
    g = same_as_torch(FPad(pads, mode).eval(), torch.randn(shape), exact=True)
    assert all(len(n.shape) <= 4 for n in g.nodes if n.op == "pad"), g.summary()


def norms():
    torch.manual_seed(5)
    bn = nn.BatchNorm3d(3).eval()
    inst = nn.InstanceNorm3d(3, affine=True, track_running_stats=True).eval()
    for m in (bn, inst):
        with torch.no_grad():
            m.running_mean.normal_(0.0, 0.5)
            m.running_var.uniform_(0.3, 2.0)
            m.weight.normal_(1.0, 0.3)
            m.bias.normal_(0.0, 0.3)
    return bn, inst


@pytest.mark.parametrize("which", [0, 1])
@pytest.mark.parametrize("after_conv", [False, True])
def test_batch_norm3d_equals_torch(which, after_conv):
    layer = norms()[which]
    model = nn.Sequential(nn.Conv3d(2, 3, 3, padding=1), layer).eval() if after_conv else nn.Sequential(layer)
    x = torch.randn(2, 2 if after_conv else 3, 3, 4, 5)
    g = prepare(same_as_torch(model, x, exact=False))
    ops = [n.op for n in g.nodes]
    assert "batch_norm" not in ops, g.summary()
    # folded into the Conv3d stand-in's per-depth convs, else one depthwise 1x1 conv
    assert ops.count("conv2d") == (3 if after_conv else 1), g.summary()
    with torch.no_grad():
        assert torch.allclose(evaluate(g, [x])[0], model(x), atol=1e-5)


@pytest.mark.parametrize("running", [False, True])
def test_instance_norm3d_unbatched_equals_torch(running):
    # [C, D, H, W]: the channels are dim 0, not the batch-norm's dim 1
    layer = nn.InstanceNorm3d(3, affine=True, track_running_stats=running).eval()
    if running:
        layer = norms()[1]
    x = torch.randn(3, 4, 5, 6)
    g = capture(nn.Sequential(layer), [x])
    with torch.no_grad():
        assert torch.allclose(evaluate(prepare(g), [x])[0], layer(x), atol=1e-5)


def test_pair_returned_whole_is_the_two_outputs():
    """return_indices=True returned whole: a tuple while tracing
    (capture_tracer), so the program's outputs are the values and indices."""
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.pool = nn.AdaptiveMaxPool3d(1, return_indices=True)

        def forward(self, x):
            return self.pool(x)
    g = torch.Generator().manual_seed(2)
    calibration = [((torch.randperm(16, generator=g).float() - 8).reshape(1, 2, 2, 2, 2) * 0.25,) for _ in range(4)]
    res = compile_model(Net().eval(), [calibration[0][0]], calibration)
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    for (x,) in calibration:
        with torch.no_grad():
            values, indices = Net().eval()(x)
        got = run_program(prog, [x.numpy()])
        assert len(got) == 2 and np.array_equal(got[1], indices.numpy())
        assert np.abs(np.asarray(got[0], np.float64) - values.numpy()).max() <= 0.5 * step + 1e-6


class VideoNet(nn.Module):
    """Every new layer between int8 convolutions."""
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv3d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm3d(8)                       # folds into conv1's planes
        self.pool1 = nn.MaxPool3d((1, 2, 2))
        self.pad = nn.ReplicationPad3d(1)
        self.conv2 = nn.Conv3d(8, 8, 3)
        self.bn2 = nn.BatchNorm3d(8)                       # folds into the average pool's convs
        self.pool2 = nn.AvgPool3d(3, stride=(1, 2, 2), padding=1, ceil_mode=True, count_include_pad=False)
        self.reflect = nn.ReflectionPad3d((1, 1, 0, 1, 1, 0))
        self.zero = nn.ConstantPad3d((0, 1, 1, 0, 0, 1), 0.0)
        self.dilated = nn.MaxPool3d((2, 2, 2), stride=1, dilation=(2, 1, 1))
        self.norm = nn.InstanceNorm3d(8, affine=True, track_running_stats=True)   # alone: a depthwise conv
        self.gmax = nn.AdaptiveMaxPool3d((3, 2, 4))             # windows of two sizes in D, W
        self.gavg = nn.AdaptiveAvgPool3d((1, 2, 2))
        self.fc = nn.Linear(8 * 24 + 8 * 4, 5)

    def forward(self, x):                                  # x [1, 3, 4, 8, 8]
        y = self.pool1(torch.relu(self.bn1(self.conv1(x))))             # [1, 8, 4, 4, 4]
        y = self.pad(y)                                                  # [1, 8, 6, 6, 6]
        y = self.bn2(F.avg_pool3d(torch.relu(self.conv2(y)), 3, 1, 1))     # [1, 8, 4, 4, 4]
        y = self.pool2(y)                                                # [1, 8, 4, 3, 3]
        y = self.zero(self.reflect(y))                                   # [1, 8, 6, 5, 6]
        y = self.norm(self.dilated(y))                                   # [1, 8, 4, 4, 5]
        a = self.gmax(F.pad(y, (0, 1, 0, 0, 0, 0), mode="replicate"))     # [1, 8, 4, 4, 6] -> [1, 8, 3, 2, 4]
        b = self.gavg(F.avg_pool3d(y, 2, 2, ceil_mode=True, divisor_override=6))   # [1, 8, 2, 2, 3] -> [1, 8, 1, 2, 2]
        return self.fc(torch.cat([torch.flatten(a, 1), torch.flatten(b, 1)], 1))


def video_net():
    torch.manual_seed(6)
    model = VideoNet().eval()
    with torch.no_grad():
        for bn in (model.bn1, model.bn2, model.norm):
            bn.running_mean.normal_(0.0, 0.1)
            bn.running_var.uniform_(0.5, 1.5)
            bn.weight.normal_(1.0, 0.2)
            bn.bias.normal_(0.0, 0.1)
    return model


@pytest.fixture(scope="module")
def compiled():
    model = video_net()
    return model, compile_model(model, [clips(1, 0)[0][0]], clips(48, 0))


def test_float_model_equals_torch():
    model = video_net()
    x = clips(1, 3)[0][0]
    g = capture(model, [x])
    assert not [n for n in g.nodes if n.op == "unsupported"], g.summary()
    with torch.no_grad():
        assert torch.allclose(evaluate(prepare(g), [x])[0], model(x), atol=1e-4)


def test_every_layer_is_int8(compiled):
    _, res = compiled
    assert not res.lowered.fallbacks, res.lowered.fallbacks
    placed = {p.source: p.backend for p in res.lowered.placements if p.backend != "none"}
    assert set(placed.values()) == {"cortex_m"}, placed
    for op in ("cortex_m::quantized_max_pool2d.out", "cortex_m::quantized_avg_pool2d.out", "cortex_m::pad.out",
               "aten::replication_pad2d.out", "aten::reflection_pad2d.out", "cortex_m::maximum.out"):
        assert op in res.lowered.operators, (op, res.lowered.operators)
    # the joins and depth maxima inside the layers move bytes on their inputs' grid (no requantizing)
    g = res.graph
    inner = [n for n in g.nodes if n.op in ("cat", "maximum") and n.name != "cat"]
    assert len(inner) > 10 and all(g.node(i).qparams == n.qparams for n in inner for i in n.inputs), \
        [(n.name, n.qparams, [g.node(i).qparams for i in n.inputs]) for n in inner]


def test_host_equals_reference_and_float(compiled, tmp_path):
    model, res = compiled
    worst = host_steps_from_float(model, res, clips(12, 7), tmp_path)
    assert worst <= 3.0, worst      # measured 1.82


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
def test_boards_equal_reference(compiled, tmp_path, target):
    model, _ = compiled
    board_matches_reference(compile_model(model, [clips(1, 0)[0][0]], clips(48, 0), target=target).data,
                            clips(1, 9)[0][0].numpy(), target, tmp_path)


@pytest.mark.parametrize("kw,op", [(dict(a16=True), "ptec::quantized_avg_pool2d_a16.out"),
                                   (dict(w4=True), "ptec::quantized_conv2d_w4.out")])
def test_a16_and_w4_run_on_host(kw, op, tmp_path):
    # the pools take their a16 kernels; under --w4 the grouped mean convs keep 8-bit weights
    model = video_net()
    res = compile_model(model, [clips(1, 0)[0][0]], clips(48, 0), **kw)
    assert not res.lowered.fallbacks, res.lowered.fallbacks
    assert op in res.lowered.operators, res.lowered.operators
    worst = host_steps_from_float(model, res, clips(6, 7), tmp_path)
    if "a16" in kw:
        assert worst <= 3.0, worst      # measured 1.17 (int8 output steps)


def test_even_average_is_one_conv_per_output_depth():
    # every window holds its kd * kh * kw values: one grouped conv each, no avg_pool2d
    g = capture(nn.Sequential(nn.AvgPool3d(3, stride=2, padding=1)), [torch.randn(1, 4, 7, 6, 6)])
    convs = [n for n in g.nodes if n.op == "conv2d"]
    assert len(convs) == 4 and "avg_pool2d" not in {n.op for n in g.nodes}, g.summary()
    # the edge depths read 2 input depths (the third is padding), the others 3
    assert [c.attrs["weight"].shape[1] for c in convs] == [2, 3, 3, 2]
    assert all(c.attrs["groups"] == 4 for c in convs)


def test_norms_fold_or_become_one_depthwise_conv(compiled):
    _, res = compiled
    ops = {n.op for n in res.graph.nodes}
    assert "batch_norm" not in ops, ops
    lone = [n for n in res.graph.nodes if n.name == "norm_affine"]
    assert len(lone) == 1 and lone[0].attrs["groups"] == 8, res.graph.summary()
    assert not [n for n in res.graph.nodes if n.name.startswith(("bn1", "bn2"))], res.graph.summary()


def test_dilation_over_planes_runs_as_the_2d_pool_does(tmp_path):
    # dilation over H, W: the dilated 2-D pool's int8 form (maxima of strided slices), on [N, C*D, H, W]
    torch.manual_seed(8)
    model = nn.Sequential(nn.Conv3d(3, 4, 1), nn.MaxPool3d((2, 2, 2), stride=1, dilation=(2, 2, 1))).eval()
    res = compile_model(model, [clips(1, 0)[0][0]], clips(24, 0))
    assert not res.lowered.fallbacks, res.lowered.fallbacks
    assert "cortex_m::maximum.out" in res.lowered.operators
    worst = host_steps_from_float(model, res, clips(4, 7), tmp_path)
    assert worst <= 2.0, worst      # measured 0.94


@pytest.mark.parametrize("layer", [nn.MaxPool3d(2), nn.ReplicationPad3d(1)])
@pytest.mark.parametrize("kw", [{}, dict(a16=True)])
def test_activation_after_a_3d_layer_runs_in_int8(layer, kw, tmp_path):
    # a clamp of a 5-D value: the 1x1 max pool of its [1, numel, 1, 1] view
    torch.manual_seed(9)
    model = nn.Sequential(nn.Conv3d(3, 4, 1), layer, nn.ReLU6()).eval()
    res = compile_model(model, [clips(1, 0)[0][0]], clips(16, 0), **kw)
    assert not res.lowered.fallbacks, res.lowered.fallbacks
    worst = host_steps_from_float(model, res, clips(3, 7), tmp_path)
    assert worst <= 2.0, worst      # measured 1.00 to 1.23
