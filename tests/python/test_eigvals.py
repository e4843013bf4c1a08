"""General (non-symmetric) eigenvalues (issue 15): ptec::linalg_eigvals.out
(power-of-two scaling, Hessenberg reduction, Francis double-shift QR in
fp32) and torch.linalg.eigvals / torch.linalg.eig's eigenvalues captured as
complex [..., n, 2] pairs (ptec.capture_eig), read by the complex readers.

Oracle: torch.linalg.eigvals in float64 on the same float32 matrices. The
order of the eigenvalues is not torch's (LAPACK geev's, deflation's,
undefined): ptec's is real part ascending, then imaginary part descending.
So the checks are order-free: the multiset of ptec's values matched to
torch's (each value within TOL n EPS |A|_2 of one of torch's and the other
way round, for matrices whose eigenvalues are well conditioned: random
Gaussian, triangular, orthogonal, companion of distinct roots), the sum
equal to the trace and the product to det (relative to |A|), then equality
after sorting both in ptec's order (and ptec's own order asserted). A
defective (Jordan) block's eigenvalue moves as the n-th root of the
rounding: its bound is that. The host runtime's bytes are the reference
interpreter's (ptec.reference.linalg repeats the kernel's float32 steps),
checked on every kernel run here."""
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
from ptec.reference.linalg import eigvals as ref_eigvals
from model_checks import Call

EPS = float(np.finfo(np.float32).eps)
TOL = 1.0


def kernel(x, tmp_path):
    """ptec::linalg_eigvals.out on x [..., n, n] by ptec-run; its bytes the
    reference interpreter's."""
    x = np.ascontiguousarray(x, np.float32)
    b = ProgramBuilder()
    a = b.tensor(ScalarType.FLOAT, list(x.shape))
    y = b.tensor(ScalarType.FLOAT, list(x.shape[:-1]) + [2])
    b.call("ptec::linalg_eigvals.out", self=a, out=y)
    b.set_io([a], [y])
    data = serialize_program(b.build())
    prog = parse_program(data)
    got = host_runtime.run(prog, data, [x], workdir=str(tmp_path))[0]
    want = run_program(prog, [x])[0]
    assert got.tobytes() == want.tobytes(), "ptec-run differs from the reference interpreter"
    assert got.tobytes() == ref_eigvals(x).tobytes()
    return got


def complex_of(pairs):
    return pairs[..., 0].astype(np.float64) + 1j * pairs[..., 1].astype(np.float64)


def ptec_order(z):
    """z (1-D complex) in ptec's order: real ascending, then imaginary descending."""
    return np.array(sorted(z, key=lambda c: (c.real, -c.imag)))


def conditions(a):
    """Each of torch's float64 eigenvalues of a and its condition number
    |x| |y| (right and left eigenvectors, y^H x = 1): the factor by which a
    perturbation of A moves it (1 for a normal matrix)."""
    w, v = torch.linalg.eig(torch.from_numpy(a).double())
    left = torch.linalg.inv(v)
    kappa = torch.linalg.vector_norm(v, dim=0) * torch.linalg.vector_norm(left, dim=1)
    return w.numpy(), kappa.numpy()


def check_matrix(a, got, tol):
    """got [n, 2] against torch's float64 eigenvalues of a [n, n]: ptec's
    order, the multiset (each of torch's values within tol kappa_i n EPS
    |A|_2 of one of ptec's and each of ptec's within tol max(kappa) n EPS
    |A|_2 of one of torch's), trace, det, equality after sorting both;
    returns the worst distance in units of kappa_i n EPS |A|_2."""
    n = a.shape[-1]
    z = complex_of(got)
    assert all((z[i].real, -z[i].imag) <= (z[i + 1].real, -z[i + 1].imag) for i in range(n - 1)), z
    want, kappa = conditions(a)
    norm = float(np.linalg.norm(a.astype(np.float64), 2))
    scale = n * EPS * max(norm, np.finfo(np.float32).tiny)
    d = np.abs(z[:, None] - want[None, :])
    worst = float((d.min(axis=0) / (kappa * scale)).max())
    assert worst <= tol, (worst, z, want, kappa)
    assert d.min(axis=1).max() <= tol * kappa.max() * scale, (z, want)
    assert abs(z.sum() - np.trace(a.astype(np.float64))) <= tol * kappa.max() * scale * n
    assert abs(np.prod(z) - np.prod(want)) <= tol * kappa.max() * n * scale * max(norm, 1e-30) ** (n - 1)
    # sorted both ways: one to one, in ptec's order (conjugate pairs are exact conjugates in both)
    ws = ptec_order(want)
    assert np.abs(z - ws).max() <= 2 * tol * kappa.max() * scale, (z, ws)
    return worst


def rng_matrices(seed, shape):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7, 8, 12, 16, 24, 32])
def test_random_matrices(n, tmp_path):
    x = rng_matrices(n, (3, n, n))
    got = kernel(x, tmp_path)
    assert got.shape == (3, n, 2)
    worst = max(check_matrix(x[b], got[b], TOL) for b in range(3))
    assert worst > 0 or n == 1


def test_batched_leading_dims_and_scales(tmp_path):
    """[2, 3, 6, 6] with matrices scaled by 2^-100 .. 2^100 and 1e30: the
    power-of-two scaling keeps every step in range."""
    x = rng_matrices(7, (2, 3, 6, 6))
    x[0, 1] *= np.float32(2.0 ** -100)
    x[1, 0] *= np.float32(2.0 ** 100)
    x[1, 2] *= np.float32(1e30)
    got = kernel(x, tmp_path)
    for i in range(2):
        for j in range(3):
            check_matrix(x[i, j], got[i, j], TOL)


STRUCTURED = [
    ("rotation 2x2 (a pure conjugate pair)", np.array([[0, -1], [1, 0]], np.float32)),
    ("upper triangular", np.triu(rng_matrices(3, (6, 6)))),
    ("lower triangular", np.tril(rng_matrices(4, (6, 6)))),
    ("orthogonal (all |lambda| = 1)", np.linalg.qr(rng_matrices(5, (9, 9)).astype(np.float64))[0].astype(np.float32)),
    ("companion of 1..6", np.vstack([-np.poly(np.arange(1, 7))[None, 1:],
                                     np.eye(5, 6)]).astype(np.float32)),
    ("cyclic shift 8 (roots of unity)", np.roll(np.eye(8, dtype=np.float32), 1, axis=0)),
    ("symmetric", (lambda m: (m + m.T) / 2)(rng_matrices(6, (10, 10)))),
    ("rank one", np.outer(np.arange(1, 6), np.arange(2, 7)).astype(np.float32)),
    ("diagonal with ties", np.diag([2, -1, 2, 0, -1]).astype(np.float32)),
    ("block conjugate pairs with equal real parts", np.array(
        [[1, -2, 0, 0], [2, 1, 0, 0], [0, 0, 1, -3], [0, 0, 3, 1]], np.float32)),
]


@pytest.mark.parametrize("name,a", STRUCTURED, ids=[s[0] for s in STRUCTURED])
def test_structured_matrices(name, a, tmp_path):
    got = kernel(a[None], tmp_path)[0]
    check_matrix(a, got, TOL)
    if "ties" in name:
        assert got.tolist() == [[-1, 0], [-1, 0], [0, 0], [2, 0], [2, 0]]
    if "equal real parts" in name:
        # ptec's order: real part ascending, then imaginary part descending: 1+3i, 1+2i, 1-2i, 1-3i
        np.testing.assert_allclose(got, [[1, 3], [1, 2], [1, -2], [1, -3]], atol=8 * EPS)


def test_wide_exponents_and_small_integer_matrices(tmp_path):
    """40 7x7 matrices: entries of exponents 2^-60 .. 2^60 mixed in one
    matrix (graded, unbalanced: ptec does not balance) and, every fifth,
    integers in [-2, 2] (ties, zeros, singular, some defective): all
    converge (no NaN), each of torch's values within TOL kappa_i n EPS
    |A|_2 of one of ptec's (measured 0.52 of it), the sum the trace."""
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((40, 7, 7)) * np.exp2(rng.integers(-60, 60, (40, 7, 7)))).astype(np.float32)
    x[::5] = rng.integers(-2, 3, (8, 7, 7)).astype(np.float32)
    got = kernel(x, tmp_path)
    assert not np.isnan(got).any()
    for a, g in zip(x, got):
        want, kappa = conditions(a)
        z = complex_of(g)
        norm = float(np.linalg.norm(a.astype(np.float64), 2))
        d = np.abs(z[:, None] - want[None, :]).min(axis=0)
        assert (d <= TOL * kappa * 7 * EPS * norm).all(), (d, kappa)
        assert abs(z.sum() - np.trace(a.astype(np.float64))) <= 7 * 7 * EPS * norm * 4


def test_defective_block_within_its_root_of_the_rounding(tmp_path):
    """A Jordan block J_5(2): the eigenvalue 2 moves by the 5th root of a
    perturbation of n EPS: each value within 2 (5 EPS)^(1/5) of 2."""
    a = (2 * np.eye(5) + np.eye(5, k=1)).astype(np.float32)
    got = complex_of(kernel(a[None], tmp_path)[0])
    assert np.abs(got - 2).max() <= 2 * (5 * EPS) ** 0.2
    assert abs(got.sum() - 10) <= 10 * 5 * EPS


def test_zero_and_non_finite_matrices(tmp_path):
    x = np.zeros((4, 3, 3), np.float32)
    x[1, 2, 0] = np.inf
    x[2, 0, 1] = np.nan
    x[3] = rng_matrices(1, (3, 3))
    got = kernel(x, tmp_path)
    assert (got[0] == 0).all()
    assert np.isnan(got[1]).all() and np.isnan(got[2]).all()
    check_matrix(x[3], got[3], TOL)


def test_reference_is_deterministic_and_its_order_documented():
    x = rng_matrices(11, (5, 5))
    a, b = ref_eigvals(x), ref_eigvals(x.copy())
    assert a.tobytes() == b.tobytes()
    z = complex_of(a)
    assert list(z) == list(ptec_order(z))


# -- capture: eigvals / eig's eigenvalues as complex values ----------------------------------------------------

def sorted_pairs(z):
    """[..., n] complex -> [..., n, 2], each row sorted in ptec's order."""
    out = np.zeros(z.shape + (2,))
    for idx in np.ndindex(z.shape[:-1]):
        s = ptec_order(z[idx])
        out[idx] = np.stack([s.real, s.imag], -1)
    return out


CALLS = [
    ("eigvals abs", lambda x: torch.linalg.eigvals(x[..., :6]).abs(), "abs"),
    ("eigvals real", lambda x: torch.linalg.eigvals(x[..., :6]).real, "real"),
    ("eig eigenvalues view_as_real", lambda x: torch.view_as_real(torch.linalg.eig(x[..., :6])[0]), "pairs"),
    ("eig .eigenvalues imag", lambda x: torch.linalg.eig(x[..., :6]).eigenvalues.imag, "imag"),
    ("eigvals input= keyword, abs sum", lambda x: torch.linalg.eigvals(input=x[..., :6]).abs().sum(-1), "sum"),
]


@pytest.mark.parametrize("name,fn,kind", CALLS, ids=[c[0] for c in CALLS])
def test_calls_run_on_the_kernel(name, fn, kind, tmp_path):
    g = torch.Generator().manual_seed(sum(map(ord, name)))
    samples = [(torch.rand(2, 6, 7, generator=g) * 2 - 1,) for _ in range(3)]
    res = compile_model(Call(fn).eval(), [samples[0][0]], samples)
    assert "ptec::linalg_eigvals.out" in res.lowered.operators
    prog = parse_program(res.data)
    for (x,) in samples:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0].astype(np.float64)
        assert got.tobytes() == run_program(prog, [x.numpy()])[0].astype(np.float64).tobytes()
        # the values of A as the program reads it: x's int8 rounding first (a quantize at the input)
        a = x[..., :6].double()
        want = sorted_pairs(torch.linalg.eigvals(a).numpy())       # ptec's order, torch's values
        cplx = want[..., 0] + 1j * want[..., 1]
        want = {"abs": np.abs(cplx), "real": want[..., 0], "imag": want[..., 1], "pairs": want,
                "sum": np.abs(cplx).sum(-1)}[kind]
        # the input's int8 rounding (step 2 / 255 over [-1, 1]: |dA|_2 <= |dA|_F <= 6 / 255) moves an
        # eigenvalue by at most about kappa_i |dA|_2 (first order; twice that allowed), a sum of 6 by 6 times
        kappa = max(conditions(m.numpy())[1].max() for m in a.reshape(-1, 6, 6))
        bound = 2 * kappa * 6 / 255 * (6 if kind == "sum" else 1)
        if kind in ("real", "imag", "pairs"):
            # ptec sorts its own values: an eigenvalue whose real part is within the rounding of another's
            # can swap places; compare as multisets of rows then
            if kind == "pairs":
                g2 = complex_of(got.astype(np.float32))
                w2 = want[..., 0] + 1j * want[..., 1]
                for idx in np.ndindex(g2.shape[:-1]):
                    d = np.abs(g2[idx][:, None] - w2[idx][None, :])
                    assert d.min(axis=1).max() <= bound and d.min(axis=0).max() <= bound, name
                continue
            got, want = np.sort(got, -1), np.sort(want, -1)
        if kind == "abs":
            got, want = np.sort(got, -1), np.sort(want, -1)
        assert got.shape == want.shape, (got.shape, want.shape)
        assert np.abs(got - want).max() <= bound, (name, np.abs(got - want).max())


REFUSED = [
    ("eigvals of a non-square matrix view", lambda x: torch.linalg.eigvals(x[..., :4]).abs(), "square"),
    # (out= into a tensor made in forward is the call's result: capture_out_arguments, test_io_forms.py)
    ("eigvals as a complex program output", lambda x: torch.linalg.eigvals(x), "view_as_real"),
]


@pytest.mark.parametrize("name,fn,says", REFUSED, ids=[r[0] for r in REFUSED])
def test_uncovered_forms_are_refused_in_one_line(name, fn, says):
    x = torch.randn(2, 5, 5)
    with pytest.raises((CompileError, UnsupportedOperator, RuntimeError)) as e:
        compile_model(Call(fn).eval(), [x], [(x,), (x * 0.5,)])
    assert says in str(e.value) and "\n" not in str(e.value), str(e.value)
