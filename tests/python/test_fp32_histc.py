"""torch.histc(x, bins) over x's own range (min == max, torch's default)
(ptec.capture_fp32_histc, issue 15). Oracle: torch.histc on the values the
program's steps read (the float input, or an int8 value dequantized on its
compiled grid); the counts come out on an int8 grid: within half an output
step, and rounded they must equal torch's counts exactly."""
import numpy as np
import pytest
import torch

from ptec import host_runtime
from ptec.compiler import CompileError, compile_model
from ptec.pte import parse_program
from model_checks import Call
from test_function_coverage import inputs


def _compile(fn, shape=(1, 4, 8), lo=-3.0, hi=3.0):
    calibration = inputs(shape, lo, hi)
    return calibration, compile_model(Call(fn).eval(), [calibration[0][0]], calibration)


def _run(res, x, tmp_path):
    return np.asarray(host_runtime.run(parse_program(res.data), res.data, [x.numpy()], workdir=str(tmp_path))[0],
                      np.float64)


def _on_grid(t, qparams):
    s, z = float(qparams[0]), int(qparams[1])
    q = torch.clamp(torch.round(t.double() / s) + z, -128, 127)
    return (q - z).float() * torch.tensor(s, dtype=torch.float32)


@pytest.mark.parametrize("bins", [1, 5, 13, 100, 256, 257, 300, 1000])     # > 256: chunks of 256 bins
def test_counts_are_torchs(bins, tmp_path):
    fn = lambda x: torch.histc(x, bins)          # noqa: E731
    calibration, res = _compile(fn)
    assert any(n.attrs.get("fp32") for n in res.graph.nodes)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    for (x,) in calibration[:4]:
        got, want = _run(res, x, tmp_path), fn(x).numpy()
        assert got.shape == want.shape
        assert np.abs(got - want).max() <= 0.5 * step + 1e-6, (got, want)
        assert (np.round(got) == want).all()
        assert got.sum() == pytest.approx(x.numel(), abs=0.5 * step * bins)


def test_after_an_int8_step(tmp_path):
    """tanh (an int8 LUT) then histc: torch's bins of the tanh's values as the program holds them."""
    fn = lambda x: torch.histc(torch.tanh(x), 6)          # noqa: E731
    calibration, res = _compile(fn)
    xg = res.graph.node(res.graph.inputs[0]).qparams
    tg = next(n for n in res.graph.nodes if n.op == "tanh").qparams
    for (x,) in calibration[:4]:
        got = _run(res, x, tmp_path)
        want = torch.histc(_on_grid(torch.tanh(_on_grid(x, xg)), tg), 6).numpy()
        assert (np.round(got) == want).all(), (got, want)


def test_an_equal_range_is_widened_by_one_as_torch(tmp_path):
    """All elements equal: torch takes [v - 1, v + 1]; every element lands in the middle bin."""
    fn = lambda x: torch.histc(x, 4)          # noqa: E731
    _, res = _compile(fn)
    x = torch.full((1, 4, 8), 0.75)
    got, want = _run(res, x, tmp_path), fn(x).numpy()
    assert want[2] == 32 and (np.round(got) == want).all(), (got, want)


@pytest.mark.parametrize("shape, bins", [((1, 16, 16), 4), ((1, 40, 32), 100), ((2, 30, 17), 7), ((1, 40, 32), 700)])
def test_many_elements_counted_exactly(shape, bins, tmp_path):
    """256 to 1,280 elements (an int8 count grid held at most 254): the
    memberships counted in int64, then float32: torch's counts exactly,
    with ties (values on a grid of tenths, many at a bin's edge)."""
    fn = lambda x: torch.histc(x, bins)          # noqa: E731
    calibration, res = _compile(fn, shape=shape)
    g = torch.Generator().manual_seed(bins)
    xs = [c[0] for c in calibration[:2]] + [torch.randint(-30, 31, shape, generator=g).float() / 10]
    for x in xs:                  # the fp32 steps read the float input as it is
        got, want = _run(res, x, tmp_path), torch.histc(x, bins).numpy()
        assert got.dtype == np.float64 and (got == want).all(), (got, want)
        assert got.sum() == x.numel()


def test_more_bins_than_the_limit_refused_in_one_line():
    from ptec.capture_fp32_histc import MAX_BINS
    from ptec.ir import UnsupportedOperator
    with pytest.raises((CompileError, UnsupportedOperator)) as e:
        _compile(lambda x: torch.histc(x, MAX_BINS + 1))
    assert "\n" not in str(e.value) and "histc (torch.histc): over x's own range" in str(e.value), str(e.value)
