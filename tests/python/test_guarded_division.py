"""Eps-guarded divisions of ReLU features whose row may be all zero
(ptec.guarded_denominators), against torch float (the oracle) on the host
runtime, in int8 OUTPUT steps (the range of torch's outputs over the test
feeds / 255), with a NaN check: no NaN where torch has none.

torch gives 0 for such a row (0 / eps). Before the fix ptec gave NaN (the
guard `+ eps` / clamp_min(eps) rounded to 0 on the denominator's int8
grid: an fp32 0 / 0), 71,025 steps for z * rsqrt(sum(z * z) + eps) (the
rsqrt's grid reached 1000 and rounded ordinary values to 0) and refused
F.normalize (a requantization shift of 35). The test feeds: calibration
samples and fresh ones, each with and without all-zero rows, over seeds."""
import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.pte import parse_program

from call_model import Call as Fn

FORMS = {
    "sum_eps": lambda z: z / (z.sum(-1, keepdim=True) + 1e-6),
    "sum_clamp_min": lambda z: z / z.sum(-1, keepdim=True).clamp_min(1e-6),
    "norm_eps": lambda z: z / (z.norm(dim=-1, keepdim=True) + 1e-6),
    "mean_eps": lambda z: z / (z.mean(-1, keepdim=True) + 1e-3),
    "rsqrt_sumsq": lambda z: z * torch.rsqrt((z * z).sum(-1, keepdim=True) + 1e-6),
    "F_normalize": lambda z: F.normalize(z, dim=-1),
    "F_normalize_p1": lambda z: F.normalize(z, p=1, dim=-1),
    "F_normalize_p3": lambda z: F.normalize(z, p=3, dim=-1),
    "F_normalize_pinf": lambda z: F.normalize(z, p=float("inf"), dim=-1),
    "reciprocal_times": lambda z: z * torch.reciprocal(z.sum(-1, keepdim=True) + 1e-6),
    "one_over_times": lambda z: z * (1.0 / (z.sum(-1, keepdim=True) + 1e-6)),
    "sqrt_then_div": lambda z: z.sqrt() / (z.sqrt().sum(-1, keepdim=True) + 1e-6),
    "std_eps": lambda z: (z - z.mean(-1, keepdim=True)) / (z.std(-1, keepdim=True) + 1e-5),
    "hand_layer_norm": lambda z: (z - z.mean(-1, keepdim=True))
    / torch.sqrt(z.var(-1, keepdim=True, unbiased=False) + 1e-5),
}
# measured after the fix: 0.00 steps for every form on seeds 1-3 (the ReLU of the input, the
# numerator and the whole denominator in fp32)
LIMIT = 1.0
# a row whose largest feature is this small but not 0 is left out of the feeds: a scale-free
# normalisation of it (1 for its one positive value) rests on a value within a few steps of 0 on an
# int8 grid (the Linear's output's), where int8 cannot tell it from a zero row
SMALLEST = 0.3
# after a Linear, its int8 output is the numerator: measured 2.25 to 4.33 steps
AFTER_LINEAR = 6.0


def _zero_rows(x, g, p=0.3):
    """x with some rows made all negative (their ReLU all zero), and the
    rows whose largest value is positive but below SMALLEST too."""
    top = x.max(-1).values
    rows = (torch.rand(x.shape[:-1], generator=g) < p) | ((top > 0) & (top < SMALLEST))
    return torch.where(rows[..., None], -x.abs() - 0.01, x)


def _feeds(shape, n, seed, zeros=True, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(n):
        x = torch.randn(*shape, generator=g) * scale
        out.append([_zero_rows(x, g) if zeros else x])
    return out


def _measure(model, seed, shape=(3, 6)):
    """Compile on calibration feeds holding zero rows; run 4 of them and
    fresh feeds with and without zero rows (scaled into the calibrated
    range): (worst steps, whether ptec has a NaN where torch has none)."""
    model = model.eval()
    cal = _feeds(shape, 16, seed)
    test = cal[:4] + _feeds(shape, 4, 900 + seed, True, 0.7) + _feeds(shape, 4, 950 + seed, False, 0.7)
    res = compile_model(model, cal[0], cal)
    prog = parse_program(res.data)
    gots, wants = [], []
    for feed in test:
        gots.append(np.asarray(host_runtime.run(prog, res.data, [t.numpy() for t in feed])[0], np.float64))
        with torch.no_grad():
            wants.append(model(*[t.clone() for t in feed]).numpy().astype(np.float64))
    got, want = np.stack(gots), np.stack(wants)
    assert np.isfinite(want).all(), "torch's outputs are finite here (the oracle)"
    assert (want == 0).all(axis=-1).any(), "the test feeds hold zero rows"
    step = float(np.ptp(want)) / 255
    assert step > 0
    nan = bool(np.isnan(got).any())
    return (float(np.nan_to_num(np.abs(got - want), nan=np.inf).max()) / step), nan


@pytest.mark.parametrize("form", sorted(FORMS))
def test_guarded_division_of_relu(form):
    """Was NaN (sum / clamp / norm / mean / sqrt / std / layer-norm forms),
    71,025 steps (rsqrt), refused (F.normalize)."""
    for seed in (1, 2, 3):
        steps, nan = _measure(Fn(lambda x: FORMS[form](torch.relu(x))), seed)
        assert not nan, (form, seed, "NaN where torch gives 0")
        assert steps <= LIMIT, (form, seed, steps)


class AfterLinear(nn.Module):
    """relu(linear(x)) normalised by its eps-guarded sum: a row of x that is
    zero gives relu(bias) = 0 (the bias is negative)."""

    def __init__(self, form):
        super().__init__()
        torch.manual_seed(0)
        self.l = nn.Linear(16, 6)
        with torch.no_grad():
            self.l.bias.copy_(-self.l.bias.abs() - 0.05)
        self.form = form

    def forward(self, x):
        return FORMS[self.form](torch.relu(self.l(x)))


def _zero_inputs(model, x, g, p=0.3):
    """x with some rows 0 (their features relu(bias) all zero), and the
    rows whose largest feature is positive but below SMALLEST too."""
    with torch.no_grad():
        top = torch.relu(model.l(x)).max(-1).values
    rows = (torch.rand(x.shape[:-1], generator=g) < p) | ((top > 0) & (top < SMALLEST))
    return torch.where(rows[..., None], torch.zeros_like(x), x)


@pytest.mark.parametrize("form", ["sum_eps", "rsqrt_sumsq", "F_normalize"])
def test_guarded_division_after_linear(form):
    """After a Linear (its int8 output the numerator): was NaN / 13.9 steps
    (sum_eps on a calibration sample), 70k+ steps (rsqrt), refused
    (F.normalize); now 2.25 to 4.33 steps (seeds 1, 2; bound AFTER_LINEAR:
    the linear's own rounding of small features, relative to their row's sum)."""
    model = AfterLinear(form).eval()
    for seed in (1, 2):
        g = torch.Generator().manual_seed(seed)
        cal = [[_zero_inputs(model, torch.randn(3, 16, generator=g), g)] for _ in range(16)]
        test = cal[:4] + [[_zero_inputs(model, torch.randn(3, 16, generator=g) * 0.7, g)] for _ in range(4)]
        res = compile_model(model, cal[0], cal)
        prog = parse_program(res.data)
        got = np.stack([np.asarray(host_runtime.run(prog, res.data, [f[0].numpy()])[0], np.float64) for f in test])
        with torch.no_grad():
            want = np.stack([model(f[0]).numpy().astype(np.float64) for f in test])
        assert (want == 0).all(axis=-1).any() and np.isfinite(want).all()
        assert not np.isnan(got).any(), (form, seed)
        steps = float(np.abs(got - want).max()) / (float(np.ptp(want)) / 255)
        print(form, seed, f"{steps:.2f}")
        assert steps <= AFTER_LINEAR, (form, seed, steps)


def test_guard_kept_when_calibration_has_no_zero_row():
    """The same L2 normalisation of features that never reach 0 in
    calibration keeps its int8 form (no fp32 steps are added): the rule
    acts only where the guard was lost."""
    model = Fn(lambda x: x / (x.abs().sum(-1, keepdim=True) + 1e-6)).eval()
    g = torch.Generator().manual_seed(4)
    cal = [[torch.randn(3, 64, generator=g) + 4.0] for _ in range(8)]
    res = compile_model(model, cal[0], cal)
    marked = [n for n in res.graph.nodes if "eps-guarded" in str(n.attrs.get("fp32", ""))]
    assert not marked


def test_a_shift_out_of_range_is_refused_in_words_naming_the_layer():
    """With --int8-io (no fp32 steps) F.normalize of ReLU rows that are all
    zero in calibration still needs a requantization shift past 31: refused
    in one line that names the user's call and says why in words (it named
    cortex_m::quantized_mul.out and its output_shift argument first)."""
    from ptec.compiler import CompileError
    model = Fn(lambda x: F.normalize(torch.relu(x), dim=-1)).eval()
    cal = _feeds((3, 6), 16, 1)
    with pytest.raises(CompileError) as e:
        compile_model(model, cal[0], cal, int8_io=True)
    msg = str(e.value)
    assert "\n" not in msg and "normalize (F.normalize): " in msg
    assert "cortex_m::" not in msg and "output_shift" not in msg
    assert "too far apart" in msg and "outside [-31, 31]" in msg
