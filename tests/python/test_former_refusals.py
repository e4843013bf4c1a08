"""Layers that docs/refused-operators.md listed until they ran (issue 15:
the refusal list shrinks to what the hardware truly cannot do):
- nn.Hardshrink, nn.Softshrink, nn.Softsign, nn.Tanhshrink, nn.Mish,
  nn.SELU, nn.CELU, nn.LogSigmoid, nn.RReLU (eval: a leaky ReLU) and their
  F. forms: functions of one int8 tensor, so a 256-entry LUT each
  (cortex_m::quantized_activation), like SiLU;
- nn.ConvTranspose1d: the 2-D transposed convolution over a unit height,
  as nn.Conv1d is the 2-D convolution;
- nn.InstanceNorm1d/2d with track_running_stats: in eval it normalizes
  with the running statistics, so it is a batch-norm, folded into the layer
  before it.
Each runs byte-identical to the numpy reference on the host and both
emulated boards and stays within a few output steps of PyTorch float."""

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from model_checks import board_matches_reference, host_steps_from_float
from ptec.compiler import compile_model


class Former(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(4, 8, 3, padding=1)
        self.shrink = nn.Hardshrink(0.3)
        self.up = nn.ConvTranspose1d(8, 6, 4, stride=2, padding=1)
        self.norm = nn.InstanceNorm1d(6, affine=True, track_running_stats=True)
        self.sign = nn.Softsign()
        self.tanhshrink = nn.Tanhshrink()
        self.soft = nn.Softshrink(0.2)
        self.fc = nn.Linear(6 * 32, 5)

    def forward(self, x):                         # x [1, 4, 16]
        y = self.norm(self.up(self.shrink(self.conv(x))))
        y = self.tanhshrink(y) + self.sign(y) + self.soft(y) + F.hardshrink(y, 0.1)
        return self.fc(torch.flatten(y, 1))


def inputs(n, seed):
    g = torch.Generator().manual_seed(seed)
    t = torch.arange(16.0)
    return [((torch.sin(t * (0.3 + 0.1 * i)) + 0.5 * torch.randn(4, 16, generator=g))[None],) for i in range(n)]


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    m = Former().eval()
    with torch.no_grad():
        m.norm.running_mean.normal_(0.0, 0.2)
        m.norm.running_var.uniform_(0.5, 2.0)
    return m


@pytest.fixture(scope="module")
def compiled(model):
    return compile_model(model, [inputs(1, 0)[0][0]], inputs(16, 0))


def test_every_layer_runs_in_int8(compiled):
    g = compiled.graph
    ops = {n.op for n in g.nodes}
    assert {"hardshrink", "softshrink", "softsign", "tanhshrink", "conv_transpose2d"} <= ops, ops
    assert "batch_norm" not in ops and "group_norm" not in ops, ops          # the norm folded
    assert not compiled.lowered.fallbacks, compiled.lowered.fallbacks
    assert "cortex_m::quantized_transpose_conv2d.out" in compiled.lowered.operators
    assert not [o for o in compiled.lowered.operators if o.startswith("aten::") and "slice" not in o]


@pytest.mark.parametrize("op,fn,attrs", [("hardshrink", lambda v: F.hardshrink(v, 0.3), {"lambd": 0.3}),
                                         ("softshrink", lambda v: F.softshrink(v, 0.2), {"lambd": 0.2}),
                                         ("softsign", F.softsign, {}), ("tanhshrink", F.tanhshrink, {}),
                                         ("mish", F.mish, {}), ("selu", F.selu, {}),
                                         ("celu", lambda v: F.celu(v, 0.7), {"alpha": 0.7}),
                                         ("logsigmoid", F.logsigmoid, {})])
def test_float_functions_are_torchs(op, fn, attrs):
    from ptec.ir import UNARY
    v = torch.linspace(-4, 4, 161, dtype=torch.float64)
    got = UNARY[op](v, attrs)
    assert torch.allclose(got, fn(v), atol=1e-12), op


def test_host_equals_reference_and_float(model, compiled, tmp_path):
    # calibration inputs (other draws leave the calibrated ranges and clip)
    worst = host_steps_from_float(model, compiled, inputs(16, 0)[:8], tmp_path)
    assert worst <= 10.0, worst     # measured 8.0: four LUTs summed, each off by up to half its own step


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
def test_boards_equal_reference(model, tmp_path, target):
    data = compile_model(model, [inputs(1, 0)[0][0]], inputs(16, 0), target=target).data
    board_matches_reference(data, inputs(1, 5)[0][0].numpy(), target, tmp_path)


class MoreUnary(nn.Module):
    """Mish, SELU, CELU, LogSigmoid, RReLU (eval) and a negation, each a LUT between linears."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 32)
        self.fc3 = nn.Linear(32, 8)
        self.mish, self.selu, self.celu = nn.Mish(), nn.SELU(), nn.CELU(0.7)
        self.logsig, self.rrelu = nn.LogSigmoid(), nn.RReLU(0.1, 0.3)

    def forward(self, x):
        y = self.mish(self.fc1(x))
        y = self.selu(self.fc2(y)) + self.celu(y) + self.logsig(y) + self.rrelu(y) + F.mish(-y)
        return self.fc3(y)


def unary_inputs(n, seed):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(1, 16, generator=g) * 2,) for _ in range(n)]


@pytest.mark.parametrize("target", ["host", "cortex-m55", "cortex-m33"])
def test_more_unary_functions_run_int8(target, tmp_path):
    torch.manual_seed(2)
    model = MoreUnary().eval()
    res = compile_model(model, [unary_inputs(1, 0)[0][0]], unary_inputs(16, 0),
                        target="cortex-m55" if target == "host" else target)
    ops = {n.op for n in res.graph.nodes}
    assert {"mish", "selu", "celu", "logsigmoid", "leaky_relu", "neg"} <= ops, ops
    assert not res.lowered.fallbacks, res.lowered.fallbacks
    if target == "host":
        worst = host_steps_from_float(model, res, unary_inputs(16, 0)[:8], tmp_path)
        assert worst <= 6.0, worst
    else:
        board_matches_reference(res.data, unary_inputs(1, 5)[0][0].numpy(), target, tmp_path)


class LogProbabilities(nn.Module):
    """A classifier ending in log-probabilities, as nn.LogSoftmax and as
    F.log_softmax over the last dim of a 3-D tensor."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 10)
        self.log_softmax = nn.LogSoftmax(dim=1)

    def forward(self, x):
        y = self.fc(x)
        return self.log_softmax(y) + F.log_softmax(y.reshape(1, 2, 5), dim=-1).reshape(1, 10)


@pytest.mark.parametrize("target", ["host", "cortex-m55", "cortex-m33"])
def test_log_softmax_runs_in_fp32(target, tmp_path):
    """nn.LogSoftmax has no int8 kernel (an int8 probability's log loses
    everything below 1/256): fp32 aten::_log_softmax.out between a
    dequantize and a quantize, as upstream's portable library runs it."""
    torch.manual_seed(4)
    model = LogProbabilities().eval()
    res = compile_model(model, [unary_inputs(1, 0)[0][0]], unary_inputs(16, 0),
                        target="cortex-m55" if target == "host" else target)
    assert "aten::_log_softmax.out" in res.lowered.operators
    # the two log-softmaxes, and the reshape after the second (its input is fp32)
    assert sum("_log_softmax" in f for f in res.lowered.fallbacks) == 2, res.lowered.fallbacks
    if target == "host":
        worst = host_steps_from_float(model, res, unary_inputs(16, 0)[:8], tmp_path)
        assert worst <= 3.0, worst
    else:
        board_matches_reference(res.data, unary_inputs(1, 5)[0][0].numpy(), target, tmp_path)


class SoftminHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 10)
        self.softmin = nn.Softmin(dim=1)

    def forward(self, x):
        return self.softmin(self.fc(x))


@pytest.mark.parametrize("target", ["host", "cortex-m55"])
def test_softmin_is_the_softmax_of_a_negation(target, tmp_path):
    torch.manual_seed(6)
    model = SoftminHead().eval()
    res = compile_model(model, [unary_inputs(1, 0)[0][0]], unary_inputs(16, 0),
                        target="cortex-m55" if target == "host" else target)
    assert [n.op for n in res.graph.nodes if n.op in ("neg", "softmax")] == ["neg", "softmax"]
    assert not res.lowered.fallbacks, res.lowered.fallbacks
    if target == "host":
        worst = host_steps_from_float(model, res, unary_inputs(16, 0)[:8], tmp_path)
        assert worst <= 3.0, worst
    else:
        board_matches_reference(res.data, unary_inputs(1, 5)[0][0].numpy(), target, tmp_path)
