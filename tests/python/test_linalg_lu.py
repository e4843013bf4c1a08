"""ptec::linalg_lu.out (issue 15): the LU factorisation with partial
pivoting of [..., m, n] in fp32 (the packed LU, the int32 pivots, P, L, U
by `which`), and the calls routed to it (capture_matrix_functions):
torch.linalg.lu_factor / lu_factor_ex, torch.linalg.lu, torch.lu /
Tensor.lu, torch.lu_unpack, and torch.linalg.lu_solve / torch.lu_solve
(on ptec::linalg_solve.out, the same LU of the factored A).

Oracles that hold for any valid answer: P a permutation matrix, L unit
lower trapezoidal with |L_ij| <= 1 (partial pivoting), U upper
trapezoidal (exact zeros outside the triangles), and the backward error
|P L U - A| <= RES k EPS (|P| |L| |U|) entry by entry (k = min(m, n), EPS
= FLT_EPSILON; LU's componentwise bound). Against torch: the pivots equal
torch's (LAPACK getrf's rule, the first largest |entry|) wherever the
largest is not tied to rounding, and the factors within FWD k EPS of
torch's float64 ones, relative to max(|A|, |LU|) entry by entry, on
matrices whose leading minors are well-conditioned (all but Hilbert's). The host runtime's bytes are
the reference interpreter's (ptec.reference.linalg), checked on every
kernel run."""
import numpy as np
import pytest
import torch

from ptec import host_runtime
from ptec.compiler import CompileError, compile_model
from ptec.interpreter import run_program
from ptec.ir import UnsupportedOperator
from ptec.pte import parse_program
from ptec.pte.program_builder import ProgramBuilder
from ptec.pte.schema import ScalarType
from ptec.pte.writer import serialize_program
from model_checks import Call

EPS = float(np.finfo(np.float32).eps)
RES, FWD = 4.0, 8.0


def rand(shape, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).numpy()


def lu_on_host(x: np.ndarray, which: int, tmp_path) -> np.ndarray:
    """ptec::linalg_lu.out's `which` of x on the host runtime, checked byte
    for byte against the reference interpreter."""
    m, n = x.shape[-2:]
    k = min(m, n)
    shape = [(m, n), (k,), (m, m), (m, k), (k, n)][which]
    b = ProgramBuilder()
    t = b.tensor(ScalarType.FLOAT, list(x.shape))
    y = b.tensor(ScalarType.INT if which == 1 else ScalarType.FLOAT, list(x.shape[:-2]) + list(shape))
    b.call("ptec::linalg_lu.out", self=t, which=which, out=y)
    b.set_io([t], [y])
    data = serialize_program(b.build())
    prog = parse_program(data)
    arrays = [np.ascontiguousarray(x, np.float32)]
    got = host_runtime.run(prog, data, arrays, workdir=str(tmp_path))[0]
    want = run_program(prog, arrays)[0]
    assert got.dtype == (np.int32 if which == 1 else np.float32)
    assert got.tobytes() == want.tobytes(), "ptec-run differs from the reference interpreter"
    return got


def all_of(x, tmp_path):
    return [lu_on_host(x, which, tmp_path) for which in range(5)]


def kappa(a: np.ndarray) -> np.ndarray:
    return torch.linalg.cond(torch.from_numpy(np.asarray(a, np.float64))).numpy()


def graded(n, seed):
    """Rows scaled 10^-3 .. 10^3: partial pivoting must pick the large ones."""
    return rand((2, n, n), seed) * np.float32(10.0) ** np.linspace(-3, 3, n, dtype=np.float32)[:, None]


def hilbert(n):
    return (1.0 / (np.arange(n)[:, None] + np.arange(n)[None, :] + 1)).astype(np.float32)[None]


def check_factors(a, lu, piv, p, low, up):
    """The oracles any valid LU with partial pivoting meets."""
    m, n = a.shape[-2:]
    k = min(m, n)
    assert piv.shape == a.shape[:-2] + (k,) and ((piv >= np.arange(1, k + 1)) & (piv <= m)).all(), piv
    # P: a permutation matrix, the swaps of piv applied in order
    assert set(np.unique(p)) <= {0.0, 1.0} and (p.sum(-1) == 1).all() and (p.sum(-2) == 1).all()
    perm = np.broadcast_to(np.arange(m), a.shape[:-2] + (m,)).copy().reshape(-1, m)
    for b, row in enumerate(piv.reshape(-1, k)):
        for j, q in enumerate(row):
            perm[b, [j, q - 1]] = perm[b, [q - 1, j]]
    # row r of P^T A is row perm[r] of A: P[perm[r], r] = 1
    assert (np.take_along_axis(p.reshape(-1, m, m), perm[:, None, :], 1) == 1).all(), "P is not the pivots' permutation"
    # L, U: the packed LU's triangles, L's diagonal 1 and |L| <= 1
    r, c = np.arange(m)[:, None], np.arange(n)[None, :]
    assert (low == np.where(c < r, lu, np.where(c == r, 1.0, 0.0))[..., :, :k]).all()
    assert (up == np.where(c >= r, lu, 0.0)[..., :k, :]).all()
    finite = np.isfinite(a).all(axis=(-2, -1))
    assert (np.abs(low[finite]) <= 1).all(), "a multiplier above 1: not the largest pivot"
    # backward error, entry by entry
    p64, l64, u64 = (np.asarray(t, np.float64) for t in (p, low, up))
    err = np.abs(p64 @ l64 @ u64 - a)[finite]
    bound = (RES * k * EPS * (p64 @ np.abs(l64) @ np.abs(u64)))[finite]
    assert (err <= bound + 1e-300).all(), f"|P L U - A| {np.max(err / np.maximum(bound, 1e-300)):.2f} of its bound"


# (id, matrices A)
MATRICES = [
    ("1x1", rand((4, 1, 1), 201)),
    ("2x2 batched", rand((3, 2, 2), 202)),
    ("5x5 4-D batch", rand((2, 3, 5, 5), 203)),
    ("2-D 6x6", rand((6, 6), 204)),
    ("40x40", rand((2, 40, 40), 205)),
    ("graded rows 7x7", graded(7, 206)),
    ("Hilbert 6x6 (cond 1.5e7)", hilbert(6)),
    ("tall 7x3", rand((2, 7, 3), 207)),
    ("wide 3x7", rand((2, 3, 7), 208)),
    ("Nx1", rand((2, 5, 1), 209)),
    ("1xN", rand((2, 1, 5), 210)),
    ("large entries", rand((2, 5, 5), 211) * np.float32(1e30)),
    ("tiny entries", rand((2, 5, 5), 212) * np.float32(1e-30)),
]


@pytest.mark.parametrize("name,a", MATRICES, ids=[m[0] for m in MATRICES])
def test_lu_matches_torch(name, a, tmp_path):
    lu, piv, p, low, up = all_of(a, tmp_path)
    check_factors(a, lu, piv, p, low, up)
    # the pivots are torch's (float32 and float64: none of these is near a tie), the factors torch's float64 ones
    assert (piv == torch.linalg.lu_factor(torch.from_numpy(a))[1].numpy()).all(), "pivots differ from LAPACK's"
    a64 = torch.from_numpy(a.astype(np.float64))
    tlu, tpiv = torch.linalg.lu_factor(a64)
    assert (piv == tpiv.numpy()).all()
    m, n = a.shape[-2:]
    k = min(m, n)
    scale = np.maximum(np.abs(a).max(axis=(-2, -1), keepdims=True), np.abs(tlu.numpy()))
    if "Hilbert" not in name:
        # (measured at most 1.94 k EPS here; the Hilbert matrix's factors move with its ill-conditioned leading
        # minors: 128 k EPS at cond 1.4e7, its backward error above the check that holds)
        assert (np.abs(lu - tlu.numpy()) <= FWD * k * EPS * scale).all(), "LU not torch's float64 one"
    assert (p == torch.linalg.lu(a64).P.numpy()).all()


def test_singular_matrices_factor_as_lu_factor_ex(tmp_path):
    """A zero column is skipped (its pivot itself, nothing eliminated), as
    LAPACK's getrf: torch.linalg.lu_factor_ex's factors and pivots exactly
    (torch.linalg.lu_factor raises on them; ptec gives the factors, as
    lu_factor_ex and linalg.lu do)."""
    a = np.array([[[0, 0, 1], [0, 0, 2], [0, 3, 4]],              # zero first column
                  [[1, 2, 3], [2, 4, 6], [1, 1, 1]],              # rank 2: U's last pivot 0
                  [[0, 0, 0], [0, 0, 0], [0, 0, 0]],              # zero
                  [[2, 1, 0], [4, 2, 0], [6, 1, 0]]], np.float32)   # zero last column
    lu, piv, p, low, up = all_of(a, tmp_path)
    tlu, tpiv, info = torch.linalg.lu_factor_ex(torch.from_numpy(a))
    assert (info != 0).all()
    assert (piv == tpiv.numpy()).all() and np.array_equal(lu, tlu.numpy())
    assert (p == torch.linalg.lu(torch.from_numpy(a)).P.numpy()).all()
    check_factors(a, lu, piv, p, low, up)
    with pytest.raises(RuntimeError):
        torch.linalg.lu_factor(torch.from_numpy(a))


def test_pivoting_picks_the_first_largest_entry(tmp_path):
    """[[1e-8, 1], [1, 1]]: row 2 is the pivot (without it the elimination
    loses every digit); ties and equal magnitudes of either sign: the first,
    as getrf's idamax (torch's pivots exactly)."""
    a = np.array([[[1e-8, 1], [1, 1]], [[1, 2], [1, 3]], [[-2, 1], [2, 5]], [[1, 4], [-3, 3]]], np.float32)
    lu, piv, _, _, up = all_of(a, tmp_path)
    assert piv.tolist() == [[2, 2], [1, 2], [1, 2], [2, 2]]
    assert (piv == torch.linalg.lu_factor(torch.from_numpy(a))[1].numpy()).all()
    assert up[0, 1, 1] == np.float32(1) - np.float32(1e-8)
    assert np.array_equal(lu, torch.linalg.lu_factor(torch.from_numpy(a))[0].numpy())


def test_non_finite_entries_propagate_as_getrf(tmp_path):
    """No check for infinities or NaN: IEEE arithmetic, a NaN never the
    larger |entry| (on the diagonal it stays the pivot, below it it is passed
    over): torch's (LAPACK's) factors and pivots on these, NaN in place; the
    other matrices of the batch untouched."""
    a = np.array([[[1, 2, 0], [np.nan, 1, 0], [0, 0, 1]],
                  [[1, 2, 0], [np.inf, 1, 0], [0, 0, 1]],
                  [[np.nan, 2, 0], [3, 1, 0], [0, 0, 1]],
                  [[4, 2, 1], [3, 1, 0], [0, 5, 1]]], np.float32)
    lu, piv, p, low, up = all_of(a, tmp_path)
    tlu, tpiv, _ = torch.linalg.lu_factor_ex(torch.from_numpy(a))
    assert (piv == tpiv.numpy()).all()
    assert np.array_equal(lu, tlu.numpy(), equal_nan=True)
    assert np.isfinite(lu[3]).all()


# (id, call of x, input shape): compiled, each on the host against torch (float64, or exact for the pivots)
# (each call's result is the program's output: an op after it, a cat, would be int8; B a constant, exact in fp32)
def _unpacked(x):
    lu, piv = torch.linalg.lu_factor(x)
    p, low, up = torch.lu_unpack(lu, piv)
    return up


B52 = torch.linspace(-1, 1, 10).reshape(5, 2)


CALLS = [
    ("lu_factor LU", lambda x: torch.linalg.lu_factor(x)[0], (2, 3, 5, 5)),
    ("lu_factor .LU 2-D", lambda x: torch.linalg.lu_factor(x).LU, (6, 6)),
    ("lu_factor_ex LU", lambda x: torch.linalg.lu_factor_ex(x).LU, (2, 5, 5)),
    ("linalg.lu P", lambda x: torch.linalg.lu(x).P, (2, 6, 4)),
    ("linalg.lu L of 4x6", lambda x: torch.linalg.lu(x)[1], (2, 4, 6)),
    ("linalg.lu U of 6x4", lambda x: torch.linalg.lu(x).U, (3, 6, 4)),
    ("torch.lu LU", lambda x: torch.lu(x)[0], (2, 5, 5)),
    ("Tensor.lu LU", lambda x: x.lu()[0], (2, 4, 4)),
    ("lu_unpack U", _unpacked, (2, 5, 5)),
    ("lu_unpack .P of lu_factor_ex", lambda x: torch.lu_unpack(*torch.linalg.lu_factor_ex(x)[:2]).P, (2, 5, 3)),
    ("linalg.lu_solve", lambda x: torch.linalg.lu_solve(*torch.linalg.lu_factor(x), B52), (2, 5, 5)),
    ("linalg.lu_solve adjoint", lambda x: torch.linalg.lu_solve(*torch.linalg.lu_factor(x), B52, adjoint=True),
     (2, 5, 5)),
    ("torch.lu_solve", lambda x: torch.lu_solve(B52[:4, :1], *torch.lu(x)), (3, 4, 4)),
    ("pivots .float()", lambda x: torch.linalg.lu_factor(x).pivots.float(), (2, 3, 5, 5)),
]


@pytest.mark.parametrize("name,fn,shape", CALLS, ids=[c[0] for c in CALLS])
def test_calls_run_on_the_kernel(name, fn, shape, tmp_path):
    g = torch.Generator().manual_seed(sum(map(ord, name)))
    samples = [(torch.randn(*shape, generator=g),) for _ in range(3)]
    res = compile_model(Call(fn).eval(), [samples[0][0]], samples)
    kernel = "ptec::linalg_solve.out" if "solve" in name else "ptec::linalg_lu.out"
    assert kernel in res.lowered.operators
    prog = parse_program(res.data)
    m, n = shape[-2:]
    for (x,) in samples:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert got.tobytes() == run_program(prog, [x.numpy()])[0].tobytes()
        with torch.no_grad():
            want = fn(x.double()).numpy() if "solve" not in name else fn(x).double().numpy()
        if "pivots" in name:
            assert np.array_equal(got, want), name
            continue
        k = float(kappa(x.numpy()[..., :min(m, n), :min(m, n)]).max())
        bound = FWD * max(m, n) * EPS * k * max(float(np.abs(want).max()), 1.0)
        assert got.shape == want.shape and np.abs(got - want).max() <= bound, (name, np.abs(got - want).max())


def test_pivots_are_an_int32_output_and_integer_arithmetic_reads_them(tmp_path):
    """The pivots as the model returns them: int32 [..., k], torch's exactly
    (an integer view to the batch dims); `pivots - 1` in int32 as torch."""
    for fn in (lambda x: torch.linalg.lu_factor(x)[1], lambda x: torch.linalg.lu_factor(x).pivots - 1,
               lambda x: x.lu()[1]):
        g = torch.Generator().manual_seed(11)
        samples = [(torch.randn(2, 3, 5, 4, generator=g),) for _ in range(3)]
        res = compile_model(Call(fn).eval(), [samples[0][0]], samples)
        assert res.lowered.outputs[0].dtype == "int32"
        prog = parse_program(res.data)
        for (x,) in samples:
            got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
            want = fn(x)
            assert got.dtype == np.int32 and want.dtype == torch.int32 and np.array_equal(got, want.numpy())


def test_an_lu_read_only_by_lu_unpack_or_lu_solve_is_not_computed():
    """lu_unpack / lu_solve factor A again on the kernel (the same bytes):
    the lu_factor results only they read are dropped, not computed for
    nothing."""
    x = torch.randn(2, 4, 4)
    for fn, calls in ((lambda a: torch.lu_unpack(*torch.linalg.lu_factor(a))[1], 1),
                      (lambda a: torch.linalg.lu_solve(*torch.linalg.lu_factor(a), a), 0)):
        res = compile_model(Call(fn).eval(), [x], [(x,)])
        assert sum(f.endswith("ptec::linalg_lu.out") for f in res.lowered.fallbacks) == calls, res.lowered.fallbacks


def _two_factorisations(x):
    lu, _ = torch.linalg.lu_factor(x)
    _, piv = torch.linalg.lu_factor(x * 2)
    return torch.lu_unpack(lu, piv)[0]


# (id, call of x [2, 5, 5], words of the one-line refusal)
REFUSED = [
    ("lu_factor_ex info", lambda x: torch.linalg.lu_factor_ex(x).info.float(), "no info"),
    ("torch.lu get_infos", lambda x: torch.lu(x, get_infos=True)[2].float(), "no info"),
    ("lu_unpack of a packed LU not factored here",
     lambda x: torch.lu_unpack(x, torch.tensor([1, 2, 3, 4, 5], dtype=torch.int32))[1], "of one torch.linalg.lu_factor"),
    ("lu_unpack of two factorisations", _two_factorisations, "not of two"),
    ("lu_unpack unpack_data=False", lambda x: torch.lu_unpack(*torch.linalg.lu_factor(x), unpack_data=False)[0],
     "unpack_data=False"),
    ("lu_solve left=False", lambda x: torch.linalg.lu_solve(*torch.linalg.lu_factor(x), x, left=False), "left=False"),
]


@pytest.mark.parametrize("name,fn,says", REFUSED, ids=[r[0] for r in REFUSED])
def test_uncovered_forms_are_refused_in_one_line(name, fn, says):
    x = torch.randn(2, 5, 5)
    with pytest.raises((CompileError, UnsupportedOperator)) as e:
        compile_model(Call(fn).eval(), [x], [(x,), (x * 0.5,)])
    assert says in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_a_delegate_leaves_the_factorisation_in_fp32(tmp_path):
    """An NPU delegate asked first leaves the LU steps to the portable fp32
    kernel with the fp32 reason (the pivots' integer view to cortex_m's
    integer kernels): the pivots still torch's."""
    from ptec.backends import default_backends
    from ptec.backends.ethos_u.backend import EthosUBackend
    from ptec.capture_matrix_functions import FP32_REASON
    x = torch.randn(2, 3, 5, 5, generator=torch.Generator().manual_seed(12))
    fn = lambda a: torch.linalg.lu_factor(a).pivots            # noqa: E731
    res = compile_model(Call(fn).eval(), [x], [(x,)], backends=[EthosUBackend()] + default_backends())
    placed = [p for p in res.lowered.placements if p.backend != "none"]
    assert [p.backend for p in placed] == ["portable", "portable", "cortex_m"], placed
    assert all(p.reason.startswith("ethos_u: " + FP32_REASON) for p in placed[:2])
    got = host_runtime.run(parse_program(res.data), res.data, [x.numpy()], workdir=str(tmp_path))[0]
    assert np.array_equal(got, fn(x).numpy())
