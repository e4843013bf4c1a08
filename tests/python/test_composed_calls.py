"""Calls ptec has no kernel for, composed from what it runs (issue 15):
capture_composed (the *_scatter calls as writes through their view,
torch.gradient as a constant linear, cumulative_trapezoid with computed
sample points, cholesky_ex / cholesky_inverse / tensorinv / tensorsolve on
the fp32 linalg kernels), capture_householder (householder_product /
orgqr by aten::bmm.out) and capture_binary_tables (igamma, gammainc, zeta
of two functions of one value as one table; of two independent values, the
fp32 kernels of test_special_gamma.py).

torch is the oracle: int8 paths in output steps (test_module_coverage's
worst_steps, which also checks ptec-run against the reference interpreter),
fp32 linalg on a matrix input read in fp32 by relative error against
torch's float64 result. The forms ptec does not compute are refused in one
line naming the call and the reason."""
import numpy as np
import pytest
import torch

from ptec import host_runtime
from ptec.capture_composed import gradient_matrix
from ptec.compiler import CompileError, compile_model
from ptec.interpreter import run_program
from ptec.ir import UnsupportedOperator
from ptec.pte import parse_program
from model_checks import Call
from test_module_coverage import worst_steps


def samples(shape, lo, hi, n=6, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [(torch.rand(shape, generator=g) * (hi - lo) + lo,) for _ in range(n)]


def steps(fn, shape, lo, hi, tmp_path, seed=0):
    model = Call(fn).eval()
    cal = samples(shape, lo, hi, seed=seed)
    res = compile_model(model, [cal[0][0]], cal)
    return worst_steps(model, res, cal[:4], tmp_path)


def coords(n, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.cumsum(torch.rand(n, generator=g) + 0.25, 0)


C8, C4, C8B = coords(8, 1), coords(4, 2), coords(8, 3)       # constant coordinates (the model's tensors)

# (id, call of x [2, 4, 8], bound in output steps): int8 paths, inputs in [-3, 3]
INT8 = [
    ("diagonal_scatter", lambda x: torch.diagonal_scatter(x, x[..., 0] * 0.5, 0, 1, 2), 1.0),
    ("diagonal_scatter offset 2", lambda x: torch.diagonal_scatter(x, x[..., 1, :4] * 0.5, 2, 1, 2), 1.0),
    ("diagonal_scatter offset -1, dims 2, 1", lambda x: x.diagonal_scatter(x[:, 0, :4] - 1.0, -1, 2, 1), 1.5),
    ("select_scatter", lambda x: torch.select_scatter(x, x[:, 0] * 2, 1, 2), 1.0),
    ("select_scatter negative", lambda x: x.select_scatter(x[..., 0] * -1.0, -1, -3), 1.0),
    ("slice_scatter step", lambda x: torch.slice_scatter(x, x[..., ::2] * 2, 2, 0, 8, 2), 1.0),
    ("slice_scatter dim -2", lambda x: x.slice_scatter(x[:, 1:3] * 0.5, dim=-2, start=-3, end=3, step=1), 1.0),
    ("slice_scatter dim 0 of a batch", lambda x: torch.slice_scatter(x, x[1:] * 0.5, 0, 1, 2, 1), 1.0),
    ("as_strided_scatter", lambda x: torch.as_strided_scatter(x, x[0, 0, :4] * 2, (4,), (8,)), 1.0),
    ("as_strided_scatter offset", lambda x: torch.as_strided_scatter(x, x[0, :2, :3] * 2, (2, 3), (1, 8), 5), 1.0),
    ("scatter then read", lambda x: torch.select_scatter(x, x[:, 0] * 2, 1, 2)[:, 2:].sum(1) + x[:, 2], 2.5),
    ("gradient", lambda x: torch.gradient(x, dim=2)[0], 1.5),
    ("gradient dim -2 edge 2", lambda x: torch.gradient(x, dim=-2, edge_order=2)[0], 1.5),
    ("gradient spacing 0.5", lambda x: torch.gradient(x, spacing=0.5, dim=1)[0], 1.5),
    ("gradient all dims [1]", lambda x: torch.gradient(x[0])[1], 1.5),
    ("gradient list spacing", lambda x: torch.gradient(x, spacing=[2.0, 0.25], dim=[1, 2])[1], 1.5),
    ("gradient coordinates edge 1", lambda x: torch.gradient(x, spacing=(C8,), dim=2)[0], 1.5),
    ("gradient coordinates edge 2", lambda x: torch.gradient(x, spacing=(C4, C8B), dim=(1, 2),
                                                             edge_order=2)[0], 1.5),
    ("gradient arange spacing", lambda x: torch.gradient(x, spacing=(torch.arange(8.0) ** 1.5,), dim=-1)[0], 1.5),
    ("gradient both pieces", lambda x: torch.gradient(x, dim=(1, 2))[0] + torch.gradient(x, dim=(1, 2))[1], 1.5),
    ("cumulative_trapezoid 1-D x", lambda x: torch.cumulative_trapezoid(x, x[0, 0].abs().cumsum(0)), 3.0),
    ("cumulative_trapezoid x of y's shape, dim 1", lambda x: torch.cumulative_trapezoid(
        x, (x * 0.3).exp().cumsum(1), dim=1), 2.5),
    ("cumulative_trapezoid 2-D x padded, dim 2", lambda x: torch.cumulative_trapezoid(
        x, (x[0] * 0.3).exp().cumsum(1), dim=2), 3.0),
    ("trapezoid computed x", lambda x: torch.trapezoid(x, (x * 0.3).exp().cumsum(-1)), 2.5),
    ("trapz 1-D computed x, dim 1", lambda x: torch.trapz(x, x[0, :, 0].abs().cumsum(0), dim=1), 3.0),
]


@pytest.mark.parametrize("name,fn,bound", INT8, ids=[r[0] for r in INT8])
def test_int8_within_bound_of_torch(name, fn, bound, tmp_path):
    worst = steps(fn, (2, 4, 8), -3.0, 3.0, tmp_path)
    assert worst <= bound, f"{name}: {worst:.2f} output steps (bound {bound})"


@pytest.mark.parametrize("edge", [1, 2])
@pytest.mark.parametrize("spacing", [1.0, 0.3, "coordinates"])
def test_gradient_matrix_is_torchs_gradient(edge, spacing):
    """The constant matrix applied to a float64 vector is torch.gradient of it."""
    n = 7
    s = coords(n, 5).double() if spacing == "coordinates" else spacing
    v = torch.randn(3, n, dtype=torch.float64, generator=torch.Generator().manual_seed(4))
    want = torch.gradient(v, spacing=(s,), dim=1, edge_order=edge)[0]
    got = v @ gradient_matrix(n, s, edge).T
    assert torch.allclose(got, want, rtol=1e-12, atol=1e-12)


TABLES = [
    ("igamma(x, 0.5 x + 0.25)", lambda x: torch.igamma(x, x * 0.5 + 0.25), 1.5),
    ("igammac(x, x)", lambda x: x.igammac(x), 1.5),
    ("special.gammainc(2x, x + 1)", lambda x: torch.special.gammainc(x * 2, x + 1), 1.5),
    ("special.gammaincc(x.exp(), x)", lambda x: torch.special.gammaincc(x.exp(), x), 1.5),
    ("special.zeta(x + 1.5, x * 0 + 1)", lambda x: torch.special.zeta(x + 1.5, x * 0 + 1.0), 1.5),
    ("special.zeta(x + 1.5, sigmoid(x) + 1)", lambda x: torch.special.zeta(x + 1.5, torch.sigmoid(x) + 1), 2.5),
]


@pytest.mark.parametrize("name,fn,bound", TABLES, ids=[r[0] for r in TABLES])
def test_two_functions_of_one_value_are_one_table(name, fn, bound, tmp_path):
    model = Call(fn).eval()
    cal = samples((1, 4, 8), 0.2, 3.0)
    res = compile_model(model, [cal[0][0]], cal)
    assert [n.op for n in res.graph.nodes if n.op not in ("input", "output")].count("elementwise") >= 1
    worst = worst_steps(model, res, cal[:4], tmp_path)
    assert worst <= bound, f"{name}: {worst:.2f} output steps (bound {bound})"


def spd(n, seed, count=3):
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(count):
        m = torch.rand(2, 3, n, n, generator=g) * 2 - 1
        out.append((m @ m.mT + n * torch.eye(n),))
    return out


def lower(n, seed, count=3):
    return [(torch.linalg.cholesky(a),) for (a,) in spd(n, seed, count)]


def plain(shape, seed, count=3):
    g = torch.Generator().manual_seed(seed)
    return [(torch.rand(shape, generator=g) * 2 - 1,) for _ in range(count)]


def well(shape, seed, count=3):
    n = shape[-1]
    return [(x + 3 * torch.eye(n),) for (x,) in plain(shape, seed, count)]


class Call2(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, a, b):
        return self.fn(a, b)


def reflectors(m, n, k, seed, count=3):
    """(A [2, m, n], tau [2, k]) with tau in LAPACK's range (1 to 2, or 0)."""
    out = []
    for (a,) in plain((2, m, n), seed, count):
        tau = plain((2, k), seed + 50, 1)[0][0].abs() + 1.0
        tau[..., :1] = 0.0 if k > 2 else tau[..., :1]       # an identity reflector among them
        out.append((a, tau))
    return out


def system(shape, bshape, seed, count=3):
    out = []
    for (a,) in plain(shape, seed, count):
        n = int(np.prod(bshape))
        a = (a.reshape(n, n) + 3 * torch.eye(n)).reshape(shape)
        out.append((a, plain(bshape, seed + 60, 1)[0][0]))
    return out


def as_pairs(inputs):
    return [(x, torch.zeros(1)) for (x,) in inputs]


# (id, call of (a, b), inputs, relative bound vs torch in float64): fp32 kernels on fp32 inputs
FP32 = [
    ("cholesky_ex L 4x4", lambda a, _: torch.linalg.cholesky_ex(a).L, as_pairs(spd(4, 1)), 1e-6),
    ("cholesky_ex upper 5x5", lambda a, _: torch.linalg.cholesky_ex(a, upper=True)[0], as_pairs(spd(5, 2)), 1e-6),
    ("cholesky_inverse 4x4", lambda a, _: torch.cholesky_inverse(a), as_pairs(lower(4, 3)), 1e-6),
    ("cholesky_inverse upper 3x3", lambda a, _: a.cholesky_inverse(upper=True),
     [(L.mT.contiguous(), torch.zeros(1)) for (L,) in lower(3, 4)], 1e-6),
    ("cholesky_inverse 6x6", lambda a, _: torch.cholesky_inverse(a), as_pairs(lower(6, 5)), 1e-6),
    ("tensorinv ind 1", lambda a, _: torch.linalg.tensorinv(a, 1),
     [(x.reshape(6, 2, 3), torch.zeros(1)) for (x,) in well((6, 6), 6)], 1e-6),
    ("tensorinv ind 2 of 2x2x2x2", lambda a, _: torch.linalg.tensorinv(a),
     [(x.reshape(2, 2, 2, 2), torch.zeros(1)) for (x,) in well((4, 4), 7)], 1e-6),
    ("tensorsolve", lambda a, b: torch.linalg.tensorsolve(a, b), system((2, 3, 6), (2, 3), 8), 1e-6),
    ("tensorsolve dims", lambda a, b: torch.linalg.tensorsolve(a, b, dims=(0,)),
     [(a.permute(3, 0, 1, 2).contiguous(), b) for a, b in system((2, 3, 2, 3), (2, 3), 9)], 1e-6),
    ("householder_product 5x4 k 3", torch.linalg.householder_product, reflectors(5, 4, 3, 10), 1e-6),
    ("householder_product 4x4 k 4", torch.linalg.householder_product, reflectors(4, 4, 4, 11), 1e-6),
    ("householder_product k 0", torch.linalg.householder_product, reflectors(4, 3, 0, 12), 0.0),
    ("orgqr 6x3 k 2", torch.orgqr, reflectors(6, 3, 2, 13), 1e-6),
    ("Tensor.orgqr 3x3 k 3", lambda a, t: a.orgqr(t), reflectors(3, 3, 3, 14), 1e-6),
]


def host2(res, a, b, tmp_path):
    prog = parse_program(res.data)
    got = host_runtime.run(prog, res.data, [a.numpy(), b.numpy()], workdir=str(tmp_path))[0]
    want = run_program(prog, [a.numpy(), b.numpy()])[0]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, equal_nan=True)
    return got


@pytest.mark.parametrize("name,fn,inputs,bound", FP32, ids=[r[0] for r in FP32])
def test_fp32_relative_error_against_torch(name, fn, inputs, bound, tmp_path):
    model = Call2(fn).eval()
    res = compile_model(model, list(inputs[0]), inputs)
    assert res.lowered.fallbacks, "an fp32 path"
    for a, b in inputs:
        got = host2(res, a, b, tmp_path)
        with torch.no_grad():
            ref = fn(a.double(), b.double()).numpy()
        assert got.shape == ref.shape
        err = np.abs(got - ref).max() / max(np.abs(ref).max(), 1e-30)
        assert err <= bound, f"{name}: relative error {err:.2e} (bound {bound})"


def test_orgqr_of_geqrf_is_torchs_q(tmp_path):
    """householder_product of torch.geqrf's own reflectors is linalg.qr's Q."""
    a = torch.rand(2, 5, 3, generator=torch.Generator().manual_seed(15)) * 2 - 1
    h, tau = torch.geqrf(a)
    res = compile_model(Call2(torch.linalg.householder_product).eval(), [h, tau], [(h, tau)])
    got = host2(res, h, tau, tmp_path)
    assert np.abs(got - torch.linalg.qr(a.double())[0].numpy()).max() <= 1e-5


# (id, call, shape, range, words the one-line refusal says)
REFUSED = [
    ("slice_scatter without step", lambda x: torch.slice_scatter(x, x[:, 1:2] * 0.5, dim=1, start=1, end=3), (1, 4, 8),
     "reads an undefined step"),
    # (coordinates computed from the input run: test_small_gaps.py)
    ("gradient of drawn coordinates", lambda x: torch.gradient(x, spacing=(torch.rand(8).cumsum(0),), dim=2)[0],
     (1, 4, 8), "its spacing is not a constant"),
    # (torch.linalg.ldl_factor / ldl_factor_ex run: test_linalg_ldl.py; an ldl_solve of an LD the program did not
    # factor stays refused)
    ("ldl_solve of a given LD", lambda x: torch.linalg.ldl_solve(x[0] + x[0].mT, torch.arange(1, 5, dtype=torch.int32),
                                                                 x[0]), (1, 4, 4), "of one torch.linalg.ldl_factor"),
    # (igamma / zeta of two independent values run in fp32: test_special_gamma.py)
]


@pytest.mark.parametrize("name,fn,shape,says", REFUSED, ids=[r[0] for r in REFUSED])
def test_refused_in_one_line(name, fn, shape, says):
    cal = samples(shape, -2.0, 2.0, n=2)
    with pytest.raises((CompileError, UnsupportedOperator)) as e:
        compile_model(Call(fn).eval(), [cal[0][0]], cal)
    assert says in str(e.value) and "\n" not in str(e.value), str(e.value)
