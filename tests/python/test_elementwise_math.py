"""ptec.capture_elementwise_math: torch's element-wise math as exact
rewrites. In float the captured graph is torch's function (argument
spellings, NaN and inf included); on the host runtime an fp32 layer's NaN
and inf reach isnan, nan_to_num and fmax as torch's; bucket indices and
histogram counts are torch's away from the edges int8 rounding can cross;
the forms ptec does not run are refused in one line naming the call.
test_function_coverage.py's RUNS rows bound the int8 programs against
torch."""
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from conftest import ROOT
from ptec import host_runtime
from ptec.capture import capture
from ptec.compiler import CompileError, compile_model
from ptec.ir import UnsupportedOperator
from ptec.ir import evaluate
from ptec.pte import parse_program
from model_checks import Call

S3 = (1, 4, 8)
INF, NAN = float("inf"), float("nan")


def samples(lo=-2.0, hi=2.0, n=8, seed=0, shape=S3):
    g = torch.Generator().manual_seed(seed)
    return [(torch.rand(shape, generator=g) * (hi - lo) + lo,) for _ in range(n)]


def special_values():
    """x in [-2, 2] with NaN, +-inf, +-0 and exact zeros written in."""
    x = samples()[0][0].clone()
    x[0, 0, :6] = torch.tensor([NAN, INF, -INF, 0.0, -0.0, 1e-30])
    x[0, 2, 3] = 0.0
    return x


# (call of x, domain) whose captured graph must be torch in float
FLOAT = [
    (lambda x: x.clamp_min(0.1) + x.clamp_max(-0.2) + torch.clamp_min(x, 0.0) + torch.clamp_max(x, 1.0), None),
    (lambda x: torch.clip(x, -1, 1) + x.clip(max=0.3) + x.clip(-0.5) + torch.clip(x, min=0.5, max=-0.5), None),
    (lambda x: x.clamp(min=-x.abs() * 0.5) + x.clamp(max=x.flip(-1)) + torch.clamp(x, x.flip(1), x.flip(-1)), None),
    (lambda x: torch.clamp(x, x.mean(-1, keepdim=True), x.amax(1, keepdim=True)), None),    # broadcast bounds
    (lambda x: torch.clamp(x, torch.linspace(-1, 0, 8)) + x.clip(max=torch.tensor(0.25)), None),   # constant bounds
    (lambda x: x.sgn() + torch.sgn(x), None),
    (lambda x: torch.heaviside(x, torch.tensor(0.5)) + x.heaviside(torch.tensor([0.25])), None),
    (lambda x: torch.heaviside(torch.relu(x), x.flip(-1)) + torch.heaviside(x, x[:, :1]), None),
    (lambda x: torch.lerp(x, x.flip(-1), 0.3) + x.lerp(x * 2, 0.75) + torch.lerp(x, x * 0.5, weight=torch.sigmoid(x))
     + torch.lerp(x, x[:, :, :1], x[:, :1]), None),
    (lambda x: torch.addcmul(x, x.flip(-1), x) + torch.addcmul(x, x, x[:, :1], value=0.5)
     + x.addcdiv(x.flip(-1), x.abs() + 1, value=-2) + torch.addcdiv(x, x, x.abs() + 0.5), None),
    (lambda x: torch.logaddexp(x, x.flip(-1) * 3) + torch.logaddexp2(x, -x) + x.logaddexp(x[:, :1]), None),
    (lambda x: torch.xlogy(x, x.flip(-1).abs()) + x.xlogy(x.abs() + 0.1) + torch.xlogy(x, 3.0)
     + torch.xlogy(2.0, x.abs()) + torch.xlogy(0.0, x.abs()), None),
    (lambda x: torch.special.xlogy(x, x.abs()) + torch.special.xlog1py(x, x.flip(-1).abs())
     + torch.special.xlog1py(x, 0.5) + torch.special.xlog1py(-1.5, x.abs()), None),
    (lambda x: torch.fmax(x, x.flip(-1)) + torch.fmin(x, x[:, :1]) + x.fmax(x * 0.5), None),
    (lambda x: torch.float_power(x.abs(), 2).float() + torch.float_power(x.abs(), 0.5).to(torch.float32)
     + torch.float_power(1.5, x).float() + torch.float_power(x.abs() + 0.5, x.flip(-1)).float(), None),
    (lambda x: torch.erfc(x) + x.erfc() + torch.special.erfc(x) + torch.sinc(x) + torch.special.sinc(x), None),
    (lambda x: torch.erfinv(x) + x.erfinv() + torch.special.erfinv(x), (-0.99, 0.99)),
    (lambda x: torch.lgamma(x) + torch.digamma(x) + torch.special.gammaln(x) + torch.special.psi(x)
     + torch.special.digamma(x) + x.lgamma(), (0.1, 4.0)),
    (lambda x: torch.logit(x) + x.logit(0.2) + torch.logit(x, eps=0.05) + torch.special.logit(x, 0.1), (0.01, 0.99)),
    (lambda x: torch.deg2rad(x) + x.rad2deg() + torch.exp2(x) + torch.special.exp2(x) + torch.special.expm1(x)
     + torch.special.log1p(x.abs()) + torch.special.round(x) + torch.special.expit(x) + torch.special.erf(x), None),
    (lambda x: torch.special.ndtr(x) + torch.special.log_ndtr(x) + torch.special.i0(x) + torch.i0(x)
     + torch.special.entr(x.abs()) + torch.special.i0e(x) + torch.special.i1(x) + torch.special.erfcx(x), None),
    (lambda x: torch.special.ndtri(x), (0.01, 0.99)),
    (lambda x: torch.nan_to_num(x) + torch.nan_to_num(x, 1.0, 2.0, -3.0) + x.nan_to_num(posinf=5.0), None),
    (lambda x: torch.stack([torch.isnan(x), torch.isinf(x), torch.isposinf(x), torch.isneginf(x), torch.isfinite(x),
                            x.isnan(), x.isinf(), x.isfinite(), torch.signbit(x), x.signbit()]).float(), None),
    (lambda x: torch.stack([torch.isclose(x, x.flip(-1)), torch.isclose(x, x * 1.05, rtol=0.1),
                            torch.isclose(x, x + 0.01, atol=0.02, rtol=0.0), x.isclose(x.round(), 0.0, 0.3),
                            torch.isclose(x, x, equal_nan=True), torch.isclose(x, x[:, :1], 0.5, 0.5)]).float(), None),
    (lambda x: torch.stack([torch.bucketize(x, torch.tensor([-1.0, 0.0, 1.0])).float(),
                            torch.bucketize(x, torch.tensor([-1.0, 0.0, 0.0, 1.0]), right=True).float(),
                            torch.bucketize(x, torch.tensor([0.5]), out_int32=True).float(),
                            torch.searchsorted(torch.tensor([-1.5, 0.5, 2.0]), x).float(),
                            torch.searchsorted(torch.tensor([-1.5, 0.5, 2.0]), x, side="right").float(),
                            torch.searchsorted(torch.tensor([-1.5, 0.5, 2.0]), x, right=True).float()]), None),
    (lambda x: torch.histc(x, 4, -2.0, 2.0) + torch.histc(x, bins=4, min=-1, max=3) + torch.histc(x[0], 4, 0, 1),
     None),
]


@pytest.mark.parametrize("k", range(len(FLOAT)))
def test_rewrite_is_torch_in_float(k):
    fn, domain = FLOAT[k]
    model = Call(fn).eval()
    x = samples(*(domain or (-2.0, 2.0)), seed=k)[0][0]
    # the grid's own values (bucket and bin edges, whole numbers, zeros) as well
    x[0, 3] = torch.tensor([-1.0, 0.0, 1.0, 0.5, -2.0, 2.0, 3.0, -0.5]).clamp(*(domain or (-9, 9)))
    g = capture(model, [x])
    assert not [n.name for n in g.nodes if n.op == "unsupported"]
    assert len({n.name for n in g.nodes}) == len(g.nodes)
    with torch.no_grad():
        want = model(x)
    got = evaluate(g, [x])[0]
    assert got.shape == want.shape
    assert torch.allclose(got.double(), want.double(), rtol=1e-5, atol=1e-5, equal_nan=True), \
        (got - want).abs().max()


# NaN, inf and -0.0 in float: each call's graph is torch's on them
SPECIAL = {
    "fmax/fmin": lambda x: torch.stack([torch.fmax(x, x.flip(-1)), torch.fmin(x, x.flip(-1)),
                                        torch.fmax(x, torch.full_like(x, NAN))]),
    "nan_to_num": lambda x: torch.stack([torch.nan_to_num(x), torch.nan_to_num(x, 1.0, 2.0, -3.0),
                                         torch.nan_to_num(x, neginf=-7.0)]),
    "is*": lambda x: torch.stack([torch.isnan(x), torch.isinf(x), torch.isposinf(x), torch.isneginf(x),
                                  torch.isfinite(x)]),
    "isclose": lambda x: torch.stack([torch.isclose(x, x), torch.isclose(x, x, equal_nan=True),
                                      torch.isclose(x, x.flip(-1), 0.0, 0.0), torch.isclose(x, x + 1, 1.0, 1.0)]),
    "clamp": lambda x: torch.stack([x.clamp_min(0.0), x.clamp(min=x.flip(-1)), torch.clip(x, -1.0, 1.0)]),
    "xlogy": lambda x: torch.stack([torch.xlogy(x, x.abs()), torch.xlogy(x.abs(), x.flip(-1).abs()),
                                    torch.xlogy(torch.nan_to_num(x) * 0.0, x.flip(-1))]),    # 0 * log(NaN): NaN
}


@pytest.mark.parametrize("name", sorted(SPECIAL))
def test_special_values_in_float(name):
    model = Call(SPECIAL[name]).eval()
    x = special_values()
    g = capture(model, [samples()[0][0]])
    with torch.no_grad():
        want = model(x)
    got = evaluate(g, [x])[0]
    assert got.dtype == want.dtype
    assert torch.equal(torch.isnan(got), torch.isnan(want))
    assert torch.equal(torch.isinf(got), torch.isinf(want))
    assert torch.allclose(torch.nan_to_num(got.float()), torch.nan_to_num(want.float()), rtol=1e-5, atol=1e-6)


def host(model, x, calibration):
    res = compile_model(model, [calibration[0][0]], calibration)
    return res, host_runtime.run(parse_program(res.data), res.data, [x.numpy()])[0]


def nan_source(x):
    """An fp32 layer (binary_math) whose output is NaN where x < 0, inf where x == 0."""
    return torch.pow(x, -(x.flip(-1).abs() * 0.2 + 0.5))


# calls of an fp32 layer's output: its NaN and inf, on the host runtime (bound in output steps: the int8
# requantizations of the operands the result is picked from)
FP32_NAN = {
    "isnan": (lambda x: torch.isnan(nan_source(x)), 0.0),
    "isinf": (lambda x: torch.isinf(nan_source(x)), 0.0),
    "isposinf": (lambda x: torch.isposinf(nan_source(x)), 0.0),
    "isneginf": (lambda x: torch.isneginf(nan_source(x) * -1.0), 0.0),      # a product by a number stays fp32
    "isfinite": (lambda x: torch.isfinite(nan_source(x)), 0.0),
    "nan_to_num": (lambda x: torch.nan_to_num(nan_source(x) * 0.1, nan=-1.0, posinf=3.0), 1.0),
    "fmax": (lambda x: torch.fmax(torch.nan_to_num(nan_source(x), posinf=0.0) * 0.1, x), 1.5),
    "fmin": (lambda x: torch.fmin(x, torch.nan_to_num(nan_source(x), posinf=0.0) * 0.1), 1.5),
}


@pytest.mark.parametrize("name", sorted(FP32_NAN))
def test_nan_and_inf_of_an_fp32_layer(name):
    fn, bound = FP32_NAN[name]
    model = Call(fn).eval()
    calibration = samples()
    x = calibration[1][0].clone()
    x[0, 0, :3] = 0.0                                   # inf there
    with torch.no_grad():
        src, want = nan_source(x), model(x)
    assert torch.isnan(src).sum() > 4 and torch.isinf(src).sum() == 3
    res, got = host(model, x, calibration)
    assert any("pow" in f for f in res.lowered.fallbacks)
    if want.dtype == torch.bool:
        assert got.dtype == np.bool_ and (got == want.numpy()).all()
        assert want.any() and not want.all()
    else:
        step = res.graph.node(res.graph.outputs[0]).qparams[0]
        assert not np.isnan(got).any()
        assert np.abs(got - want.numpy()).max() <= (bound + 1e-3) * step


def test_fmax_takes_the_number_where_one_operand_is_nan():
    """where the fp32 operand is NaN (x <= 0: inf * 0 is NaN too), fmax and
    fmin give the other operand's value, not the NaN's quantized code"""
    model = Call(lambda x: torch.stack([torch.fmax(nan_source(x) * 0.0 + 5.0, x),
                                        torch.fmin(x, nan_source(x) * 0.0 - 5.0)])).eval()
    calibration = samples()
    x = calibration[2][0].clone()
    x[0, 1, :2] = 0.0
    res, got = host(model, x, calibration)
    with torch.no_grad():
        want = model(x).numpy()
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    assert (want[0] != 5.0).sum() > 4 and (np.abs(want) < 5.0).any()
    assert np.abs(got - want).max() <= 1.5 * step


def away_from(x, edges, step):
    """x with every value within 2 input steps of an edge moved 3 steps off it."""
    for e in edges:
        near = (x - e).abs() < 2 * step
        x = torch.where(near, x + 3 * step, x)
    return x


@pytest.mark.parametrize("right", [False, True])
def test_bucket_indices_are_torchs(right):
    """away from the boundaries (an input's int8 rounding can cross one: a
    value at a boundary is one only when it is on the input's grid)"""
    edges = [-1.0, -0.25, 0.0, 1.5]
    boundaries = torch.tensor(edges)
    model = Call(lambda x: torch.bucketize(x, boundaries, right=right)).eval()
    calibration = samples(-2.0, 2.0)
    res = compile_model(model, [calibration[0][0]], calibration)
    assert not res.lowered.fallbacks
    step = res.graph.node(res.graph.inputs[0]).qparams[0]
    seen = set()
    for (x,) in calibration[:4]:
        x = away_from(x, edges, step)
        got = host_runtime.run(parse_program(res.data), res.data, [x.numpy()])[0]
        want = model(x).numpy()
        assert got.dtype == np.int64 and (got == want).all(), (x, got, want)
        seen |= set(want.reshape(-1).tolist())
    assert seen == set(range(5))


def test_searchsorted_int32_and_sides():
    seq = torch.tensor([-0.5, 0.25, 1.0])
    model = Call(lambda x: torch.searchsorted(seq, x, out_int32=True, side="right")).eval()
    calibration = samples()
    res = compile_model(model, [calibration[0][0]], calibration)
    step = res.graph.node(res.graph.inputs[0]).qparams[0]
    x = away_from(calibration[3][0], seq.tolist(), step)
    got = host_runtime.run(parse_program(res.data), res.data, [x.numpy()])[0]
    want = model(x).numpy()
    assert got.dtype == np.int32 and (got == want).all(), (got, want)
    assert set(want.reshape(-1).tolist()) == {0, 1, 2, 3}


def test_histogram_counts_are_torchs():
    edges = [-2.0, -1.0, 0.0, 1.0, 2.0]
    model = Call(lambda x: torch.histc(x, 4, -2.0, 2.0)).eval()
    calibration = samples(-3.0, 3.0)
    res = compile_model(model, [calibration[0][0]], calibration)
    step = res.graph.node(res.graph.inputs[0]).qparams[0]
    for (x,) in calibration[:4]:
        x = away_from(x, edges, step)
        got = host_runtime.run(parse_program(res.data), res.data, [x.numpy()])[0]
        want = model(x).numpy()
        out_step = res.graph.node(res.graph.outputs[0]).qparams[0]
        assert got.shape == (4,) and np.abs(got - want).max() <= 0.5 * out_step + 1e-6, (got, want)


@pytest.mark.parametrize("bins, lo, hi", [(4, -2.0, 2.0), (1, -1.0, 2.0), (9, -3.0, 1.5)])
def test_histogram_of_many_elements_counts_exactly(bins, lo, hi):
    """1,280 elements (an int8 grid holds at most 255 counts): the members
    counted in int64, a float32 output, torch's counts exactly (an input
    all in one bin too)."""
    edges = np.linspace(lo, hi, bins + 1).tolist()
    model = Call(lambda x: torch.histc(x.repeat(1, 8, 5), bins, lo, hi)).eval()
    calibration = samples(-3.0, 3.0)
    res = compile_model(model, [calibration[0][0]], calibration)
    step = res.graph.node(res.graph.inputs[0]).qparams[0]
    seen = set()
    for (x,) in calibration[:4] + [(torch.full((1, 4, 8), 0.3),)]:
        x = away_from(x, edges, step)
        got = host_runtime.run(parse_program(res.data), res.data, [x.numpy()])[0]
        want = model(x).numpy()
        assert got.dtype == np.float32 and np.array_equal(got, want), (got, want)
        seen.add(tuple(want.tolist()))
    assert len(seen) >= 3


def test_isclose_is_torchs_away_from_the_tolerance():
    model = Call(lambda x: torch.isclose(x, torch.relu(x), rtol=0.0, atol=0.1)).eval()
    calibration = samples()
    res = compile_model(model, [calibration[0][0]], calibration)
    step = res.graph.node(res.graph.inputs[0]).qparams[0]
    for (x,) in calibration[:4]:
        x = away_from(x, [-0.1, 0.0], step)
        got = host_runtime.run(parse_program(res.data), res.data, [x.numpy()])[0]
        assert got.dtype == np.bool_ and (got == model(x).numpy()).all()


# (call of x, input range, what the one-line message names)
REFUSED = {
    "searchsorted with a sorter": (lambda x: torch.searchsorted(torch.tensor([1.0, 0.0]), x,
                                                                sorter=torch.tensor([1, 0])), "searchsorted"),
    # (sorted per-row boundaries run: test_spectrogram_and_calls.py)
    "searchsorted of unsorted 2-D rows": (lambda x: torch.searchsorted(torch.tensor([[1.0, 0.0]] * 4), x[0]),
                                          "searchsorted"),
    "histc of a selection": (lambda x: torch.histc(x[x > 0], 5000), "histc"),   # (any bins of x itself run)
    "xlogy of a negative number": (lambda x: torch.xlogy(x, -1.0), "xlogy"),
    "clamp of a bool": (lambda x: (x > 0).clamp(min=x > 1), "clamp"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_in_one_line(name):
    fn, named = REFUSED[name]
    calibration = samples()
    with pytest.raises((CompileError, UnsupportedOperator)) as e:     # (histc's bins: refused at capture)
        compile_model(Call(fn).eval(), [calibration[0][0]], calibration)
    message = str(e.value)
    assert "\n" not in message and named in message and "operator not supported" in message, message


def test_float_power_output_through_the_cli(tmp_path):
    """torch.float_power's float64 result as the program output: a Double output (test_float64_outputs.py)."""
    src = tmp_path / "power.py"
    src.write_text("import torch, torch.nn as nn\n"
                   "class M(nn.Module):\n"
                   "    input_shape = (1, 4, 8)\n"
                   "    def forward(self, x):\n"
                   "        return torch.float_power(x, 2)\n"
                   "def make():\n    return M()\n")
    out = tmp_path / "power.pte"
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    r = subprocess.run([sys.executable, "-m", "ptec", "compile", f"{src}:make", "--calib", "2", "-o", str(out)],
                       env=env, capture_output=True, text=True)
    assert r.returncode == 0 and out.exists(), r.stderr
    calibration = samples()
    res = compile_model(Call(lambda x: torch.float_power(x, 2)).eval(), [calibration[0][0]], calibration)
    assert [o.dtype for o in res.lowered.outputs] == ["float64"]


class Together(torch.nn.Module):
    """Several of the rewrites in one model: tensor clamp bounds, lerp,
    logaddexp, LUT functions, isclose, bucketize, fmax and nan_to_num."""

    def forward(self, x):                                   # x [1, 4, 8]
        a = torch.clamp(x, x.mean(-1, keepdim=True) - 0.5, x.flip(-1) + 0.5)
        b = torch.lerp(x, x.flip(-1), 0.3) + torch.logaddexp(x, -x) * 0.5
        c = torch.erfc(x) + torch.special.ndtr(x) + torch.isclose(x, torch.relu(x)).float()
        d = torch.bucketize(x, torch.tensor([-1.0, 0.0, 1.0])).float() + torch.nan_to_num(torch.fmax(x, x.flip(1)))
        return torch.cat([a, b, c, d], -1)                  # [1, 4, 32]


@pytest.mark.parametrize("target", ["host", "cortex-m55"])
def test_rewrites_together(target, tmp_path):
    from model_checks import board_matches_reference
    from test_module_coverage import worst_steps
    model = Together().eval()
    calibration = samples(-3.0, 3.0)
    res = compile_model(model, [calibration[0][0]], calibration)
    assert not res.lowered.fallbacks, res.lowered.fallbacks
    if target == "host":
        assert worst_steps(model, res, calibration[:4], tmp_path) <= 1.5      # measured 1.06
    else:
        board_matches_reference(res.data, samples(-3.0, 3.0, 1, seed=5)[0][0].numpy(), target, tmp_path)
