"""Issue 15's open precision losses around sign and where, against torch
float (the oracle: the same model called by PyTorch), in the program
output's quantization steps, over several seeds, calibrated on one set of
inputs and measured on fresh ones:

* the sign of a selection or view of a float program input (`x[:, 0] -
  x[:, 1]`, `x[..., :3]`, `x[:, 2:].sign()`): its comparisons read the
  float values (capture_sign.exact_operands), not int8 codes;
* the sign of the difference of two computed values closer than their own
  int8 rounding (`torch.sign(self.fc1(x) - self.fc2(x))`): the short
  chains computing them run once more in fp32 for the comparison;
* a float buffer state updated through torch.where in a loop
  (`self.s = torch.where(x > 0, self.s * 0.95 + 0.05 * x, self.s)`, a state
  in both branches): the loop runs in fp32 as the where-free ones do
  (capture_state_precision), streamed over 32 executes."""

import numpy as np
import pytest
import torch
import torch.nn as nn

from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.pte import parse_program
from model_checks import stream_worst_steps, worst_steps_compiled


def _worst(model, calib, fresh):
    """Worst |ptec - torch| over the fresh feeds, in output steps."""
    return worst_steps_compiled(model, calib, fresh)


# -- the sign of a selection of a float input --------------------------------------

class SliceDifference(nn.Module):
    def forward(self, x):
        return torch.sign(x[:, 0] - x[:, 1]) + 0.25 * x[:, 2]


class LeadingSlice(nn.Module):
    def forward(self, x):
        return torch.sign(x[..., :3]) * x[..., 3:]


class TailSliceMethod(nn.Module):
    def forward(self, x):
        return x[:, 3:].sgn() + 0.1 * x[:, :3]


class ViewSign(nn.Module):
    """A view and a flip of the input: moves too."""

    def forward(self, x):
        return torch.sign(x.flip(1).t()).t() * 0.5 + x


def _near_zero(n, seed):
    """[4, 6] inputs in [-1, 1] (the calibration's range holds the fresh
    ones' outputs) whose column 1 is within 1e-3 of column 0 and whose
    other columns are within 1e-3 of 0 half the time."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(n):
        x = 2 * torch.rand(4, 6, generator=g) - 1
        x = x * torch.where(torch.rand(4, 6, generator=g) < 0.5, 1e-3, 1.0)
        x[:, 1] = x[:, 0] + 1e-3 * torch.randn(4, generator=g)
        out.append((x,))
    return out


# measured before -> after, seeds 0..2 (64 calibration inputs, 8 fresh):
# SliceDifference 103.0 to 104.5 -> 0.90 to 1.39; LeadingSlice 123.3 to 127.8 -> 0.62 to 1.17;
# TailSliceMethod 116.3 to 116.7 -> 0.93 to 0.96; ViewSign 43.1 to 43.5 -> 0.92 to 1.09
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("cls", [SliceDifference, LeadingSlice, TailSliceMethod, ViewSign])
def test_the_sign_of_a_slice_of_an_input(cls, seed):
    feeds = _near_zero(72, seed)
    worst, res = _worst(cls().eval(), feeds[:64], feeds[64:])
    assert worst <= 1.5, f"{worst:.2f} output steps from torch"
    compares = [n for n in res.graph.nodes if n.op == "compare"]
    assert compares and all(res.graph.node(i).attrs.get("fp32") for n in compares for i in n.inputs
                            if res.graph.node(i).op != "input")


# -- the sign of two computed values closer than their rounding ---------------------

class NearLayers(nn.Module):
    """Two linear layers whose outputs are about 1e-3 apart."""

    def __init__(self, features=8, seed=0):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.fc1 = nn.Linear(features, features)
        self.fc2 = nn.Linear(features, features)
        with torch.no_grad():
            self.fc1.weight.copy_(torch.randn(features, features, generator=g) / features ** 0.5)
            self.fc1.bias.copy_(0.1 * torch.randn(features, generator=g))
            self.fc2.weight.copy_(self.fc1.weight + 1e-3 * torch.randn(features, features, generator=g))
            self.fc2.bias.copy_(self.fc1.bias)

    def forward(self, x):
        return torch.sign(self.fc1(x) - self.fc2(x)) + 0.25 * x


class NearChains(NearLayers):
    """A relu and a scaling after each layer, the difference spelled as a method."""

    def forward(self, x):
        return (torch.relu(self.fc1(x)) * 2.0 - torch.relu(self.fc2(x)) * 2.0).sign() * x


def _fresh(n, seed, features=8):
    g = torch.Generator().manual_seed(100 + seed)
    return [(2 * torch.rand(4, features, generator=g) - 1,) for _ in range(n)]


# measured before -> after, seeds 0..2 (64 calibration inputs, 8 fresh):
# NearLayers 204.1 -> 0.90 to 0.97; NearChains 246.1 to 252.5 -> 0.49 to 0.75
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("cls", [NearLayers, NearChains])
def test_the_sign_of_two_near_layer_outputs(cls, seed):
    feeds = _fresh(72, seed)
    worst, res = _worst(cls(seed=seed).eval(), feeds[:64], feeds[64:])
    assert worst <= 1.5, f"{worst:.2f} output steps from torch"
    assert not any(n.op == "linear" and not n.attrs.get("fp32") for n in res.graph.nodes)   # the int8 pair dropped


class BigLayers(nn.Module):
    """Layers past the fp32 copy's budget (capture_sign.MAX_WEIGHTS): compared as int8, as before."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 64)
        self.fc2 = nn.Linear(64, 64)

    def forward(self, x):
        return torch.sign(self.fc1(x) - self.fc2(x)) + x


def test_layers_past_the_budget_stay_int8():
    torch.manual_seed(0)
    feeds = [(torch.randn(2, 64),) for _ in range(4)]
    res = compile_model(BigLayers().eval(), list(feeds[0]), feeds)
    assert not any(n.attrs.get("fp32") for n in res.graph.nodes)
    assert any(n.op == "compare" and n.inputs == ["fc1", "fc2"] for n in res.graph.nodes)


# -- a float state updated through torch.where ----------------------------------------

class GatedMean(nn.Module):
    """A slow running mean of the positive inputs, kept where x <= 0."""

    def __init__(self):
        super().__init__()
        self.register_buffer("s", torch.zeros(1, 8))

    def forward(self, x):
        self.s = torch.where(x > 0, self.s * 0.95 + 0.05 * x, self.s)
        return self.s * 4.0


class BothBranches(nn.Module):
    """The state in both branches of the where: a running mean of |x|."""

    def __init__(self):
        super().__init__()
        self.register_buffer("s", torch.zeros(1, 8))

    def forward(self, x):
        self.s = torch.where(x > 0, self.s * 0.95 + 0.05 * x, self.s * 0.95 - 0.05 * x)
        return self.s * 4.0 + 0.1 * x


def _stream_steps(model, calib, executes, seed):
    """Worst |ptec - torch| in output steps over a fresh stream of
    `executes` inputs (the program calibrated on a stream of `calib`
    others, the state carried from one to the next in both)."""
    g = torch.Generator().manual_seed(seed)
    cal = [2 * torch.rand(1, 8, generator=g) - 1 for _ in range(calib)]
    xs = [2 * torch.rand(1, 8, generator=g) - 1 for _ in range(executes)]
    return stream_worst_steps(model, cal, xs, checked=6)


# measured before -> after (a stream of 128 calibration executes, a fresh one of 32), seeds 0..3:
# GatedMean 2.05 to 3.29 -> 0.24 to 0.40; BothBranches 2.31 to 4.48 -> 0.95 to 1.20
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("cls", [GatedMean, BothBranches])
def test_a_state_updated_through_a_where_runs_fp32(cls, seed):
    worst, res = _stream_steps(cls().eval(), 128, 32, seed)
    state = next(n for n in res.graph.nodes if n.op == "state")
    assert state.attrs.get("fp32_state")
    where = next(n for n in res.graph.nodes if n.op == "where")
    assert where.attrs.get("fp32")
    assert worst <= 1.5, f"{worst:.2f} output steps from torch"


# -- the sign of one computed value near 0 ------------------------------------------

class SignOfLayer(nn.Module):
    """torch.sign of a linear layer's output (no bias: inputs near 0 give outputs near 0)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc = nn.Linear(8, 8, bias=False)

    def pre(self, x):
        return self.fc(x)

    def forward(self, x):
        return torch.sign(self.fc(x))


class SgnOfChain(SignOfLayer):
    """Tensor.sgn of a tanh and a scaling after the layer."""

    def pre(self, x):
        return torch.tanh(self.fc(x)) * 2.0

    def forward(self, x):
        return (torch.tanh(self.fc(x)) * 2.0).sgn()


class SignOfConv(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.c = nn.Conv2d(2, 3, 3, padding=1, bias=False)

    def pre(self, x):
        return self.c(x)

    def forward(self, x):
        return torch.sign(self.c(x))


class PositiveOfLayer(SignOfLayer):
    """(fc(x) > 0).float(): the same comparison with 0."""

    def forward(self, x):
        return (self.fc(x) > 0).float()


def _rows_near_zero(n, seed, shape):
    """Inputs in [-1, 1] whose rows are scaled by 1e-3 half the time: the
    layer's outputs there are far inside one int8 step of 0."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(n):
        x = 2 * torch.rand(*shape, generator=g) - 1
        out.append((x * torch.where(torch.rand(shape[0], *([1] * (len(shape) - 1)), generator=g) < 0.5, 1e-3, 1.0),))
    return out


# measured before -> after, seeds 0..2 (64 calibration inputs, 8 fresh), signs differing from torch's on elements
# whose value is not within 1e-6 of 0: SignOfLayer 220 to 295 of ~510 -> 0; SgnOfChain 221 to 295 -> 0;
# SignOfConv 1365 to 1696 of ~3066 -> 0; PositiveOfLayer 106 to 138 of ~510 -> 0 (255 output steps -> 0)
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("cls", [SignOfLayer, SgnOfChain, SignOfConv, PositiveOfLayer])
def test_the_sign_of_one_computed_value_near_zero(cls, seed):
    shape = (8, 2, 4, 4) if cls is SignOfConv else (8, 8)
    feeds = _rows_near_zero(72, seed, shape)
    model = cls().eval()
    res = compile_model(model, list(feeds[0]), feeds[:64])
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    compared, near = 0, 0
    for ins in feeds[64:]:
        got = np.asarray(host_runtime.run(prog, res.data, [t.numpy() for t in ins])[0])
        with torch.no_grad():
            want, pre = model(*ins).numpy(), model.pre(*ins).numpy()
        far = np.abs(pre) > 1e-6
        differ = np.sign(got) != np.sign(want)
        assert not differ[far].any(), f"{int(differ[far].sum())} signs differ"
        assert float(np.abs(got - want).max()) <= step, "more than one output step from torch"
        compared += int(far.sum())
        near += int((far & (np.abs(pre) < 1e-2)).sum())
    assert compared > 100 and near > 50, (compared, near)      # many outputs within an int8 step of 0
    assert any(n.attrs.get("fp32") for n in res.graph.nodes)


class SignOfBigLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(96, 96)

    def forward(self, x):
        return torch.sign(self.fc(x)), (self.fc(x) > 0.5).float()


def test_the_sign_of_a_layer_past_the_budget_stays_int8():
    torch.manual_seed(0)
    feeds = [(torch.randn(2, 96),) for _ in range(4)]
    res = compile_model(SignOfBigLayer().eval(), list(feeds[0]), feeds)
    assert not any(n.attrs.get("fp32") for n in res.graph.nodes)
    assert any(n.op == "elementwise" and n.attrs.get("fn") == "sign" and n.inputs == ["fc"] for n in res.graph.nodes)


# -- under int8_io, and the weight budget per program ---------------------------------

class SliceSignTimes(nn.Module):
    def forward(self, x):
        return torch.sign(x[:, :4]) * x[:, 4:8]


def test_an_int8_input_slice_sign_is_not_copied():
    """Under int8_io the input is int8 codes already: an fp32 copy of its
    slice compares the same codes (same output bytes), only the program
    grew (5,208 -> 5,592 B before the fix). The oracle: the same model with
    the copies turned off (capture_sign.MAX_STEPS = -1)."""
    from ptec import capture_sign
    torch.manual_seed(0)
    feeds = [(torch.randn(2, 8),) for _ in range(8)]
    res = compile_model(SliceSignTimes().eval(), list(feeds[0]), feeds, int8_io=True)
    assert not any(n.attrs.get("fp32") for n in res.graph.nodes)
    saved = capture_sign.MAX_STEPS
    try:
        capture_sign.MAX_STEPS = -1
        plain = compile_model(SliceSignTimes().eval(), list(feeds[0]), feeds, int8_io=True)
    finally:
        capture_sign.MAX_STEPS = saved
    assert res.data == plain.data


# measured under int8_io, seeds 0..2: NearLayers 204.1 (operands int8) -> 0.90 to 0.97 (fp32 copies);
# NearChains 246.1 to 252.5 -> 0.49 to 0.75: the copies skip each layer's rounding, so they are kept
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("cls", [NearLayers, NearChains])
def test_near_layer_outputs_under_int8_io_still_copied(cls, seed):
    feeds = _fresh(72, seed)
    model = cls(seed=seed).eval()
    res = compile_model(model, list(feeds[0]), feeds[:64], int8_io=True)
    prog = parse_program(res.data)
    out = res.graph.node(res.graph.outputs[0])
    step, zero = out.qparams[0], out.qparams[1]
    io = res.lowered.inputs[0]
    worst = 0.0
    for (x,) in feeds[64:]:
        q = np.clip(np.round(x.numpy() / io.scale) + io.zero_point, -128, 127).astype(np.int8)
        got = (host_runtime.run(prog, res.data, [q])[0].astype(np.float32) - zero) * step
        with torch.no_grad():
            want = model(x).numpy()
        worst = max(worst, float(np.abs(got - want).max()) / step)
    assert worst <= 1.5, f"{worst:.2f} output steps from torch"


class TwoSignPairs(nn.Module):
    """Two signs of near layers, 2 x 1,320 weights each: each within
    MAX_WEIGHTS alone, 5,280 together."""

    def __init__(self):
        super().__init__()
        self.a1, self.a2, self.b1, self.b2 = (nn.Linear(32, 40) for _ in range(4))

    def forward(self, x):
        return torch.sign(self.a1(x) - self.a2(x)) + torch.sign(self.b1(x) - self.b2(x))


def test_the_weight_budget_is_the_programs():
    """MAX_WEIGHTS is shared by a program's signs, first come first served:
    the first pair is copied in fp32, the second compared as int8 (before
    the fix both were copied: 5,120 fp32 weights)."""
    from ptec.capture_sign import MAX_WEIGHTS
    torch.manual_seed(0)
    feeds = [(torch.randn(2, 32),) for _ in range(4)]
    res = compile_model(TwoSignPairs().eval(), list(feeds[0]), feeds)
    g = res.graph
    copied = sum(int(np.size(n.attrs["weight"])) for n in g.nodes
                 if n.attrs.get("fp32") and n.attrs.get("weight") is not None)
    assert 0 < copied <= MAX_WEIGHTS
    int8_compares = [n for n in g.nodes if n.op == "compare" and not any(g.node(i).attrs.get("fp32")
                                                                         for i in n.inputs)]
    assert len(int8_compares) == 2      # the second sign's two comparisons
