"""Element-wise torch functions of one value with constant other arguments
as 256-entry tables (ptec.capture_unary_tables, issue 15): torch float is
the oracle, bounds in output steps on the host runtime (whose bytes
worst_steps checks against the reference interpreter); the probe that
decides which calls qualify; torch's NaN and inf under ptec's non-finite
rules (nextafter / frexp are no tables: test_float_bits.py)."""
import numpy as np
import pytest
import torch

from ptec.backends.cortex_m.kernels import lut_table
from ptec.capture import capture
from ptec.capture_unary_tables import evaluate, is_elementwise
from ptec.compiler import compile_model
from model_checks import cli_refusal
from test_module_coverage import worst_steps
from model_checks import Call

S = (1, 4, 8)
sp = torch.special

# call of x (x uniform in [lo, hi)), the range, the bound in output steps (measured worst in comments)
TABLES = {
    # a function of x + 1 reads it on a grid from 0 (an input step of 2 / 255): steep ones move by their slope
    "torch.polygamma(1, x + 1)": (lambda x: torch.polygamma(1, x + 1), (0.0, 1.0), 2.0),              # 1.44
    "special.polygamma(2, x + 1)": (lambda x: sp.polygamma(2, x + 1), (0.0, 1.0), 3.0),               # 2.27
    "Tensor.polygamma(3)": (lambda x: (x + 1).polygamma(3), (0.0, 1.0), 4.0),                         # 3.44
    "torch.mvlgamma(x + 2, 2)": (lambda x: torch.mvlgamma(x + 2, 2), (0.0, 1.0), 2.5),                # 1.88
    "special.multigammaln(x + 2, 3)": (lambda x: sp.multigammaln(x + 2, 3), (0.0, 1.0), 1.5),         # 1.27
    "special.zeta(x + 2, 1.0)": (lambda x: sp.zeta(x + 2, 1.0), (0.0, 1.0), 1.5),                     # 1.13
    "special.zeta(2.0, x + 1)": (lambda x: sp.zeta(2.0, x + 1), (0.0, 1.0), 2.0),                     # 1.44
    # sums of two tables: two roundings
    "special.bessel_j0/j1": (lambda x: sp.bessel_j0(x) + sp.bessel_j1(x), (-3.0, 3.0), 2.0),          # 1.75
    "special.bessel_y0/y1": (lambda x: sp.bessel_y0(x) - sp.bessel_y1(x) * 0.1, (0.5, 3.0), 2.5),     # 2.03
    "special.modified_bessel_i0/i1": (lambda x: sp.modified_bessel_i0(x) + sp.modified_bessel_i1(x), (-2.0, 2.0),
                                      2.0),                                                           # 1.50
    "special.modified_bessel_k0/k1": (lambda x: sp.modified_bessel_k0(x) + sp.modified_bessel_k1(x) * 0.1,
                                      (0.5, 3.0), 2.5),                                               # 2.03
    "special.scaled_modified_bessel_k0/k1": (lambda x: sp.scaled_modified_bessel_k0(x)
                                             + sp.scaled_modified_bessel_k1(x), (0.5, 3.0), 2.0),    # 1.68
    "special.spherical_bessel_j0": (lambda x: sp.spherical_bessel_j0(x), (-6.0, 6.0), 2.5),           # 2.19
    "special.airy_ai": (lambda x: sp.airy_ai(x), (-4.0, 2.0), 3.0),                                   # 2.62
    "special.chebyshev_polynomial_t/u(x, 3)": (lambda x: sp.chebyshev_polynomial_t(x, 3)
                                               + sp.chebyshev_polynomial_u(x, 3), (-1.0, 1.0), 3.5),  # 2.98
    "special.hermite_polynomial_h/he(x, 4)": (lambda x: sp.hermite_polynomial_h(x, 4)
                                              + sp.hermite_polynomial_he(x, 4), (-2.0, 2.0), 5.5),    # 4.68: slope 60
    "special.laguerre/legendre polynomials": (lambda x: sp.laguerre_polynomial_l(x, 2)
                                              + sp.legendre_polynomial_p(x, 3), (-1.0, 1.0), 2.0),    # 1.66
    # a one-element constant tensor as the other argument
    "special.gammainc/gammaincc(x, tensor(2.0))": (lambda x: sp.gammainc(x, torch.tensor(2.0))
                                                   + sp.gammaincc(torch.tensor([1.5]), x), (0.0, 3.0), 2.0),  # 1.28
    "torch.fix, Tensor.fix": (lambda x: torch.fix(x) + x.fix() * 0.5, (-3.0, 3.0), 1.0),               # 0.50
    "torch.angle of a real value": (lambda x: torch.angle(x) + x, (-1.0, 1.0), 1.0),                  # 0.76
}


def inputs(lo, hi, n=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [(torch.rand(S, generator=g) * (hi - lo) + lo,) for _ in range(n)]


@pytest.mark.parametrize("name", sorted(TABLES))
def test_table_within_its_bound(name, tmp_path):
    fn, (lo, hi), bound = TABLES[name]
    model = Call(fn).eval()
    calibration = inputs(lo, hi)
    res = compile_model(model, [calibration[0][0]], calibration)
    assert not res.lowered.fallbacks
    assert any(n.op == "elementwise" and n.attrs.get("name") == "torch_table" for n in res.graph.nodes)
    worst = worst_steps(model, res, calibration[:4], tmp_path)
    print(f"{name}: {worst:.2f} output steps")
    assert worst <= bound + 1e-3, f"{name}: {worst:.2f} output steps from float (bound {bound})"


def test_probe_takes_element_wise_functions_only():
    assert is_elementwise(lambda x: sp.bessel_j0(x))
    assert not is_elementwise(lambda x: torch.softmax(x, 0))
    assert not is_elementwise(lambda x: torch.cumsum(x, 0))
    assert not is_elementwise(lambda x: x * torch.rand_like(x))     # a new draw each call
    assert not is_elementwise(lambda x: x.flip(0))
    assert not is_elementwise(lambda x: (x > 0).long())               # not a float result


def test_not_element_wise_calls_stay_refused():
    """A call of one value that the probe finds not element-wise (a running
    product along the last dim) is no table: it stays a call ptec refuses."""
    g = capture(Call(lambda x: torch.special.log_softmax(x, -1) * 0 + torch.cummin(x, -1)[0]).eval(),
                [torch.rand(S)])
    assert not any(n.attrs.get("name") == "torch_table" for n in g.nodes)


def _checked_mvlgamma(v):
    """torch.mvlgamma(v, 2) with torch 2.x's domain check (1.13 gives numbers)."""
    if bool((v <= 0.5).any()):
        raise RuntimeError("All elements must be greater than (p-1)/2")
    return torch.mvlgamma(v, 2)


def test_raising_elements_are_nan():
    x = torch.tensor([0.2, 0.6, 3.0])
    got = evaluate(_checked_mvlgamma, x)
    assert torch.isnan(got[0]) and torch.allclose(got[1:], torch.mvlgamma(x[1:], 2))
    assert is_elementwise(_checked_mvlgamma)            # probed where it does not raise


def test_lut_nan_entries_take_the_nearest_value():
    # sqrt without its clamp: NaN below 0 on a grid from -1 to ~1
    table = lut_table(lambda v: np.where(v >= 0, np.sqrt(np.abs(v)), np.nan), 1 / 127, 0, 1 / 255, -128)
    at_zero = table[128]
    assert (table[:128] == at_zero).all()                # the negatives: the value at the domain's edge, sqrt(0)
    assert table[255] == 127 and table[129] > at_zero


def test_nan_on_calibration_inputs_is_refused(tmp_path):
    """zeta(s, 1) is NaN for s < 1: calibration inputs there give NaN that
    reaches the output, which no int8 value holds: refused, never a number."""
    line = cli_refusal(tmp_path, "import torch\n"
                                 "class M(torch.nn.Module):\n"
                                 "    def forward(self, x):\n"
                                 "        return torch.special.zeta(x * 4, 1.0) + x\n"
                                 "def model():\n"
                                 "    return M(), (torch.rand(1, 4, 8),)\n")
    assert "gives NaN on the calibration inputs" in line, line


def test_nan_outside_calibration_does_not_move_outputs(tmp_path):
    """zeta(x + 2, 1): the input grid reaches 0, where torch's zeta is NaN
    (s < 1) or inf (s = 1); those entries are never used by inputs calibration
    saw, and the rest are torch's."""
    model = Call(lambda x: sp.zeta(x + 2, 1.0)).eval()
    calibration = inputs(0.0, 1.0)
    res = compile_model(model, [calibration[0][0]], calibration)
    n = next(n for n in res.graph.nodes if n.attrs.get("name") == "torch_table")
    s, z = res.graph.node(n.inputs[0]).qparams
    grid = (np.arange(-128, 128) - z) * s
    assert grid.min() < 1.0                              # the NaN region is on the grid
    assert worst_steps(model, res, calibration[:4], tmp_path) <= 1.5      # 1.13, as in TABLES


# (torch.nextafter and torch.frexp, refused here before, run on fp32 kernels: test_float_bits.py)


def test_table_of_an_fp32_value_reads_it_quantized(tmp_path):
    """A table's input from an fp32 layer (log_softmax) is quantized on its
    calibrated grid first, as for every LUT (lowering refuses it there if
    its calibration held NaN or inf that reach the outputs)."""
    model = Call(lambda x: sp.bessel_j0(torch.log_softmax(x, -1))).eval()
    calibration = inputs(-3.0, 3.0)
    res = compile_model(model, [calibration[0][0]], calibration)
    assert res.lowered.fallbacks and not any("torch_table" in f or "bessel" in f for f in res.lowered.fallbacks)
    assert worst_steps(model, res, calibration[:4], tmp_path) <= 2.0      # 1.53: bessel_j0 of values to -9


def test_tables_on_the_board(tmp_path):
    """The emulated M55 runs the tables (and a loss of capture_losses beside them) as the reference
    interpreter does."""
    from model_checks import board_matches_reference
    model = Call(lambda x: sp.bessel_j0(x) + torch.polygamma(1, x.abs() + 1) * 0.5
                 + torch.nn.functional.mse_loss(x, torch.tanh(x), reduction="none")).eval()
    calibration = inputs(-3.0, 3.0)
    res = compile_model(model, [calibration[0][0]], calibration)
    assert not res.lowered.fallbacks
    board_matches_reference(res.data, inputs(-3.0, 3.0, 1, seed=5)[0][0].numpy(), "cortex-m55", tmp_path)
