"""The bugs probe 17 found in the AOT, each with the check that would have
caught it (oracle: PyTorch float; bounds in output steps):

1. NaN / inf tests of a value computed in int8 (torch.isnan(torch.log(x))
   answered False everywhere; nan_to_num(log x) gave -5.35 for torch's 0):
   a user's sqrt / log / fractional power now gives torch's NaN in the
   graph's float evaluation (calibration sees it), and a test for NaN / inf
   of such a value reads its fp32 form or is refused in one line.
2. F.softmax / log_softmax / softmin without dim: torch's legacy implicit
   dim (0 for ranks 0, 1, 3, else 1), not a TypeError at capture.
3. A value that is always 0 (a where with a constant all-False mask) had a
   1e-8-wide grid whose mul ratio 2^-34 ptec-run rejected; now a unit grid,
   and ProgramBuilder refuses any requantization shift outside [-31, 31].
4. cosine_similarity (21.5 steps; -0.978 for -0.364) and pairwise_distance
   with p = 3 (0.0 for 1.48): computed in fp32 (capture_fp32_distances)."""
import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from ptec.compiler import CompileError, compile_model
from ptec.quant_math import check_requant_shifts
from ptec.quantize import affine_qparams
from model_checks import Call
from test_module_coverage import worst_steps


def _inputs(shape, lo=-3.0, hi=3.0, n=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [(torch.rand(shape, generator=g) * (hi - lo) + lo,) for _ in range(n)]


def _worst(model, shape, tmp_path, lo=-3.0, hi=3.0):
    cal = _inputs(shape, lo, hi)
    res = compile_model(model, [cal[0][0]], cal)
    return worst_steps(model, res, cal[:4], tmp_path), res         # (as test_function_coverage's RUNS)


# -- 1. NaN / inf tests ------------------------------------------------------------------------------------------

# (call, the call the refusal names, the tested value as torch computes it)
TESTED = {
    "isnan(log x)": (lambda x: torch.isnan(torch.log(x)).float(), "isnan", lambda x: torch.log(x)),
    "isfinite(log x)": (lambda x: torch.isfinite(torch.log(x)).float(), "isfinite", lambda x: torch.log(x)),
    # (nan_to_num(log x) runs: one table of x, test_spectrogram_and_calls; isnan(log x) is the refused test)
    "isnan(sqrt x)": (lambda x: torch.sqrt(x).isnan().float(), "isnan", lambda x: torch.sqrt(x)),
    "nansum(sqrt x)": (lambda x: torch.nansum(torch.sqrt(x), 2), "nansum", lambda x: torch.sqrt(x)),
    "nanmean(x ** 0.5)": (lambda x: torch.nanmean(x ** 0.5, 2), "nanmean", lambda x: x ** 0.5),
}

# a value torch computes as NaN, returned or compared: refused (it used to be 0 / the domain's edge)
NAN_READ = {
    "sqrt x returned": (lambda x: torch.sqrt(x), "sqrt"),
    "x ** 0.5 returned": (lambda x: x ** 0.5, "pow"),
    "log x > 0": (lambda x: (torch.log(x) > 0).float(), "log"),
}


@pytest.mark.parametrize("name", sorted(TESTED))
def test_a_nan_inf_test_of_an_int8_value_is_refused_in_one_line(name):
    fn, call, inner = TESTED[name]
    cal = _inputs((1, 4, 8))
    if inner is not None:
        with torch.no_grad():
            assert not torch.isfinite(inner(cal[0][0])).all()     # torch's tested value holds NaN / inf
    with pytest.raises(CompileError) as e:
        compile_model(Call(fn).eval(), [cal[0][0]], cal)
    message = str(e.value)
    assert "\n" not in message and f"{call} (" in message and "NaN / inf" in message, message


# a division whose calibration samples hold inf, read by an inf test: the division runs in fp32
# (ptec.nonfinite_in_fp32, session 22), so the test is torch's (they were refused above before)
DIVISION_TESTED = {
    "isinf(1 / x.round())": lambda x: torch.isinf(1 / x.round()).float(),
    "isposinf(1 / |x|.round())": lambda x: torch.isposinf(1 / x.round().abs()).float() + x,
}


@pytest.mark.parametrize("name", sorted(DIVISION_TESTED))
def test_an_inf_test_of_a_division_runs_in_fp32(name, tmp_path):
    # measured: 0 and 0.66 output steps (the second adds x's int8 grid)
    fn = DIVISION_TESTED[name]
    cal = _inputs((1, 4, 8))
    with torch.no_grad():
        assert not torch.isfinite(1 / cal[0][0].round()).all()        # the division holds inf
    worst, _ = _worst(Call(fn).eval(), (1, 4, 8), tmp_path)
    assert worst <= 1.0, worst


@pytest.mark.parametrize("name", sorted(NAN_READ))
def test_a_nan_torch_gives_is_refused_not_computed(name):
    fn, call = NAN_READ[name]
    cal = _inputs((1, 4, 8))
    with pytest.raises(CompileError) as e:
        compile_model(Call(fn).eval(), [cal[0][0]], cal)
    message = str(e.value)
    assert "\n" not in message and call in message and "NaN" in message, message


# the tested value is fp32 (a tensor power x ** x: NaN for a negative base, on the portable kernel): the test reads it
FP32_TESTED = {
    "isnan(x ** x)": (lambda x: torch.isnan(torch.pow(x, x)).float() + x, 1.1),       # (a wrong bool: 20 steps)
    "nan_to_num(x ** x, 0, 3, -3)": (lambda x: torch.nan_to_num(torch.pow(x, x), 0.0, 3.0, -3.0), 1.0),
    "nansum(x ** x)": (lambda x: torch.nansum(torch.pow(x, x), 2), 3.0),
}


@pytest.mark.parametrize("name", sorted(FP32_TESTED))
def test_a_nan_test_of_an_fp32_value_is_torchs(name, tmp_path):
    fn, bound = FP32_TESTED[name]
    with torch.no_grad():
        assert torch.isnan(torch.pow(_inputs((1, 4, 8))[0][0], _inputs((1, 4, 8))[0][0])).any()
    worst, _ = _worst(Call(fn).eval(), (1, 4, 8), tmp_path)
    assert worst <= bound, worst


def test_functions_inside_their_domain_still_run(tmp_path):
    fn = lambda x: torch.sqrt(x.abs()) + torch.log(x.abs() + 0.5) + torch.isnan(x).float()   # noqa: E731
    worst, _ = _worst(Call(fn).eval(), (1, 4, 8), tmp_path)
    assert worst <= 3.0, worst


def test_a_where_that_drops_the_nan_still_runs(tmp_path):
    fn = lambda x: torch.where(x > 0.5, torch.sqrt(x), torch.zeros(1))       # noqa: E731
    worst, _ = _worst(Call(fn).eval(), (1, 4, 8), tmp_path)
    assert worst <= 1.5, worst


# -- 2. softmax without dim --------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(4, 8), (2, 4, 8), (2, 3, 4, 4)])
@pytest.mark.parametrize("which", ["softmax", "log_softmax", "softmin"])
def test_softmax_without_dim_takes_torchs_implicit_dim(which, shape, tmp_path):
    f = getattr(F, which)
    model = Call(lambda x: f(x)).eval()
    cal = _inputs(shape)
    with torch.no_grad():
        want = model(cal[0][0])
        dim = 0 if len(shape) == 3 else 1
        assert torch.allclose(want, f(cal[0][0], dim=dim))       # the implicit dim, as torch picks it
    if len(shape) == 3:          # over dim 0 of size 2
        assert shape[0] == 2
    worst, _ = _worst(model, shape, tmp_path)
    assert worst <= 2.0, worst         # (measured 1.76: the int8 softmax over a dim of 2; another dim: tens of steps)


# -- 3. degenerate scales ----------------------------------------------------------------------------------------

def test_an_always_zero_value_gets_a_unit_grid():
    scale, zp = affine_qparams(0.0, 0.0)
    assert scale == pytest.approx(1.0 / 255.0) and zp == -128
    scale, zp = affine_qparams(-2.0, 2.0)
    assert scale == pytest.approx(4.0 / 255.0)


DEGENERATE = {
    "where(constant all-False mask) + where": (
        lambda x: torch.where(torch.ones(1, 4, 8) != 1, x.relu(), torch.zeros_like(x))
        + torch.where(torch.ones(1, 4, 8) != -1, x, torch.zeros_like(x)), 0.5),
    "hinge_embedding_loss(x, ones)": (lambda x: F.hinge_embedding_loss(x, torch.ones(1, 4, 8), reduction="none"),
                                      0.5),
    "x.relu() * zeros_like(x) + x": (lambda x: x.relu() * torch.zeros_like(x) + x, 0.5),
}


@pytest.mark.parametrize("name", sorted(DEGENERATE))
def test_a_zero_range_value_makes_a_program_the_runtime_takes(name, tmp_path):
    fn, bound = DEGENERATE[name]
    worst, _ = _worst(Call(fn).eval(), (1, 4, 8), tmp_path)
    assert worst <= bound, worst


def test_a_requantization_shift_out_of_range_is_refused_at_compile_time():
    check_requant_shifts("cortex_m::quantized_mul.out", {"output_shift": -31}, ("mul (operator.mul)", "none"))
    check_requant_shifts("cortex_m::quantized_linear.out", {"requantize_shifts": [0, 31]})
    with pytest.raises(ValueError) as e:
        check_requant_shifts("cortex_m::quantized_mul.out", {"output_shift": -34}, ("mul (operator.mul)", "none"))
    assert "\n" not in str(e.value) and "mul (operator.mul)" in str(e.value) and "-34" in str(e.value)
    with pytest.raises(ValueError):
        check_requant_shifts("cortex_m::quantized_linear.out", {"requantize_shifts": [0, 32]})


# -- 4. cosine similarity and p-norm distances -------------------------------------------------------------------

class _Two(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        return self.m(x, x.flip(1) * 0.5 + 0.25)


DISTANCES = {
    # (2.15: the int8 rounding of x * 0.5 + 0.25 before the fp32 cosine)
    "cosine_similarity(x, x*0.5+0.25)": (lambda x: F.cosine_similarity(x, x * 0.5 + 0.25), [(1, 4, 8), (2, 4, 8)],
                                         2.5),
    # (2-element rows: the int8 input's rounding alone moves them by 2.2 steps)
    "cosine_similarity(chunks, dim=1)": (lambda x: F.cosine_similarity(*x.chunk(2, 1), dim=1), [(8, 4)], 2.5),
    "cosine_similarity(broadcast, eps)": (lambda x: F.cosine_similarity(x, x[:, :1], dim=2, eps=0.5),
                                          [(2, 4, 8)]),
    "pairwise_distance(p=3, keepdim)": (lambda x: F.pairwise_distance(x, x.flip(2), 3, keepdim=True),
                                        [(2, 4, 8)]),
    "pairwise_distance(p=0.5)": (lambda x: F.pairwise_distance(x, x.flip(1), 0.5), [(1, 4, 8)]),
    "triplet_margin_loss(p=3)": (lambda x: F.triplet_margin_loss(x, x.flip(1), x.flip(2), p=3,
                                                                 reduction="none"), [(2, 4, 8)]),
}


@pytest.mark.parametrize("name", sorted(DISTANCES))
def test_distances_are_within_a_step_or_two(name, tmp_path):
    fn, shapes, bound = (DISTANCES[name] + (2.0,))[:3]
    for shape in shapes:
        worst, res = _worst(Call(fn).eval(), shape, tmp_path)
        assert worst <= bound, (shape, worst)


def test_the_reported_cosine_row_is_torchs(tmp_path):
    """[8, 4] chunks: -0.364 where the int8 form gave -0.978."""
    fn = lambda x: F.cosine_similarity(*x.chunk(2, 1), dim=1)        # noqa: E731
    cal = _inputs((8, 4))
    res = compile_model(Call(fn).eval(), [cal[0][0]], cal)
    assert res.lowered.fallbacks          # computed in fp32
    from ptec import host_runtime
    from ptec.pte import parse_program
    x = _inputs((8, 4), n=1, seed=11)[0][0]
    got = host_runtime.run(parse_program(res.data), res.data, [x.numpy()], workdir=str(tmp_path))[0]
    want = fn(x).numpy()
    assert np.abs(got - want).max() <= 0.03, (got, want)


@pytest.mark.parametrize("module", [nn.CosineSimilarity(2), nn.CosineSimilarity(1, eps=1e-3),
                                    nn.PairwiseDistance(3.5), nn.PairwiseDistance(3.0, keepdim=True)],
                         ids=["CosineSimilarity(2)", "CosineSimilarity(1, eps)", "PairwiseDistance(3.5)",
                              "PairwiseDistance(3, keepdim)"])
def test_the_modules_too(module, tmp_path):
    worst, _ = _worst(_Two(module).eval(), (2, 4, 8), tmp_path)
    assert worst <= 2.0, worst
