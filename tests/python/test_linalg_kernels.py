"""The LU kernels (issue 15): ptec::linalg_det.out (det, slogdet's sign and
logabsdet, logdet) and ptec::linalg_solve.out (solve, inv), LU with partial
pivoting in fp32 on any n, and the calls routed to them
(capture_matrix_functions).

Oracle: torch.linalg in float64 on the same float32 matrices. Tolerances,
with n the size, EPS = FLT_EPSILON and kappa torch's 2-norm condition
number (LU with partial pivoting is backward stable: the computed factors
are those of A + E, |E| of a few n EPS |A| for the matrices here, whose
pivot growth is small):
* solve / inv: the residual |A X - B| <= RES n EPS |A| |X| (max-norms,
  float64), for any A, ill-conditioned or not; and X within
  FWD n EPS kappa of torch's, relative to its largest entry;
* det: within FWD n EPS kappa of torch's, relative;
* logabsdet: within FWD n EPS kappa of torch's, absolute (a relative
  error e of |det| is e in the log); the sign exact where kappa is small.
The host runtime's bytes are the reference interpreter's
(ptec.reference.linalg repeats the kernels' float32 steps), checked on
every kernel run here."""
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

EPS = float(np.finfo(np.float32).eps)
RES, FWD = 4.0, 8.0


class Call(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


def rand(shape, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).numpy()


def run_kernel(b, inputs, outputs, arrays, tmp_path):
    b.set_io(inputs, outputs)
    data = serialize_program(b.build())
    prog = parse_program(data)
    got = host_runtime.run(prog, data, arrays, workdir=str(tmp_path))[0]
    want = run_program(prog, arrays)[0]
    assert got.tobytes() == want.tobytes(), "ptec-run differs from the reference interpreter"
    return got


def det_on_host(x: np.ndarray, mode: int, tmp_path) -> np.ndarray:
    b = ProgramBuilder()
    t = b.tensor(ScalarType.FLOAT, list(x.shape))
    y = b.tensor(ScalarType.FLOAT, list(x.shape[:-2]))
    b.call("ptec::linalg_det.out", self=t, mode=mode, out=y)
    return run_kernel(b, [t], [y], [np.ascontiguousarray(x, np.float32)], tmp_path)


def solve_on_host(a: np.ndarray, rhs: np.ndarray, tmp_path) -> np.ndarray:
    b = ProgramBuilder()
    t = b.tensor(ScalarType.FLOAT, list(a.shape))
    r = b.tensor(ScalarType.FLOAT, list(rhs.shape))
    y = b.tensor(ScalarType.FLOAT, list(a.shape[:-1]) + [rhs.shape[-1]])
    b.call("ptec::linalg_solve.out", self=t, rhs=r, out=y)
    return run_kernel(b, [t, r], [y], [np.ascontiguousarray(a, np.float32), np.ascontiguousarray(rhs, np.float32)],
                      tmp_path)


def kappa(a: np.ndarray) -> np.ndarray:
    return torch.linalg.cond(torch.from_numpy(np.asarray(a, np.float64))).numpy()


def check_solution(a, rhs, got):
    """Residual and forward error of X = got for A X = B (B broadcast over A's batch)."""
    a64, x64 = np.asarray(a, np.float64), np.asarray(got, np.float64)
    b64 = np.broadcast_to(np.asarray(rhs, np.float64), a.shape[:-1] + (rhs.shape[-1],))
    n = a.shape[-1]
    res = np.abs(a64 @ x64 - b64).max(axis=(-2, -1))
    scale = np.abs(a64).max(axis=(-2, -1)) * np.abs(x64).max(axis=(-2, -1)) * n
    assert (res <= RES * n * EPS * scale).all(), f"residual {(res / scale).max():.2e} of n |A| |X|"
    want = torch.linalg.solve(torch.from_numpy(a64), torch.from_numpy(np.array(b64))).numpy()
    err = np.abs(x64 - want).max(axis=(-2, -1)) / np.abs(want).max(axis=(-2, -1))
    bound = FWD * n * EPS * kappa(a)
    assert (err <= bound).all(), f"forward error {err.max():.2e} (bound {bound.min():.2e})"


def graded(n, seed):
    """Rows scaled 10^-3 .. 10^3: partial pivoting must pick the large ones."""
    return (rand((2, n, n), seed) * np.float32(10.0) ** np.linspace(-3, 3, n, dtype=np.float32)[:, None])


def hilbert(n):
    return (1.0 / (np.arange(n)[:, None] + np.arange(n)[None, :] + 1)).astype(np.float32)[None]


# (id, matrices A)
MATRICES = [
    ("1x1", rand((4, 1, 1), 1)),
    ("2x2 batched", rand((3, 2, 2), 2)),
    ("5x5", rand((2, 5, 5), 3)),
    ("8x8 4-D batch", rand((2, 3, 8, 8), 4)),
    ("16x16", rand((1, 16, 16), 5)),
    ("2-D 6x6", rand((6, 6), 6)),
    ("graded rows 7x7", graded(7, 7)),
    ("zero (0, 0) entry: a pivot swap", np.array([[[0.0, 2.0, 1.0], [1.0, 1.0, 0.0], [3.0, -1.0, 2.0]]], np.float32)),
    ("Hilbert 6x6 (cond 1.5e7)", hilbert(6)),
    ("large entries (det near 1e30)", rand((2, 5, 5), 8) * np.float32(1e6)),
    ("tiny entries (det near 1e-30)", rand((2, 5, 5), 9) * np.float32(1e-6)),
    ("permutation x 2", np.eye(6, dtype=np.float32)[[3, 0, 5, 1, 4, 2]][None] * 2),
]


@pytest.mark.parametrize("name,a", MATRICES, ids=[m[0] for m in MATRICES])
def test_det_matches_torch(name, a, tmp_path):
    n = a.shape[-1]
    want = torch.linalg.det(torch.from_numpy(a.astype(np.float64))).numpy()
    got = det_on_host(a, 0, tmp_path)
    assert got.shape == want.shape
    bound = FWD * n * EPS * kappa(a)
    err = np.abs(got - want) / np.abs(want)
    assert (err <= bound).all(), f"{err.max():.2e} relative (bound {bound.min():.2e})"


@pytest.mark.parametrize("name,a", MATRICES, ids=[m[0] for m in MATRICES])
def test_slogdet_and_logdet_match_torch(name, a, tmp_path):
    n = a.shape[-1]
    sign, logabs = torch.linalg.slogdet(torch.from_numpy(a.astype(np.float64)))
    got_sign, got_log = det_on_host(a, 1, tmp_path), det_on_host(a, 2, tmp_path)
    assert np.array_equal(got_sign, sign.numpy())
    bound = FWD * n * EPS * kappa(a)
    assert (np.abs(got_log - logabs.numpy()) <= bound).all(), np.abs(got_log - logabs.numpy()).max()
    logdet = det_on_host(a, 3, tmp_path)
    assert np.array_equal(np.isnan(logdet), sign.numpy() < 0)
    assert np.array_equal(logdet[sign.numpy() > 0], got_log[sign.numpy() > 0])


@pytest.mark.parametrize("name,a", MATRICES, ids=[m[0] for m in MATRICES])
def test_solve_matches_torch(name, a, tmp_path):
    rhs = rand(a.shape[:-1] + (3,), 50)
    check_solution(a, rhs, solve_on_host(a, rhs, tmp_path))


def test_one_rhs_for_the_whole_batch_and_the_inverse(tmp_path):
    """rhs of batch dims all 1 serves every matrix; the identity gives the inverse."""
    a = rand((2, 3, 6, 6), 60)
    eye = np.eye(6, dtype=np.float32)[None, None]
    inv = solve_on_host(a, eye, tmp_path)
    check_solution(a, eye, inv)
    want = torch.linalg.inv(torch.from_numpy(a.astype(np.float64))).numpy()
    assert np.abs(inv - want).max() <= FWD * 6 * EPS * kappa(a).max() * np.abs(want).max()


def test_det_overflow_keeps_a_finite_log(tmp_path):
    """det of 40 x 40 entries of 1e3: 1e120 overflows float32 (inf, as
    torch's float32), its log |det| stays finite: the sum of the pivots' logs."""
    a = rand((1, 40, 40), 61) * np.float32(1e3)
    det, logabs = det_on_host(a, 0, tmp_path), det_on_host(a, 2, tmp_path)
    want = torch.linalg.slogdet(torch.from_numpy(a.astype(np.float64)))[1].numpy()
    assert np.isinf(det).all() and np.isinf(torch.linalg.det(torch.from_numpy(a)).numpy()).all()
    assert np.abs(logabs - want).max() <= FWD * 40 * EPS * kappa(a).max()


def test_singular_matrices(tmp_path):
    """A zero pivot: det 0, sign 0, log |det| -inf, logdet -inf as torch;
    solve divides by it (inf / NaN, where torch raises)."""
    a = rand((3, 5, 5), 62)
    a[0, 2] = 0.0                       # a zero row
    a[1, :, 4] = 0.0                    # a zero column
    a[2, 3] = a[2, 1]                   # two equal rows: an exactly zero pivot
    assert (det_on_host(a, 0, tmp_path) == 0).all()
    assert (det_on_host(a, 1, tmp_path) == 0).all()
    assert (det_on_host(a, 2, tmp_path) == -np.inf).all() and (det_on_host(a, 3, tmp_path) == -np.inf).all()
    # torch's float64 LU: 0 or a rounding-size det of these
    assert (np.abs(torch.linalg.det(torch.from_numpy(a.astype(np.float64))).numpy()) <= 1e-12).all()
    got = solve_on_host(a, rand((3, 5, 1), 63), tmp_path)
    assert (~np.isfinite(got)).any(axis=(1, 2)).all()


def test_non_finite_entries_give_nan_for_their_matrix_only(tmp_path):
    a = rand((3, 4, 4), 64)
    a[1, 2, 3] = np.inf
    a[2, 0, 0] = np.nan
    for mode in range(3):
        got = det_on_host(a, mode, tmp_path)
        assert np.isnan(got[1:]).all() and np.isfinite(got[0]), mode
    assert np.isnan(det_on_host(a, 3, tmp_path)[1:]).all()
    rhs = rand((3, 4, 2), 65)
    got = solve_on_host(a, rhs, tmp_path)
    assert np.isnan(got[1:]).all()
    check_solution(a[:1], rhs[:1], got[:1])


def test_pivoting_picks_the_largest_entry(tmp_path):
    """[[1e-8, 1], [1, 1]]: without a row swap the solve loses every digit
    (1 - 1e8 rounding); with it, the solution is [1, 1] to rounding."""
    a = np.array([[[1e-8, 1.0], [1.0, 1.0]]], np.float32)
    rhs = np.array([[[1.0], [2.0]]], np.float32)
    got = solve_on_host(a, rhs, tmp_path)
    assert np.abs(got[0, :, 0] - 1.0).max() <= 4 * EPS
    assert det_on_host(a, 0, tmp_path)[0] == np.float32(1e-8) - np.float32(1.0)


# (id, call of x, input shape): compiled, each on the host against torch (float64)
CALLS = [
    ("det 6x6", torch.linalg.det, (2, 3, 6, 6)),
    ("Tensor.det 5x5", lambda x: x.det(), (5, 5)),
    ("slogdet sign 7x7", lambda x: torch.linalg.slogdet(x).sign, (3, 7, 7)),
    ("slogdet logabsdet 9x9", lambda x: torch.linalg.slogdet(x)[1], (2, 9, 9)),
    ("torch.slogdet 5x5", lambda x: torch.slogdet(x)[1], (2, 5, 5)),
    ("logdet 6x6 (NaN where det < 0)", torch.logdet, (4, 6, 6)),
    ("inv 8x8", torch.linalg.inv, (2, 8, 8)),
    ("torch.inverse 5x5", torch.inverse, (3, 5, 5)),
    ("inv_ex 6x6", lambda x: torch.linalg.inv_ex(x).inverse, (2, 6, 6)),
    ("solve matrix constant 5x5", lambda x: torch.linalg.solve(x, torch.arange(10.0).reshape(5, 2)), (2, 3, 5, 5)),
    ("solve vector constant 6x6", lambda x: torch.linalg.solve(x, torch.linspace(-1, 1, 6)), (2, 6, 6)),
    ("solve batched constant B", lambda x: torch.linalg.solve(x, torch.linspace(-1, 1, 30).reshape(2, 5, 3)),
     (2, 5, 5)),
    ("solve_ex 5x5", lambda x: torch.linalg.solve_ex(x, torch.ones(5, 1)).result, (5, 5)),
    ("matrix_power -2 (inv by LU)", lambda x: torch.linalg.matrix_power(x, -2), (2, 3, 3)),
]


@pytest.mark.parametrize("name,fn,shape", CALLS, ids=[c[0] for c in CALLS])
def test_calls_run_on_the_kernels(name, fn, shape, tmp_path):
    g = torch.Generator().manual_seed(sum(map(ord, name)))
    samples = [(torch.randn(*shape, generator=g) + 2 * torch.eye(shape[-1]),) for _ in range(3)]
    res = compile_model(Call(fn).eval(), [samples[0][0]], samples)
    assert {"ptec::linalg_det.out", "ptec::linalg_solve.out"} & set(res.lowered.operators)
    prog = parse_program(res.data)
    n = shape[-1]
    for (x,) in samples:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert got.tobytes() == run_program(prog, [x.numpy()])[0].tobytes()
        with torch.no_grad():
            want = fn(x.double()).numpy() if "constant" not in name and "solve_ex" not in name else \
                fn(x).double().numpy()
        # the worst case of the batch: FWD n EPS kappa (kappa^2: the power's products of the inverse)
        k = float(kappa(x.numpy()).max()) ** (2 if "power" in name else 1)
        bound = FWD * n * EPS * k * max(float(np.nanmax(np.abs(want))), 1.0)
        assert got.shape == want.shape and np.array_equal(np.isnan(got), np.isnan(want)), name
        assert np.nanmax(np.abs(got - want)) <= bound, (name, np.nanmax(np.abs(got - want)))


def test_a_vector_b_of_the_input_through_int8_layers(tmp_path):
    """B = a slice of the input (an int8 value, so rounded to its step
    before the fp32 solve): X within kappa times that rounding of torch's."""
    g = torch.Generator().manual_seed(66)
    samples = [(torch.rand(2, 6, 7, generator=g) * 2 - 1,) for _ in range(4)]

    def fn(x):
        return torch.linalg.solve(x[..., :6] + 4 * torch.eye(6), x[..., 6])
    res = compile_model(Call(fn).eval(), [samples[0][0]], samples)
    prog = parse_program(res.data)
    for (x,) in samples[1:]:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        want = fn(x.double()).numpy()
        k = float(kappa((x[..., :6] + 4 * torch.eye(6)).numpy()).max())
        # the int8 step of x's range [-1, 1]: 2 / 255, half of it the rounding of each entry of A and b
        assert np.abs(got - want).max() <= k * (1 / 255) * 2 * np.abs(want).max() + 1e-5


# (id, call of x [2, 5, 5], words of the one-line refusal)
REFUSED = [
    ("solve left=False", lambda x: torch.linalg.solve(x, x[..., :2, :], left=False), "left=False"),
    ("solve B broadcast over some batch dims", lambda x: torch.linalg.solve(x[None].expand(3, 2, 5, 5),
                                                                            x[:1, :, :2][None].expand(3, 1, 5, 2)),
     "batch dims"),
    ("det of a non-square matrix view", lambda x: torch.linalg.det(x[..., :4]), "square"),
]


@pytest.mark.parametrize("name,fn,says", REFUSED, ids=[r[0] for r in REFUSED])
def test_uncovered_forms_are_refused_in_one_line(name, fn, says):
    x = torch.randn(2, 5, 5)
    with pytest.raises((CompileError, UnsupportedOperator, RuntimeError)) as e:
        compile_model(Call(fn).eval(), [x], [(x,), (x * 0.5,)])
    assert says in str(e.value) and "\n" not in str(e.value), str(e.value)


# -- ptec::linalg_cholesky.out and linalg_triangular_solve.out ----------------------------------------------
# Tolerances: A = L L^T within RES n EPS |A| (Cholesky is backward stable), L within FWD n EPS kappa(A) of
# torch's relative to its largest entry; a triangular solve's residual within RES n EPS n |T| |X| and X
# within FWD n EPS kappa(op(T)) of torch's, relative.

def cholesky_on_host(x: np.ndarray, upper: bool, tmp_path) -> np.ndarray:
    b = ProgramBuilder()
    t = b.tensor(ScalarType.FLOAT, list(x.shape))
    y = b.tensor(ScalarType.FLOAT, list(x.shape))
    b.call("ptec::linalg_cholesky.out", self=t, upper=upper, out=y)
    return run_kernel(b, [t], [y], [np.ascontiguousarray(x, np.float32)], tmp_path)


def trisolve_on_host(t_: np.ndarray, rhs: np.ndarray, upper, transpose, unit, tmp_path) -> np.ndarray:
    b = ProgramBuilder()
    t = b.tensor(ScalarType.FLOAT, list(t_.shape))
    r = b.tensor(ScalarType.FLOAT, list(rhs.shape))
    y = b.tensor(ScalarType.FLOAT, list(t_.shape[:-1]) + [rhs.shape[-1]])
    b.call("ptec::linalg_triangular_solve.out", self=t, rhs=r, upper=upper, transpose=transpose,
           unitriangular=unit, out=y)
    return run_kernel(b, [t, r], [y], [np.ascontiguousarray(t_, np.float32), np.ascontiguousarray(rhs, np.float32)],
                      tmp_path)


def spd(shape, seed, shift=1.0):
    m = rand(shape, seed).astype(np.float64)
    return (m @ np.swapaxes(m, -1, -2) + shift * np.eye(shape[-1])).astype(np.float32)


SPD = [
    ("1x1", spd((3, 1, 1), 80)),
    ("3x3 batched", spd((2, 3, 3, 3), 81)),
    ("6x6", spd((2, 6, 6), 82)),
    ("12x12", spd((1, 12, 12), 83)),
    ("ill-conditioned 8x8 (shift 1e-3)", spd((2, 8, 8), 84, 1e-3)),
    ("2-D 5x5", spd((5, 5), 85)),
    ("large entries", spd((2, 5, 5), 86) * np.float32(1e15)),
]


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("name,a", SPD, ids=[m[0] for m in SPD])
def test_cholesky_matches_torch(name, a, upper, tmp_path):
    n = a.shape[-1]
    # the unread triangle spoilt: only one is read
    junk = np.where(np.tril(np.ones((n, n), bool), -1) if upper else np.triu(np.ones((n, n), bool), 1),
                    np.float32(np.nan), a)
    got = cholesky_on_host(junk, upper, tmp_path).astype(np.float64)
    a64 = a.astype(np.float64)
    want = torch.linalg.cholesky(torch.from_numpy(a64), upper=upper).numpy()
    other = np.tril(np.ones((n, n), bool), -1) if upper else np.triu(np.ones((n, n), bool), 1)
    assert (got[..., other] == 0).all(), "the other triangle is not 0"
    product = np.swapaxes(got, -1, -2) @ got if upper else got @ np.swapaxes(got, -1, -2)
    scale = np.abs(a64).max(axis=(-2, -1), keepdims=True)
    assert (np.abs(product - a64) <= RES * n * EPS * scale).all(), np.abs((product - a64) / scale).max()
    err = np.abs(got - want).max(axis=(-2, -1)) / np.abs(want).max(axis=(-2, -1))
    assert (err <= FWD * n * EPS * kappa(a)).all(), err.max()


def test_cholesky_of_a_matrix_not_positive_definite_is_nan_from_its_pivot(tmp_path):
    """torch raises; the kernel's negative pivot gives NaN from there on (the
    entries before it are the factor's), the batch neighbour as usual."""
    a = spd((2, 4, 4), 87)
    a[0, 2, 2] = -50.0
    with pytest.raises(RuntimeError):
        torch.linalg.cholesky(torch.from_numpy(a))
    got = cholesky_on_host(a, False, tmp_path)
    want = torch.linalg.cholesky(torch.from_numpy(a[:, :2, :2].astype(np.float64))).numpy()
    assert np.abs(got[0, :2, :2] - want[0]).max() <= 1e-5 * np.abs(want[0]).max()
    assert np.isnan(got[0, 2:, 2]).all() and np.isnan(got[0, 3, 3])
    assert np.isfinite(got[1]).all()


TRIANGLES = [
    ("upper 6x6", True, False, False),
    ("lower 6x6", False, False, False),
    ("upper transposed", True, True, False),
    ("lower transposed", False, True, False),
    ("unit lower", False, False, True),
    ("unit upper transposed", True, True, True),
]


@pytest.mark.parametrize("name,upper,transpose,unit", TRIANGLES, ids=[t[0] for t in TRIANGLES])
def test_triangular_solve_matches_torch(name, upper, transpose, unit, tmp_path):
    a = rand((2, 3, 6, 6), 90) + 4 * np.eye(6, dtype=np.float32)
    rhs = rand((2, 3, 6, 2), 91)
    got = trisolve_on_host(a, rhs, upper, transpose, unit, tmp_path)
    tri = np.triu(a) if upper else np.tril(a)
    if unit:
        tri = tri * (1 - np.eye(6, dtype=np.float32)) + np.eye(6, dtype=np.float32)     # the diagonal taken as 1s
    op = np.swapaxes(tri, -1, -2) if transpose else tri
    check_solution(op.astype(np.float32), rhs, got)


def test_triangular_solve_shares_one_rhs_and_reads_one_triangle(tmp_path):
    a = rand((3, 5, 5), 92) + 4 * np.eye(5, dtype=np.float32)
    a_junk = a.copy()
    a_junk[:, np.tril(np.ones((5, 5), bool), -1)] = np.nan
    rhs = rand((1, 5, 3), 93)
    got = trisolve_on_host(a_junk, rhs, True, False, False, tmp_path)
    check_solution(np.triu(a), rhs, got)


CALLS_TRIANGULAR = [
    ("cholesky 6x6", torch.linalg.cholesky, (2, 6, 6)),
    ("cholesky upper 7x7", lambda a: torch.linalg.cholesky(a, upper=True), (2, 7, 7)),
    ("Tensor.cholesky 5x5", lambda a: a.cholesky(), (3, 5, 5)),
    ("solve_triangular upper", lambda a: torch.linalg.solve_triangular(a, torch.linspace(-1, 1, 12).reshape(6, 2),
                                                                       upper=True), (2, 6, 6)),
    ("solve_triangular unit lower", lambda a: torch.linalg.solve_triangular(
        a, torch.linspace(-1, 1, 18).reshape(3, 6, 1), upper=False, unitriangular=True), (3, 6, 6)),
    ("triangular_solve", lambda a: torch.triangular_solve(torch.ones(6, 2), a)[0], (2, 6, 6)),
    ("triangular_solve lower transposed .solution", lambda a: torch.triangular_solve(
        torch.ones(6, 3), a, upper=False, transpose=True).solution, (6, 6)),
    ("Tensor.triangular_solve", lambda a: torch.ones(5, 1).triangular_solve(a, False)[0], (2, 5, 5)),
    ("cholesky_solve(B, L)", lambda a: torch.cholesky_solve(torch.ones(6, 2), torch.linalg.cholesky(a)), (2, 6, 6)),
    ("cholesky_solve(B, U, upper)", lambda a: torch.cholesky_solve(torch.ones(6, 2), torch.linalg.cholesky(a, upper=True),
                                                                   upper=True), (2, 6, 6)),
]


@pytest.mark.parametrize("name,fn,shape", CALLS_TRIANGULAR, ids=[c[0] for c in CALLS_TRIANGULAR])
def test_cholesky_and_triangular_calls_run_on_the_kernels(name, fn, shape, tmp_path):
    """On SPD inputs M M^T + n I: within FWD n EPS kappa (kappa^2 for
    cholesky_solve's two solves) of torch's float64, relative to its largest entry."""
    g = torch.Generator().manual_seed(sum(map(ord, name)))
    n = shape[-1]
    samples = []
    for _ in range(3):
        m = torch.randn(*shape, generator=g)
        samples.append((m @ m.mT + n * torch.eye(n),))
    res = compile_model(Call(fn).eval(), [samples[0][0]], samples)
    assert {"ptec::linalg_cholesky.out", "ptec::linalg_triangular_solve.out"} & set(res.lowered.operators)
    prog = parse_program(res.data)
    for (x,) in samples:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert got.tobytes() == run_program(prog, [x.numpy()])[0].tobytes()
        with torch.no_grad():
            want = fn(x).double().numpy() if "solve" in name else fn(x.double()).numpy()
        k = float(kappa(x.numpy()).max()) ** (1 if "cholesky_solve" in name else 0.5)
        bound = FWD * n * EPS * k * float(np.abs(want).max())
        assert got.shape == want.shape and np.abs(got - want).max() <= bound, (name, np.abs(got - want).max(), bound)


REFUSED_TRIANGULAR = [
    ("solve_triangular left=False", lambda x: torch.linalg.solve_triangular(x, x[..., :2, :], upper=True,
                                                                            left=False), "left=False"),
    ("triangular_solve's cloned coefficient", lambda x: torch.triangular_solve(x[..., :2], x)[1], "solution only"),
]


@pytest.mark.parametrize("name,fn,says", REFUSED_TRIANGULAR, ids=[r[0] for r in REFUSED_TRIANGULAR])
def test_uncovered_triangular_forms_are_refused_in_one_line(name, fn, says):
    x = torch.randn(2, 5, 5)
    with pytest.raises((CompileError, UnsupportedOperator)) as e:
        compile_model(Call(fn).eval(), [x], [(x,), (x * 0.5,)])
    assert says in str(e.value) and "\n" not in str(e.value), str(e.value)


class CholeskySolve(torch.nn.Module):
    """A = x x^T + 6 I from the input, its factor, cholesky_solve and solve of the input's last column,
    log |det A|, A's eigenvectors, x's pseudo-inverse, full U and R, x's packed LU and P, joined."""

    def forward(self, x):                                 # x [2, 6, 7]
        a = x[..., :6] @ x[..., :6].mT + 6 * torch.eye(6)
        return torch.cat([torch.linalg.cholesky(a), torch.cholesky_solve(x[..., 6:], torch.linalg.cholesky(a)),
                          torch.linalg.solve(a, x[..., 6:]), torch.linalg.slogdet(a)[1][..., None, None].expand(-1, 6, 1),
                          torch.linalg.eigh(a).eigenvectors, torch.linalg.pinv(x).mT, torch.linalg.svd(x)[0],
                          torch.linalg.qr(x).R, torch.linalg.lu_factor(x).LU, torch.linalg.lu(x).P], -1)


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
def test_lu_and_cholesky_kernels_on_a_board(target, tmp_path):
    """The eight kernels in the emulated board's firmware print the reference
    interpreter's bytes (IEEE float32 -, *, /, sqrt; log |det| the board C
    library's double log, rounded once to float)."""
    from model_checks import board_matches_reference
    g = torch.Generator().manual_seed(7)
    samples = [(torch.rand((2, 6, 7), generator=g) * 2 - 1,) for _ in range(4)]
    res = compile_model(CholeskySolve().eval(), [samples[0][0]], samples, target=target)
    assert {"ptec::linalg_cholesky.out", "ptec::linalg_triangular_solve.out", "ptec::linalg_solve.out",
            "ptec::linalg_det.out", "ptec::linalg_eigh_vectors.out", "ptec::linalg_svd.out",
            "ptec::linalg_qr.out", "ptec::linalg_lu.out"} <= set(res.lowered.operators)
    board_matches_reference(res.data, samples[1][0].numpy(), target, tmp_path)


# -- ptec::linalg_eigh_vectors.out: eigh's eigenvectors -------------------------------------------------------
# ptec's normalisation: each eigenvector's first largest-magnitude component positive (an eigenvector is
# defined up to sign; torch's follows LAPACK's algorithm). Oracles that hold for any valid answer:
# |A V - V diag(lambda)| within VEC n EPS |A| (lambda torch's float64 eigenvalues) and |V^T V - I| within
# VEC n EPS; and, where an eigenvalue is apart from the others by a gap, its vector within
# FWD n EPS |A| / gap of torch's float64 one up to sign.
VEC = 4.0


def eigh_vectors_on_host(x: np.ndarray, upper: bool, tmp_path) -> np.ndarray:
    b = ProgramBuilder()
    t = b.tensor(ScalarType.FLOAT, list(x.shape))
    y = b.tensor(ScalarType.FLOAT, list(x.shape))
    b.call("ptec::linalg_eigh_vectors.out", self=t, upper=upper, out=y)
    return run_kernel(b, [t], [y], [np.ascontiguousarray(x, np.float32)], tmp_path)


def check_eigenvectors(a: np.ndarray, v: np.ndarray):
    n = a.shape[-1]
    a64, v64 = a.astype(np.float64), v.astype(np.float64)
    lam, tv = (t.numpy() for t in torch.linalg.eigh(torch.from_numpy(a64)))
    scale = np.abs(a64).max(axis=(-2, -1), keepdims=True)
    res = np.abs(a64 @ v64 - v64 * lam[..., None, :])
    assert (res <= VEC * n * EPS * scale).all(), f"residual {(res / scale).max():.2e} of |A|"
    orth = np.abs(np.swapaxes(v64, -1, -2) @ v64 - np.eye(n)).max()
    assert orth <= VEC * n * EPS, f"orthonormality {orth:.2e}"
    # the normalisation: each column's first largest |component| positive
    top = np.argmax(np.abs(v), axis=-2)[..., None, :]
    assert (np.take_along_axis(v, top, axis=-2) > 0).all()
    # torch's up to sign, where the eigenvalue is isolated
    gaps = np.full(lam.shape, np.inf)
    gaps[..., 1:] = np.minimum(gaps[..., 1:], np.diff(lam, axis=-1))
    gaps[..., :-1] = np.minimum(gaps[..., :-1], np.diff(lam, axis=-1))
    sign = np.where(np.sum(tv * v64, axis=-2, keepdims=True) < 0, -1.0, 1.0)
    err = np.abs(tv * sign - v64).max(axis=-2)
    bound = FWD * n * EPS * scale[..., 0] / np.minimum(gaps, scale[..., 0])   # (an only value: no gap)
    isolated = gaps > 1e-3 * scale[..., 0]
    assert (err[isolated] <= bound[isolated]).all(), (err[isolated] / bound[isolated]).max()


def sym(shape, seed):
    m = rand(shape, seed)
    return (m + np.swapaxes(m, -1, -2)).astype(np.float32)


EIGH = [
    ("1x1", sym((3, 1, 1), 100)),
    ("2x2 batched", sym((4, 2, 2), 101)),
    ("5x5", sym((2, 5, 5), 102)),
    ("8x8 4-D batch", sym((2, 2, 8, 8), 103)),
    ("16x16", sym((1, 16, 16), 104)),
    ("2-D 6x6", sym((6, 6), 105)),
    ("repeated eigenvalues Q diag(1, 1, 1, 3, 3) Q^T", None),
    ("rank 2 of 7x7", None),
    ("graded D S D", (sym((2, 6, 6), 106) * (np.float32(10.0) ** np.arange(-2, 4, dtype=np.float32))[:, None]
                      * (np.float32(10.0) ** np.arange(-2, 4, dtype=np.float32))[None, :]).astype(np.float32)),
    ("large entries", sym((2, 5, 5), 107) * np.float32(1e30)),
]


def _eigh_case(name, a):
    if a is not None:
        return a
    q = np.linalg.qr(rand((5, 5), 108).astype(np.float64))[0]
    if name.startswith("repeated"):
        return ((q * np.array([1.0, 1.0, 1.0, 3.0, 3.0])) @ q.T).astype(np.float32)[None]
    m = rand((7, 2), 109).astype(np.float64)
    return (m @ m.T).astype(np.float32)[None]


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("name,a", EIGH, ids=[e[0] for e in EIGH])
def test_eigh_vectors_are_eigenvectors(name, a, upper, tmp_path):
    a = _eigh_case(name, a)
    n = a.shape[-1]
    junk = np.where(np.tril(np.ones((n, n), bool), -1) if upper else np.triu(np.ones((n, n), bool), 1),
                    np.float32(np.nan), a)
    check_eigenvectors(a, eigh_vectors_on_host(junk, upper, tmp_path))


def test_eigh_vectors_follow_eigvalsh_order_and_non_finite_gives_nan(tmp_path):
    a = sym((3, 5, 5), 110)
    a[1, 3, 1] = np.nan                 # read (lower triangle)
    a[2, 0, 4] = np.inf                 # not read
    v = eigh_vectors_on_host(a, False, tmp_path)
    assert np.isnan(v[1]).all() and np.isfinite(v[[0, 2]]).all()
    low = np.tril(a[[0, 2]]) + np.swapaxes(np.tril(a[[0, 2]], -1), -1, -2)
    check_eigenvectors(low, v[[0, 2]])


def test_eigh_vectors_of_zero_is_the_identity(tmp_path):
    assert np.array_equal(eigh_vectors_on_host(np.zeros((2, 4, 4), np.float32), False, tmp_path),
                          np.broadcast_to(np.eye(4, dtype=np.float32), (2, 4, 4)))


CALLS_EIGH = [
    ("eigh eigenvectors", lambda a: torch.linalg.eigh(a).eigenvectors, (2, 6, 6)),
    ("eigh [1] UPLO=U", lambda a: torch.linalg.eigh(a, UPLO="U")[1], (3, 5, 5)),
    ("eigh eigenvalues", lambda a: torch.linalg.eigh(a)[0], (2, 7, 7)),
    ("eigh eigenvectors, 2-D", lambda a: torch.linalg.eigh(a)[1], (4, 4)),
]


@pytest.mark.parametrize("name,fn,shape", CALLS_EIGH, ids=[c[0] for c in CALLS_EIGH])
def test_eigh_calls_run_on_the_kernels(name, fn, shape, tmp_path):
    g = torch.Generator().manual_seed(sum(map(ord, name)))
    samples = []
    for _ in range(3):
        m = torch.randn(*shape, generator=g)
        samples.append((m + m.mT,))
    res = compile_model(Call(fn).eval(), [samples[0][0]], samples)
    prog = parse_program(res.data)
    n = shape[-1]
    for (x,) in samples:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert got.tobytes() == run_program(prog, [x.numpy()])[0].tobytes()
        if "eigenvalues" in name:
            lam = torch.linalg.eigvalsh(x.double()).numpy()
            assert np.abs(got - lam).max() <= 4 * n * EPS * np.abs(lam).max()
        else:
            check_eigenvectors(x.numpy(), got)


# -- ptec::linalg_svd.out: U, Vh, pinv ------------------------------------------------------------------------
# ptec's normalisation: each u_j's first largest-magnitude component positive, v_j flipped with it (a
# completed column alone likewise). Oracles for any valid answer (p = max(m, n), k = min(m, n), S torch's
# float64 values): U^T U = I and Vh Vh^T = I within VEC p EPS; A = U[:, :k] diag(S) Vh[:k] within VEC p EPS
# |A|; each isolated singular pair equal to torch's up to sign within FWD p EPS s_max / gap; pinv within
# FWD p EPS kappa' of torch.linalg.pinv (float64, same rtol), relative to its largest entry, kappa' the
# largest over the smallest value kept.

def svd_on_host(x: np.ndarray, which: int, full: bool, tmp_path, rtol: float = 0.0) -> np.ndarray:
    m, n = x.shape[-2:]
    k = min(m, n)
    shape = {0: (m, m if full else k), 1: (n if full else k, n), 2: (n, m)}[which]
    b = ProgramBuilder()
    t = b.tensor(ScalarType.FLOAT, list(x.shape))
    y = b.tensor(ScalarType.FLOAT, list(x.shape[:-2]) + list(shape))
    b.call("ptec::linalg_svd.out", self=t, which=which, full_matrices=full, rtol=rtol, out=y)
    return run_kernel(b, [t], [y], [np.ascontiguousarray(x, np.float32)], tmp_path)


def check_svd(a: np.ndarray, u: np.ndarray, vh: np.ndarray):
    m, n = a.shape[-2:]
    k, p = min(m, n), max(m, n)
    a64, u64, vh64 = (t.astype(np.float64) for t in (a, u, vh))
    tu, ts, tvh = (t.numpy() for t in torch.linalg.svd(torch.from_numpy(a64), full_matrices=False))
    for q, name in ((np.swapaxes(u64, -1, -2) @ u64, "U"), (vh64 @ np.swapaxes(vh64, -1, -2), "Vh")):
        assert np.abs(q - np.eye(q.shape[-1])).max() <= VEC * p * EPS, f"{name} not orthonormal"
    scale = np.abs(a64).max(axis=(-2, -1), keepdims=True)
    rec = (u64[..., :, :k] * ts[..., None, :]) @ vh64[..., :k, :]
    assert (np.abs(rec - a64) <= VEC * p * EPS * np.maximum(scale, 1e-30)).all(), "A != U S Vh"
    top = np.argmax(np.abs(u), axis=-2)[..., None, :]
    assert (np.take_along_axis(u, top, axis=-2) > 0).all(), "a column of U with its largest component negative"
    gaps = np.full(ts.shape, np.inf)
    gaps[..., 1:] = np.minimum(gaps[..., 1:], -np.diff(ts, axis=-1))
    gaps[..., :-1] = np.minimum(gaps[..., :-1], -np.diff(ts, axis=-1))
    isolated = gaps > 1e-3 * ts[..., :1]
    sign = np.where(np.sum(tu * u64[..., :, :k], axis=-2) < 0, -1.0, 1.0)
    err = np.maximum(np.abs(tu * sign[..., None, :] - u64[..., :, :k]).max(axis=-2),
                     np.abs(tvh * sign[..., :, None] - vh64[..., :k, :]).max(axis=-1))
    with np.errstate(invalid="ignore"):                # a zero matrix: nothing isolated
        bound = FWD * p * EPS * ts[..., :1] / np.minimum(gaps, ts[..., :1])  # (an only value: no gap)
    assert (err[isolated] <= bound[isolated]).all(), (err[isolated] / bound[isolated]).max()


def lowrank(shape, r, seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(*shape[:-1], r, generator=g, dtype=torch.float64)
            @ torch.randn(*shape[:-2], r, shape[-1], generator=g, dtype=torch.float64)).float().numpy()


SVD = [
    ("tall 6x4", rand((2, 6, 4), 120)),
    ("wide 3x7", rand((2, 3, 7), 121)),
    ("square 5x5 4-D batch", rand((2, 2, 5, 5), 122)),
    ("1x1", rand((3, 1, 1), 123)),
    ("Nx1", rand((2, 5, 1), 124)),
    ("1xN", rand((4, 6), 125)[None, :1]),
    ("rank 2 of 6x5", lowrank((2, 6, 5), 2, 126)),
    ("rank 1 of 3x8", lowrank((1, 3, 8), 1, 127)),
    ("zero 4x3", np.zeros((2, 4, 3), np.float32)),
    ("repeated values (orthogonal x 3)", (np.linalg.qr(rand((6, 6), 128).astype(np.float64))[0] * 3).astype(
        np.float32)[None]),
    ("large entries", rand((2, 5, 4), 129) * np.float32(1e30)),
    ("12x9", rand((1, 12, 9), 130)),
]


@pytest.mark.parametrize("full", [False, True])
@pytest.mark.parametrize("name,a", SVD, ids=[c[0] for c in SVD])
def test_svd_vectors(name, a, full, tmp_path):
    u, vh = svd_on_host(a, 0, full, tmp_path), svd_on_host(a, 1, full, tmp_path)
    m, n = a.shape[-2:]
    assert u.shape[-2:] == (m, m if full else min(m, n)) and vh.shape[-2:] == (n if full else min(m, n), n)
    check_svd(a, u, vh)


PINV = [
    ("tall 6x4", rand((2, 6, 4), 131), None),
    ("wide 3x7", rand((2, 3, 7), 132), None),
    ("square 5x5", rand((3, 5, 5), 133), None),
    ("1x1", rand((3, 1, 1), 134), None),
    ("rank 2 of 6x5, rtol 1e-4", lowrank((2, 6, 5), 2, 135), 1e-4),
    ("zero", np.zeros((1, 3, 4), np.float32), None),
]


@pytest.mark.parametrize("name,a,rtol", PINV, ids=[c[0] for c in PINV])
def test_pinv_matches_torch(name, a, rtol, tmp_path):
    m, n = a.shape[-2:]
    rtol = EPS * max(m, n) if rtol is None else rtol
    got = svd_on_host(a, 2, False, tmp_path, rtol=rtol)
    a64 = torch.from_numpy(a.astype(np.float64))
    want = torch.linalg.pinv(a64, rtol=rtol).numpy()
    s = torch.linalg.svdvals(a64).numpy()
    kept = np.where(s > rtol * s[..., :1], s, np.inf).min(axis=-1)
    kappa_kept = np.where(np.isfinite(kept), s[..., 0] / np.where(np.isfinite(kept), kept, 1.0), 1.0)
    err = np.abs(got - want).max(axis=(-2, -1))
    bound = FWD * max(m, n) * EPS * kappa_kept * np.maximum(np.abs(want).max(axis=(-2, -1)), 1e-30)
    assert (err <= bound).all() or not want.any() and not got.any(), (err, bound)


def test_svd_non_finite_gives_nan_for_its_matrix_only(tmp_path):
    a = rand((3, 4, 3), 136)
    a[1, 2, 0] = np.inf
    for which in (0, 1, 2):
        got = svd_on_host(a, which, False, tmp_path, rtol=1e-6)
        assert np.isnan(got[1]).all() and np.isfinite(got[[0, 2]]).all(), which


LSTSQ_B = torch.linspace(-1, 1, 12).reshape(6, 2)
CALLS_SVD = [
    ("linalg.svd U (full)", lambda a: torch.linalg.svd(a)[0], (2, 6, 4)),
    ("linalg.svd Vh", lambda a: torch.linalg.svd(a, full_matrices=False).Vh, (2, 3, 6)),
    ("linalg.svd S", lambda a: torch.linalg.svd(a, full_matrices=False).S, (2, 5, 4)),
    ("torch.svd V", lambda a: torch.svd(a)[2], (2, 6, 3)),
    ("linalg.pinv", torch.linalg.pinv, (2, 5, 3)),
    ("torch.pinverse", torch.pinverse, (3, 4)),
    ("Tensor.pinverse", lambda a: a.pinverse(), (2, 4, 4)),
    ("linalg.pinv rtol", lambda a: torch.linalg.pinv(a, rtol=1e-3), (2, 4, 6)),
    ("linalg.lstsq solution", lambda a: torch.linalg.lstsq(a, LSTSQ_B.expand(2, 6, 2)).solution, (2, 6, 4)),
]


@pytest.mark.parametrize("name,fn,shape", CALLS_SVD, ids=[c[0] for c in CALLS_SVD])
def test_svd_calls_run_on_the_kernels(name, fn, shape, tmp_path):
    g = torch.Generator().manual_seed(sum(map(ord, name)))
    samples = [(torch.randn(*shape, generator=g),) for _ in range(3)]
    res = compile_model(Call(fn).eval(), [samples[0][0]], samples)
    prog = parse_program(res.data)
    m, n = shape[-2:]
    for (x,) in samples:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert got.tobytes() == run_program(prog, [x.numpy()])[0].tobytes()
        a = x.numpy()
        a3 = a.reshape((-1, m, n))
        if name.startswith("linalg.svd U"):
            vh = svd_on_host(a3, 1, True, tmp_path)
            check_svd(a3, got.reshape(a3.shape[0], m, m), vh)
        elif name.startswith("linalg.svd Vh"):
            check_svd(a3, svd_on_host(a3, 0, False, tmp_path), got.reshape(a3.shape[0], min(m, n), n))
        elif name.startswith("torch.svd V"):
            check_svd(a3, svd_on_host(a3, 0, False, tmp_path), np.swapaxes(got, -1, -2).reshape(a3.shape[0], -1, n))
        else:
            with torch.no_grad():
                want = (torch.linalg.lstsq(x.double(), LSTSQ_B.double().expand(2, 6, 2)).solution if "lstsq" in name
                        else fn(x.double())).numpy()
            kappa_ = float(kappa(a).max())
            bound = FWD * max(m, n) * EPS * kappa_ ** 2 * max(float(np.abs(want).max()), 1.0)
            assert got.shape == want.shape and np.abs(got - want).max() <= bound, (name, np.abs(got - want).max())


RANKS = [
    ("full rank 5x4", rand((3, 5, 4), 140)),
    ("rank 2 of 6x5", lowrank((2, 6, 5), 2, 141)),
    ("rank 1 of 3x7", lowrank((2, 3, 7), 1, 142)),
    ("zero", np.zeros((2, 3, 3), np.float32)),
    ("2-D rank 3 of 4x4", lowrank((4, 4), 3, 143)),
]


@pytest.mark.parametrize("name,a", RANKS, ids=[c[0] for c in RANKS])
def test_matrix_rank_matches_torch(name, a, tmp_path):
    """int64 ranks equal to torch's float32 matrix_rank (the same default tolerance, epsilon max(m, n))."""
    fn = torch.linalg.matrix_rank
    x = torch.from_numpy(a)
    res = compile_model(Call(fn).eval(), [x], [(x,), (x * 0.5,)])
    prog = parse_program(res.data)
    got = host_runtime.run(prog, res.data, [a], workdir=str(tmp_path))[0]
    assert got.dtype == np.int64 and np.array_equal(got, fn(x).numpy()), (got, fn(x))


REFUSED_SVD = [
    ("pinv atol", lambda x: torch.linalg.pinv(x, atol=0.1), "not atol"),
    ("lstsq B of no column", lambda x: torch.linalg.lstsq(x, x[..., :0]).solution, "at least one column"),
    ("matrix_rank tol", lambda x: torch.linalg.matrix_rank(x, tol=0.1), "not atol / tol"),
]


@pytest.mark.parametrize("name,fn,says", REFUSED_SVD, ids=[r[0] for r in REFUSED_SVD])
def test_uncovered_svd_forms_are_refused_in_one_line(name, fn, says):
    x = torch.randn(2, 5, 5)
    with pytest.raises((CompileError, UnsupportedOperator)) as e:
        compile_model(Call(fn).eval(), [x], [(x,), (x * 0.5,)])
    assert says in str(e.value) and "\n" not in str(e.value), str(e.value)


# -- ptec::linalg_qr.out: Householder Q and R ------------------------------------------------------------------
# LAPACK's convention (R_jj = -sign(x_0) |x|, H = I where the column is already reduced), which torch's R
# follows; the oracles hold for any valid answer: Q^T Q = I within VEC m EPS, A = Q R within VEC m EPS |A|,
# R upper triangular (exact zeros below), and Q, R equal to torch's float64 ones up to a sign per row of R
# (column of Q) within FWD m EPS kappa, relative to |A|.

def qr_on_host(x: np.ndarray, which: int, complete: bool, tmp_path) -> np.ndarray:
    m, n = x.shape[-2:]
    k = min(m, n)
    shape = (m, m if complete else k) if which == 0 else (m if complete else k, n)
    b = ProgramBuilder()
    t = b.tensor(ScalarType.FLOAT, list(x.shape))
    y = b.tensor(ScalarType.FLOAT, list(x.shape[:-2]) + list(shape))
    b.call("ptec::linalg_qr.out", self=t, which=which, complete=complete, out=y)
    return run_kernel(b, [t], [y], [np.ascontiguousarray(x, np.float32)], tmp_path)


QR = [
    ("tall 6x4", rand((2, 6, 4), 150)),
    ("wide 3x7", rand((2, 3, 7), 151)),
    ("square 5x5 4-D batch", rand((2, 2, 5, 5), 152)),
    ("1x1", rand((3, 1, 1), 153)),
    ("Nx1", rand((2, 5, 1), 154)),
    ("1xN", rand((1, 1, 6), 155)),
    ("upper triangular already", np.triu(rand((2, 4, 4), 156))),
    ("rank 2 of 6x5", lowrank((2, 6, 5), 2, 157)),
    ("zero", np.zeros((2, 4, 3), np.float32)),
    ("large entries", rand((2, 5, 4), 158) * np.float32(1e30)),
    ("graded columns", rand((2, 6, 6), 159) * np.float32(10.0) ** np.arange(-3, 3, dtype=np.float32)),
]


@pytest.mark.parametrize("complete", [False, True])
@pytest.mark.parametrize("name,a", QR, ids=[c[0] for c in QR])
def test_qr_matches_torch(name, a, complete, tmp_path):
    m, n = a.shape[-2:]
    k = min(m, n)
    q, r = qr_on_host(a, 0, complete, tmp_path), qr_on_host(a, 1, complete, tmp_path)
    assert q.shape[-2:] == (m, m if complete else k) and r.shape[-2:] == (m if complete else k, n)
    q64, r64, a64 = (t.astype(np.float64) for t in (q, r, a))
    assert np.abs(np.swapaxes(q64, -1, -2) @ q64 - np.eye(q.shape[-1])).max() <= VEC * m * EPS
    scale = np.maximum(np.abs(a64).max(axis=(-2, -1), keepdims=True), 1e-30)
    assert (np.abs(q64 @ r64 - a64) <= VEC * m * EPS * scale).all(), "A != Q R"
    assert (np.tril(r, -1) == 0).all(), "R not upper triangular"
    tq, tr = (t.numpy() for t in torch.linalg.qr(torch.from_numpy(a64), mode="complete" if complete else "reduced"))
    sign = np.where(np.sum(tq[..., :, :k] * q64[..., :, :k], axis=-2) < 0, -1.0, 1.0)
    assert (sign == 1).all() or "rank" in name or "zero" in name, "signs differ from LAPACK's"
    bound = FWD * m * EPS * float(np.clip(kappa(a[..., :, :k]) if m >= n else kappa(a[..., :, :m]), 1, 1e4).max())
    if "rank" not in name and "zero" not in name:
        assert np.abs(tq[..., :, :k] * sign[..., None, :] - q64[..., :, :k]).max() <= bound
        assert (np.abs(tr[..., :k, :] * sign[..., :, None] - r64[..., :k, :]) <= bound * scale).all()


def test_qr_non_finite_gives_nan_for_its_matrix_only(tmp_path):
    a = rand((3, 4, 3), 160)
    a[2, 1, 1] = np.nan
    for which in (0, 1):
        got = qr_on_host(a, which, False, tmp_path)
        assert np.isnan(got[2]).all() and np.isfinite(got[:2]).all()


CALLS_QR = [
    ("linalg.qr Q", lambda a: torch.linalg.qr(a)[0], (2, 6, 4)),
    ("linalg.qr R", lambda a: torch.linalg.qr(a).R, (2, 6, 4)),
    ("linalg.qr complete Q", lambda a: torch.linalg.qr(a, mode="complete").Q, (2, 5, 3)),
    ("linalg.qr mode r", lambda a: torch.linalg.qr(a, mode="r")[1], (3, 7)),
    ("torch.qr", lambda a: torch.qr(a)[0], (2, 5, 5)),
    ("Tensor.qr(some=False) R", lambda a: a.qr(False)[1], (2, 5, 3)),
]


@pytest.mark.parametrize("name,fn,shape", CALLS_QR, ids=[c[0] for c in CALLS_QR])
def test_qr_calls_run_on_the_kernel(name, fn, shape, tmp_path):
    g = torch.Generator().manual_seed(sum(map(ord, name)))
    samples = [(torch.randn(*shape, generator=g),) for _ in range(3)]
    res = compile_model(Call(fn).eval(), [samples[0][0]], samples)
    assert "ptec::linalg_qr.out" in res.lowered.operators
    prog = parse_program(res.data)
    m = shape[-2]
    for (x,) in samples:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert got.tobytes() == run_program(prog, [x.numpy()])[0].tobytes()
        with torch.no_grad():
            want = fn(x.double()).numpy()
        bound = FWD * m * EPS * float(kappa(x.numpy()).max()) * max(float(np.abs(want).max()), 1.0)
        assert got.shape == want.shape and np.abs(got - want).max() <= bound, (name, np.abs(got - want).max())


def test_qr_mode_r_q_is_refused_in_one_line():
    x = torch.randn(2, 5, 5)
    with pytest.raises((CompileError, UnsupportedOperator)) as e:
        compile_model(Call(lambda a: torch.linalg.qr(a, mode="r")[0]).eval(), [x], [(x,), (x * 0.5,)])
    assert "its Q is empty" in str(e.value) and "\n" not in str(e.value), str(e.value)
