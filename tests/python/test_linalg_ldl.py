"""ptec::linalg_ldl_factor.out (issue 15): the LDL^T factorisation with
Bunch-Kaufman pivoting of symmetric [..., n, n] in fp32 (LD, the int32
pivots, info by `which`), and the calls routed to it (capture_ldl):
torch.linalg.ldl_factor / ldl_factor_ex, and torch.linalg.ldl_solve (on
ptec::linalg_solve.out, the symmetric matrix the factorisation read).

Oracles: the pivots and info equal torch's exactly (LAPACK sytrf's
choices: float32 and float64 torch agree on every matrix here, none near
a tie of the pivoting's comparisons), including indefinite matrices that
force 2x2 blocks and matrices whose upper triangle is not the lower one's
(only the lower is read); LD's upper triangle exact zeros as torch's; LD
within FWD n EPS cond(A) max|LD64| of torch's float64 LD, entry by entry
(measured at most 0.15 of that on 600 random 1..32 matrices, half of them
with a small diagonal); and, a second oracle independent of torch, the
reconstruction M D M^T of LAPACK's L = P_1 L_1 P_2 L_2 ... within
RES n EPS max(|M| |D| |M^T|) of A (measured at most 0.49 of that). The
host runtime's bytes are the reference interpreter's
(ptec.reference.linalg), checked on every kernel run."""
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
FWD, RES = 1.0, 2.0


def same_bits(got: np.ndarray, want: np.ndarray) -> bool:
    """got and want of one dtype and shape equal bit for bit, but a NaN
    matches any NaN at the same position: its sign and payload are the
    hardware's (x86 keeps the first operand's NaN, and compilers may swap
    an operation's operands)."""
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if got.dtype.kind != "f":
        return got.tobytes() == want.tobytes()
    nan = np.isnan(got)
    return bool((nan == np.isnan(want)).all() and got[~nan].tobytes() == want[~nan].tobytes())


def ldl_on_host(x: np.ndarray, which: int, tmp_path) -> np.ndarray:
    """ptec::linalg_ldl_factor.out's `which` of x on the host runtime,
    checked byte for byte against the reference interpreter."""
    n = x.shape[-1]
    shape = [list(x.shape), list(x.shape[:-1]), list(x.shape[:-2])][which]
    b = ProgramBuilder()
    t = b.tensor(ScalarType.FLOAT, list(x.shape))
    y = b.tensor(ScalarType.FLOAT if which == 0 else ScalarType.INT, shape)
    b.call("ptec::linalg_ldl_factor.out", self=t, which=which, out=y)
    b.set_io([t], [y])
    data = serialize_program(b.build())
    prog = parse_program(data)
    arrays = [np.ascontiguousarray(x, np.float32)]
    got = host_runtime.run(prog, data, arrays, workdir=str(tmp_path))[0]
    want = run_program(prog, arrays)[0]
    assert got.dtype == (np.float32 if which == 0 else np.int32)
    assert got.shape == tuple(shape) and n >= 1
    assert same_bits(got, want), "ptec-run differs from the reference interpreter"
    return got


def all_of(x, tmp_path):
    return [ldl_on_host(x, which, tmp_path) for which in range(3)]


def reconstruct(ld: np.ndarray, piv: np.ndarray):
    """(M, D) of one matrix's LD and pivots, LAPACK's convention: A = M D
    M^T, M = P_1 L_1 P_2 L_2 ..., P_k the swap of k (1x1) or k+1 (2x2) with
    |piv_k| - 1, L_k the identity with the block's columns of LD below it."""
    n = ld.shape[0]
    m, d, k = np.eye(n), np.zeros((n, n)), 0
    ld = ld.astype(np.float64)
    while k < n:
        s = 1 if piv[k] > 0 else 2
        p, kk = abs(int(piv[k])) - 1, k + s - 1
        swap, low = np.eye(n), np.eye(n)
        swap[[kk, p]] = swap[[p, kk]]
        low[k + s:, k:k + s] = ld[k + s:, k:k + s]
        m = m @ swap @ low
        d[k:k + s, k:k + s] = ld[k:k + s, k:k + s]
        if s == 2:
            d[k, k + 1] = d[k + 1, k]
        k += s
    return m, d


def rand(shape, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).numpy()


def symmetric(x):
    return np.tril(x) + np.swapaxes(np.tril(x, -1), -1, -2)


def small_diagonal(shape, seed):
    """Indefinite, its diagonal 1/100 of the rest: 2x2 blocks and swaps."""
    a = symmetric(rand(shape, seed))
    n = shape[-1]
    a[..., np.arange(n), np.arange(n)] *= np.float32(0.01)
    return a


# (id, matrices A)
MATRICES = [
    ("1x1", rand((4, 1, 1), 301)),
    ("2x2 batched", symmetric(rand((5, 2, 2), 302))),
    ("5x5 4-D batch", symmetric(rand((2, 3, 5, 5), 303))),
    ("2-D 6x6", symmetric(rand((6, 6), 304))),
    ("positive definite 8x8 (no swaps)", (lambda r: r @ np.swapaxes(r, -1, -2) + 8 * np.eye(8, dtype=np.float32))(
        rand((3, 8, 8), 305))),
    ("small diagonal 7x7 (2x2 blocks)", small_diagonal((6, 7, 7), 306)),
    ("zero diagonal 10x10", (lambda a: a - np.eye(10, dtype=np.float32) * a)(symmetric(rand((4, 10, 10), 307)))),
    ("upper triangle not read 6x6", rand((3, 6, 6), 308)),
    ("32x32 small diagonal", small_diagonal((2, 32, 32), 309)),
    ("32x32", symmetric(rand((2, 32, 32), 310))),
    ("large entries", symmetric(rand((2, 5, 5), 311)) * np.float32(1e30)),
    ("tiny entries", symmetric(rand((2, 5, 5), 312)) * np.float32(1e-30)),
]


@pytest.mark.parametrize("name,a", MATRICES, ids=[m[0] for m in MATRICES])
def test_ldl_matches_torch(name, a, tmp_path):
    ld, piv, info = all_of(a, tmp_path)
    t32 = torch.linalg.ldl_factor_ex(torch.from_numpy(a))
    t64 = torch.linalg.ldl_factor_ex(torch.from_numpy(a.astype(np.float64)))
    assert np.array_equal(piv, t32.pivots.numpy()) and np.array_equal(piv, t64.pivots.numpy()), "pivots not LAPACK's"
    assert np.array_equal(info, t64.info.numpy()) and not info.any()
    n = a.shape[-1]
    assert (np.triu(ld, 1) == 0).all() and (np.triu(t32.LD.numpy(), 1) == 0).all()
    if "2x2" in name or "zero diagonal" in name:
        assert (piv < 0).any(), "no 2x2 block"
    if "positive definite" in name:
        assert (piv == np.arange(1, n + 1)).all()
    s = symmetric(a.astype(np.float64))
    cond = torch.linalg.cond(torch.from_numpy(s)).numpy()[..., None, None]
    ld64 = t64.LD.numpy()
    scale = np.abs(ld64).max(axis=(-2, -1), keepdims=True)
    assert (np.abs(ld - ld64) <= FWD * n * EPS * cond * scale).all(), \
        f"LD {np.max(np.abs(ld - ld64) / (n * EPS * cond * scale)):.3f} of its bound from torch's float64"
    for one_ld, one_piv, one_a in zip(ld.reshape(-1, n, n), piv.reshape(-1, n), s.reshape(-1, n, n)):
        m, d = reconstruct(one_ld, one_piv)
        err = np.abs(m @ d @ m.T - one_a).max()
        assert err <= RES * n * EPS * (np.abs(m) @ np.abs(d) @ np.abs(m.T)).max(), "M D M^T is not A"


def test_many_random_matrices_pivot_as_torch(tmp_path):
    """400 matrices 1x1 to 32x32, half with a small diagonal (2x2 blocks
    and swaps of both kinds), one batch per size: the pivots torch's
    exactly, every block kind met."""
    rng = np.random.default_rng(15)
    kinds = set()
    for n in range(1, 33):
        a = rng.standard_normal((12, n, n)).astype(np.float32)
        a[6:, np.arange(n), np.arange(n)] *= np.float32(0.01)
        piv = ldl_on_host(a, 1, tmp_path)
        assert np.array_equal(piv, torch.linalg.ldl_factor_ex(torch.from_numpy(a)).pivots.numpy()), n
        at = np.arange(1, n + 1)
        kinds |= {"1x1" if p == k else "1x1 swapped" if p > 0 else "2x2" if -p == k + 1 else "2x2 swapped"
                  for p, k in zip(piv.reshape(-1), np.tile(at, 12))}
    assert kinds == {"1x1", "1x1 swapped", "2x2", "2x2 swapped"}, kinds


def test_singular_matrices_factor_as_ldl_factor_ex(tmp_path):
    """A zero column (diagonal and below) is skipped, its pivot itself,
    info the first (1-based), as LAPACK's sytrf: torch.linalg.ldl_factor_ex's
    LD, pivots and info exactly (torch.linalg.ldl_factor raises on them)."""
    a = np.array([[[0, 0, 0], [0, 2, 0], [0, 1, 3]],           # zero first column
                  [[1, 0, 0], [2, 4, 0], [3, 6, 9]],           # rank 1: the second column zero after step 1
                  [[0, 0, 0], [0, 0, 0], [0, 0, 0]],           # zero
                  [[4, 0, 0], [1, 2, 0], [0, 0, 0]]], np.float32)  # zero last column
    ld, piv, info = all_of(a, tmp_path)
    t = torch.linalg.ldl_factor_ex(torch.from_numpy(a))
    assert info.tolist() == [1, 2, 1, 3] and np.array_equal(info, t.info.numpy())
    assert np.array_equal(piv, t.pivots.numpy()) and np.array_equal(ld, t.LD.numpy())
    with pytest.raises(RuntimeError):
        torch.linalg.ldl_factor(torch.from_numpy(a))


def test_non_finite_entries_propagate(tmp_path):
    """No check for infinities or NaN: a NaN diagonal is a zero column
    (info, as LAPACK's disnan test: torch's pivots and info); a NaN below
    it is ptec's rule (reference BLAS idamax's strict >, a NaN first in the
    column kept: here a 2x2 block) where torch's BLAS differs (its isamax
    passes over the NaN); the run ends, every index inside the matrix, the
    other matrices of the batch untouched."""
    a = np.array([[[np.nan, 0, 0], [1, 2, 0], [0, 1, 3]],
                  [[1, 0, 0], [np.nan, 2, 0], [3, 1, 0.5]],
                  [[1, 0, 0], [np.inf, 2, 0], [0, 1, 3]],
                  [[4, 0, 0], [1, -3, 0], [2, 0, 5]]], np.float32)
    ld, piv, info = all_of(a, tmp_path)
    t = torch.linalg.ldl_factor_ex(torch.from_numpy(a))
    same = [0, 2, 3]
    assert np.array_equal(piv[same], t.pivots.numpy()[same]) and np.array_equal(info[same], t.info.numpy()[same])
    assert np.isnan(ld[0, 0, 0]) and info[0] == 1
    assert piv[1].tolist() == [-2, -2, 3] and np.isnan(ld[1, 2]).all()
    ref = all_of(a[3:], tmp_path)
    assert np.array_equal(ld[3], ref[0][0]) and np.isfinite(ld[3]).all()


def test_hostile_sizes_are_refused_at_load(tmp_path):
    """Prepare's checks (no run): a non-square self, an out of the wrong
    size, a which out of range, a float out for the pivots."""
    cases = [([2, 3, 4], [2, 3], 1, ScalarType.INT, "must be square"),
             ([2, 3, 3], [2, 2], 1, ScalarType.INT, "out must be LD"),
             ([2, 3, 3], [3], 2, ScalarType.INT, "out must be LD"),
             ([2, 3, 3], [2, 3, 3], 3, ScalarType.FLOAT, "which must be"),
             ([2, 3, 3], [2, 3], 1, ScalarType.FLOAT, "int32 for the pivots")]
    for x_shape, out_shape, which, dtype, words in cases:
        b = ProgramBuilder()
        t = b.tensor(ScalarType.FLOAT, x_shape)
        y = b.tensor(dtype, out_shape)
        b.call("ptec::linalg_ldl_factor.out", self=t, which=which, out=y)
        b.set_io([t], [y])
        data = serialize_program(b.build())
        with pytest.raises(Exception) as err:
            host_runtime.run(parse_program(data), data, [np.zeros(x_shape, np.float32)], workdir=str(tmp_path))
        assert words in str(err.value), (x_shape, out_shape, which, str(err.value))


B52 = torch.linspace(-1, 1, 10).reshape(5, 2)

# (id, call of x, input shape): compiled, each on the host against torch (float64 A, or exact for the pivots)
CALLS = [
    ("ldl_factor LD", lambda x: torch.linalg.ldl_factor(x)[0], (2, 3, 5, 5)),
    ("ldl_factor .LD 2-D", lambda x: torch.linalg.ldl_factor(x).LD, (6, 6)),
    ("ldl_factor hermitian", lambda x: torch.linalg.ldl_factor(x, hermitian=True).LD, (2, 5, 5)),
    ("ldl_factor_ex LD", lambda x: torch.linalg.ldl_factor_ex(x).LD, (2, 5, 5)),
    ("ldl_factor pivots", lambda x: torch.linalg.ldl_factor(x)[1], (2, 3, 5, 5)),
    ("ldl_factor_ex .pivots 2-D", lambda x: torch.linalg.ldl_factor_ex(x).pivots, (7, 7)),
    ("ldl_factor_ex info", lambda x: torch.linalg.ldl_factor_ex(x)[2], (2, 3, 4, 4)),
    ("ldl_factor_ex .info 2-D", lambda x: torch.linalg.ldl_factor_ex(x).info, (4, 4)),
    ("pivots abs - 1 (int32 arithmetic)", lambda x: torch.linalg.ldl_factor(x).pivots.abs() - 1, (2, 6, 6)),
    ("ldl_solve", lambda x: torch.linalg.ldl_solve(*torch.linalg.ldl_factor(x), B52), (2, 5, 5)),
    ("ldl_solve of ldl_factor_ex", lambda x: torch.linalg.ldl_solve(*torch.linalg.ldl_factor_ex(x)[:2], B52[:4]),
     (3, 4, 4)),
]


@pytest.mark.parametrize("name,fn,shape", CALLS, ids=[c[0] for c in CALLS])
def test_calls_run_on_the_kernel(name, fn, shape, tmp_path):
    g = torch.Generator().manual_seed(sum(map(ord, name)))
    n = shape[-1]

    def sample():
        a = torch.randn(*shape, generator=g)
        a[..., range(n), range(n)] *= 0.05          # indefinite: 2x2 blocks among the 1x1s
        return a
    samples = [(sample(),) for _ in range(3)]
    res = compile_model(Call(fn).eval(), [samples[0][0]], samples)
    kernel = "ptec::linalg_solve.out" if "solve" in name else "ptec::linalg_ldl_factor.out"
    assert kernel in res.lowered.operators
    prog = parse_program(res.data)
    for (x,) in samples:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert same_bits(got, run_program(prog, [x.numpy()])[0])
        with torch.no_grad():
            want = fn(x) if "solve" in name else fn(x.double())
        if want.dtype == torch.int32:
            assert got.dtype == np.int32 and np.array_equal(got, want.numpy()), name
            continue
        want = want.double().numpy()
        s = torch.from_numpy(symmetric(x.double().numpy()))
        k = float(torch.linalg.cond(s).max())
        bound = 4 * n * EPS * k * max(float(np.abs(want).max()), 1.0)
        assert got.shape == want.shape and np.abs(got - want).max() <= bound, (name, np.abs(got - want).max(), bound)


def test_an_ldl_read_only_by_ldl_solve_is_not_computed():
    x = torch.randn(2, 4, 4)
    res = compile_model(Call(lambda a: torch.linalg.ldl_solve(*torch.linalg.ldl_factor(a), a)).eval(), [x], [(x,)])
    assert not any(f.endswith("ptec::linalg_ldl_factor.out") for f in res.lowered.fallbacks), res.lowered.fallbacks


def _two_factorisations(x):
    ld, _ = torch.linalg.ldl_factor(x)
    _, piv = torch.linalg.ldl_factor(x * 2)
    return torch.linalg.ldl_solve(ld, piv, x)


# (id, call of x [2, 5, 5], words of the one-line refusal)
REFUSED = [
    ("ldl_solve of an LD not factored here",
     lambda x: torch.linalg.ldl_solve(x, torch.arange(1, 6, dtype=torch.int32).repeat(2, 1), x),
     "of one torch.linalg.ldl_factor"),
    ("ldl_solve of two factorisations", _two_factorisations, "not of two"),
]


@pytest.mark.parametrize("name,fn,words", REFUSED, ids=[r[0] for r in REFUSED])
def test_forms_not_covered_are_refused_by_name(name, fn, words):
    x = torch.randn(2, 5, 5)
    x = x + x.mT
    with pytest.raises((CompileError, UnsupportedOperator)) as err:
        compile_model(Call(fn).eval(), [x], [(x,)])
    msg = str(err.value)
    assert "\n" not in msg and "ldl" in msg and words in msg, msg
