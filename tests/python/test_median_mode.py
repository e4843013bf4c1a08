"""torch.mode, torch.median(x, dim) / median(x), torch.nanmedian(x, dim) /
nanmedian(x), torch.cummax and torch.cummin (issue 15), as
aten::median.dim_values, nanmedian.dim_values, mode.values, cummax.out and
cummin.out (ptec only), and nn.LPPool1d/2d with an infinite norm_type
(torch's ones).

torch is the oracle. The int8 values are the input's own codes moved, so
they are torch's answer on the dequantized input (a float32 hair apart) and
within half an input step of torch's on the float input; inputs are on a
coarse grid (multiples of 0.5: int8 rounding keeps their order and their
ties), so the indices are torch's exactly, ties included, where torch's rule
is deterministic: median's index (its partition breaks ties by index), mode's
(its libstdc++ std::sort procedure, run by the kernel: test_mode_index.py),
cummax/cummin always. A
float program input is picked in float32, NaN included. Host bytes equal the
numpy reference interpreter's (python/ptec/reference, which shares no code
with the C), and the emulated boards print those bytes."""
import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from model_checks import board_matches_reference
from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.pte import parse_program
from ptec.reference import portable as P

SHAPE = (3, 4, 12)
NAN = float("nan")


class Clamped(nn.Module):
    """The input clamped in int8 (on the input's grid), then `call`: the
    codes picked are the input's."""

    def __init__(self, call):
        super().__init__()
        self.call = call

    def forward(self, x):
        return self.call(torch.clamp(x, -8.0, 8.0))


class Raw(nn.Module):
    """`call` on the float program input itself (no int8 step before it)."""

    def __init__(self, call):
        super().__init__()
        self.call = call

    def forward(self, x):
        return self.call(x)


def _pair(fn):
    """(values, indices) of fn's result, taken by [0] and [1] (a traced
    result cannot be iterated)."""
    def both(y):
        r = fn(y)
        return r[0], r[1]
    return both


# name: (call returning its outputs, whether each output is an index)
CALLS = {
    "torch.mode(x, dim)": (_pair(lambda y: torch.mode(y, 1)), (False, True)),
    "Tensor.mode() keepdim": (_pair(lambda y: y.mode(keepdim=True)), (False, True)),
    "torch.median(x, dim)": (_pair(lambda y: torch.median(y, 0)), (False, True)),
    "Tensor.median(dim, keepdim)": (_pair(lambda y: y.median(-1, keepdim=True)), (False, True)),
    "torch.nanmedian(x, dim)": (_pair(lambda y: torch.nanmedian(y, 2)), (False, True)),
    "Tensor.nanmedian(dim).indices": (lambda y: y.nanmedian(1).indices, (True,)),
    "torch.median(x)": (lambda y: torch.median(y), (False,)),
    "Tensor.median()": (lambda y: y.median(), (False,)),
    "torch.nanmedian(x)": (lambda y: torch.nanmedian(y), (False,)),
    "Tensor.nanmedian()": (lambda y: y.nanmedian(), (False,)),
    "torch.cummax(x, dim)": (_pair(lambda y: torch.cummax(y, 2)), (False, True)),
    "Tensor.cummax(0).values": (lambda y: y.cummax(0).values, (False,)),
    "torch.cummin(x, dim)": (_pair(lambda y: torch.cummin(y, -2)), (False, True)),
    "Tensor.cummin(2)[1]": (lambda y: y.cummin(2)[1], (True,)),
}


def on_grid(n, seed, step=0.5, spread=6):
    """Inputs of SHAPE on multiples of `step` in [-spread, spread) * step:
    many ties, and values apart by far more than an int8 step."""
    g = torch.Generator().manual_seed(seed)
    return [(torch.randint(-spread, spread, SHAPE, generator=g).float() * step,) for _ in range(n)]


def _outs(y):
    return list(y) if isinstance(y, tuple) else [y]


def compiled(call, model_class=Clamped, calibration=None):
    model = model_class(call).eval()
    calibration = calibration or on_grid(8, 0, spread=8)
    return model, compile_model(model, [calibration[0][0]], calibration)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_int8_matches_torch(name, tmp_path):
    call, is_index = CALLS[name]
    model, res = compiled(call)
    assert not res.lowered.fallbacks and not res.lowered.unsupported
    assert [o.dtype for o in res.lowered.outputs] == ["int64" if i else "float32" for i in is_index]
    prog = parse_program(res.data)
    s, z = res.graph.node("x").qparams
    for (x,) in on_grid(4, 1):
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))
        assert [a.tobytes() for a in got] == [w.tobytes() for w in run_program(prog, [x.numpy()])]
        with torch.no_grad():
            ref = _outs(call(x))
            codes = torch.clamp(torch.round(x / s) + z, -128, 127)
            on_codes = _outs(call((codes - z) * s))
        for k, index in enumerate(is_index):
            assert got[k].shape == tuple(ref[k].shape), (name, k)
            if index:
                # the grid keeps order and ties: torch's index, ties included
                assert np.array_equal(got[k], ref[k].numpy()), (name, k)
            else:
                assert np.allclose(got[k], on_codes[k].numpy(), rtol=0, atol=1e-6 * s), (name, k)
                assert np.abs(got[k] - ref[k].numpy()).max() <= 0.5 * s * 1.001 + 1e-6, (name, k)


def test_values_keep_the_input_grid():
    """Every value is an input code: the output's qparams are the input's."""
    for name in ("torch.mode(x, dim)", "torch.median(x)", "torch.cummin(x, dim)"):
        _, res = compiled(CALLS[name][0])
        assert tuple(res.graph.node(res.graph.outputs[0]).qparams) == tuple(res.graph.node("x").qparams), name


def test_mode_tie_rule():
    """torch 1.13's mode: the smallest of the most frequent values, at its
    last position (rows of up to 16 elements without NaN); the program's the same. The
    calibration spans [-4, 4] (not a draw of the global generator, whose
    state follows the tests before: a narrower range merged 2.5 and 3.0
    into one code)."""
    x = torch.tensor([[2.0, 1.0, 2.0, 1.0, 3.0, 0.5], [3.0, 3.0, -1.0, 3.0, -1.0, -1.0],
                      [0.5, 1.0, 1.5, 2.0, 2.5, 3.0], [1.0, 1.0, 1.0, 1.0, 1.0, 1.0]])
    v, i = torch.mode(x, 1)
    assert v.tolist() == [1.0, -1.0, 0.5, 1.0] and i.tolist() == [3, 5, 0, 5]
    _, res = compiled(_pair(lambda y: torch.mode(y, 1)), calibration=[(torch.linspace(-4, 4, 24).reshape(4, 6),)] * 4)
    got = run_program(parse_program(res.data), [x.numpy()])
    step = res.graph.node("x").qparams[0]
    assert np.abs(got[0] - v.numpy()).max() <= 0.5 * step and got[1].tolist() == i.tolist()


def test_reference_is_torch():
    """The numpy reference against torch on small integer rows with ties and
    NaNs: median (a NaN row gives its first NaN), nanmedian (NaNs left out;
    a NaN-only row's index is torch's partition's, not compared), mode (rows
    of up to 16 here; longer rows and NaN: test_mode_index.py), cummax /
    cummin; float32 and int8."""
    g = torch.Generator().manual_seed(3)
    for trial in range(60):
        n = 1 + trial % 16
        x = torch.randint(-3, 4, (5, n), generator=g).float()
        xn = torch.where(torch.rand(5, n, generator=g) < 0.2, torch.tensor(NAN), x)
        for rule in ("median", "nanmedian"):
            v, i = getattr(torch, rule)(xn, 1)
            rv, ri = P.row_pick(xn.numpy(), 1, False, rule)
            some = ~torch.isnan(xn).all(1).numpy()
            assert np.array_equal(rv, v.numpy(), equal_nan=True) and np.array_equal(ri[some], i.numpy()[some])
        for data in (x, x.to(torch.int8)):
            v, i = torch.mode(data, 1, keepdim=True)
            rv, ri = P.row_pick(data.numpy(), 1, True, "mode")
            assert rv.dtype == data.numpy().dtype and np.array_equal(rv, v.numpy()) and np.array_equal(ri, i.numpy())
        for rule, smallest in (("cummax", False), ("cummin", True)):
            v, i = getattr(torch, rule)(xn, 1)
            rv, ri = P.running_extreme(xn.numpy(), 1, smallest)
            assert np.array_equal(rv, v.numpy(), equal_nan=True) and np.array_equal(ri, i.numpy())
    assert P.row_pick(np.float32(2.5), 0, False, "median")[1] == 0


class FloatPicks(nn.Module):
    """Every new kernel on the float32 program input (no int8 step)."""

    def forward(self, x):
        a, b = torch.nanmedian(x, 1)
        c, d = torch.median(x, 1)
        e, f = torch.cummax(x, 1)
        h, i = x.cummin(0)
        k, m = torch.mode(x, 1)
        return a, b, c, d, e, f, h, i, k, m, torch.median(x), torch.nanmedian(x)


def test_float_input_with_nan(tmp_path):
    """A float32 value is picked in float32: NaNs as torch places them
    (median propagates the first NaN, nanmedian leaves them out, the running
    extremes keep a NaN), indices torch's where its rule is deterministic
    (mode's on rows with NaN too)."""
    g = torch.Generator().manual_seed(8)
    calibration = [(torch.randint(-4, 5, (4, 9), generator=g).float(),) for _ in range(4)]
    res = compile_model(FloatPicks().eval(), [calibration[0][0]], calibration)
    assert not res.lowered.unsupported
    prog = parse_program(res.data)
    x = calibration[1][0].clone()
    x[0, 2] = x[0, 6] = NAN          # a median row with NaNs, nanmedian of the rest
    x[1, :] = NAN                    # NaNs only: nanmedian NaN
    x[3, 4] = NAN
    for inp in (calibration[2][0], x):
        got = host_runtime.run(prog, res.data, [inp.numpy()], workdir=str(tmp_path))
        assert [a.tobytes() for a in got] == [w.tobytes() for w in run_program(prog, [inp.numpy()])]
        ref = [r.numpy() for r in FloatPicks()(inp)]
        for k, (a, r) in enumerate(zip(got, ref)):
            assert np.array_equal(a, r, equal_nan=True) or k == 1, k
        some = ~np.isnan(inp.numpy()).all(1)
        assert np.array_equal(got[1][some], ref[1][some])       # nanmedian's index but on NaN-only rows
    assert np.isnan(got[10]) and got[11] == np.nanquantile(x.numpy(), 0.5, method="lower")


# cummax's (values, indices) returned whole is the program's two outputs: test_traced_tuples.py


def test_index_into_later_layers(tmp_path):
    """`.float()` of mode / cummax indices feeds int8 layers; bytes as the reference."""
    class Next(nn.Module):
        def forward(self, x):
            return x.median(-1).values + torch.mode(x, -1)[1].float() * 0.25 + x.cummax(-1)[1].float()[..., 3]
    g = torch.Generator().manual_seed(6)
    calibration = [(torch.randint(-6, 6, (1, 6, 10), generator=g).float() * 0.5,) for _ in range(8)]
    res = compile_model(Next().eval(), [calibration[0][0]], calibration)
    assert not res.lowered.fallbacks and not res.lowered.unsupported
    prog = parse_program(res.data)
    for (x,) in calibration[:3]:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert got.tobytes() == run_program(prog, [x.numpy()])[0].tobytes()


class ConvPicks(nn.Module):
    """The new kernels over a 4-D channels-last conv output."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(1)
        self.conv = nn.Conv2d(3, 6, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        v, i = y.cummax(1)
        return v, i, torch.mode(y, 2, keepdim=True)[0], torch.nanmedian(y, 3)[1], y.median()


def test_channels_last_values(tmp_path):
    """Bytes as the reference on channels-last inputs (each call works on a
    contiguous copy); the values are within the conv's rounding of torch's."""
    model = ConvPicks().eval()
    g = torch.Generator().manual_seed(2)
    calibration = [(torch.randn(1, 3, 5, 4, generator=g),) for _ in range(8)]
    res = compile_model(model, [calibration[0][0]], calibration)
    assert not res.lowered.fallbacks and not res.lowered.unsupported
    prog = parse_program(res.data)
    step = res.graph.node("conv").qparams[0]
    for (x,) in calibration[:3]:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))
        assert [a.tobytes() for a in got] == [w.tobytes() for w in run_program(prog, [x.numpy()])]
        with torch.no_grad():
            ref = [r.numpy() for r in model(x)]
        assert np.abs(got[0] - ref[0]).max() <= 1.5 * step and np.abs(got[4] - ref[4]).max() <= 1.5 * step
        assert got[1].shape == ref[1].shape and got[2].shape == ref[2].shape and got[3].shape == ref[3].shape


# -- nn.LPPool with an infinite norm_type: torch's ones ------------------------------

LPPOOLS = {
    "nn.LPPool2d(inf, 2)": (lambda: nn.LPPool2d(float("inf"), 2), (1, 2, 6, 6)),
    "nn.LPPool2d(inf, (2, 3), stride 1, ceil)": (lambda: nn.LPPool2d(float("inf"), (2, 3), 1, ceil_mode=True),
                                                 (2, 3, 5, 7)),
    "nn.LPPool2d(-inf, 3)": (lambda: nn.LPPool2d(float("-inf"), 3), (1, 1, 6, 6)),
    "nn.LPPool1d(inf, 3, stride 2, ceil)": (lambda: nn.LPPool1d(float("inf"), 3, 2, ceil_mode=True), (1, 4, 9)),
    "F.lp_pool2d(x, inf, 2)": (lambda: Raw(lambda x: F.lp_pool2d(x, float("inf"), 2)), (1, 3, 4, 4)),
}


@pytest.mark.parametrize("name", sorted(LPPOOLS))
def test_infinite_lp_pool_is_torchs_ones(name, tmp_path):
    make, shape = LPPOOLS[name]
    model = nn.Sequential(nn.ReLU(), make()).eval()
    g = torch.Generator().manual_seed(4)
    calibration = [(torch.randn(shape, generator=g) * 3,) for _ in range(4)]
    lines = []
    res = compile_model(model, [calibration[0][0]], calibration, log=lines.append)
    notes = [s for s in lines if "is not a max pool" in s]
    where = "lp_pool2d (F.lp_pool2d)" if name.startswith("F.") else "1 (nn.LPPool"
    assert len(notes) == 1 and where in notes[0] and "nn.MaxPool2d" in notes[0], lines
    prog = parse_program(res.data)
    hostile = torch.randn(shape, generator=g)
    hostile.view(-1)[:4] = torch.tensor([NAN, 0.0, -0.0, float("inf")])
    hostile.view(-1)[-3:] = torch.tensor([-5.0, 0.0, 1e-30])
    for x in (calibration[1][0], torch.zeros(shape), -torch.ones(shape), hostile):
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        with torch.no_grad():
            ref = model(x).numpy()
        assert got.shape == ref.shape and np.array_equal(got, ref) and (ref == 1.0).all(), name


def test_infinite_lp_pool_inside_a_model(tmp_path):
    """The ones feed later layers as a constant: tanh(x) + pool(x) is
    tanh(x) + 1, within the tanh's and the add's roundings."""
    class Plus(nn.Module):
        def __init__(self):
            super().__init__()
            self.pool = nn.LPPool2d(float("inf"), 1)

        def forward(self, x):
            return torch.tanh(x) + self.pool(x)
    g = torch.Generator().manual_seed(5)
    calibration = [(torch.randn(1, 2, 4, 4, generator=g),) for _ in range(4)]
    res = compile_model(Plus().eval(), [calibration[0][0]], calibration)
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    for (x,) in calibration:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert got.tobytes() == run_program(prog, [x.numpy()])[0].tobytes()
        assert np.abs(got - (torch.tanh(x) + 1).numpy()).max() <= 2.0 * step


# -- the emulated boards print the reference bytes ----------------------------------

class Scores(nn.Module):
    """A small model for the boards: linear scores on a coarse grid, then `call`."""

    def __init__(self, call):
        super().__init__()
        torch.manual_seed(5)
        self.fc = nn.Linear(12, 12)
        self.call = call

    def forward(self, x):
        return self.call(torch.round(self.fc(x)))


BOARD_CALLS = {
    "mode indices": lambda y: torch.mode(y, -1)[1],
    "median and nanmedian": lambda y: torch.median(y, 1).values + y.nanmedian(1).values,
    "whole median": lambda y: torch.nanmedian(y * 0.5),
    "cummax values": lambda y: torch.cummax(y, 2)[0],
    "cummin indices": lambda y: y.cummin(1).indices,
}


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
@pytest.mark.parametrize("name", sorted(BOARD_CALLS))
def test_on_boards(target, name, tmp_path):
    g = torch.Generator().manual_seed(7)
    calibration = [(torch.randn(SHAPE, generator=g) * 3,) for _ in range(8)]
    model = Scores(BOARD_CALLS[name]).eval()
    res = compile_model(model, [calibration[0][0]], calibration)
    assert not res.lowered.fallbacks and not res.lowered.unsupported
    for (x,) in calibration[:2]:
        board_matches_reference(res.data, x.numpy(), target, tmp_path)
