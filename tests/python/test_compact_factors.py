"""torch.geqrf (a, tau) and torch.linalg.cholesky_ex's info
(capture_compact_factors, issue 15) against torch.

geqrf runs on ptec::linalg_qr.out (which 2: LAPACK's compact form, 3:
tau) in fp32: relative error against torch's float64 geqrf on random
matrices (tall, wide, square, batched, one row or column), exact where no
rounding enters (an upper-triangular matrix: tau 0, a = A), and
householder_product of its own reflectors, in the same program, torch's Q.
cholesky_ex's info (ptec::linalg_cholesky_info.out, int32) is exact:
positive-definite matrices 0, others failing at order 1, in the middle and
at n (batched, upper=True, check_errors=False, a zero pivot of a singular
PSD matrix); its L where info > 0 is ptec's decision (docs/aot.md): the
factor's columns before that order, NaN from it on. Every program is also
run by the reference interpreter, whose bytes ptec-run's must equal."""
import numpy as np
import pytest
import torch

from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.pte import parse_program
from model_checks import Call


def run(fn, x, tmp_path, calibration=None, outputs=1):
    """fn compiled on x (or a finite calibration sample), run by ptec-run
    on x; its bytes the reference interpreter's."""
    cal = x if calibration is None else calibration
    res = compile_model(Call(fn).eval(), [cal], [(cal,)])
    assert res.lowered.fallbacks, "an fp32 path"
    prog = parse_program(res.data)
    got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))
    want = run_program(prog, [x.numpy()])
    assert len(got) == len(want) == outputs
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)
    return got[0] if outputs == 1 else got


def rel(got, ref):
    return np.abs(got - ref).max() / max(np.abs(ref).max(), 1e-30)


def uniform(shape, seed):
    return torch.rand(shape, generator=torch.Generator().manual_seed(seed)) * 2 - 1


GEQRF_SHAPES = [(5, 3), (3, 5), (4, 4), (2, 6, 4), (2, 3, 7), (2, 2, 5, 5), (1, 4), (4, 1), (1, 1)]


@pytest.mark.parametrize("shape", GEQRF_SHAPES, ids=[str(s) for s in GEQRF_SHAPES])
def test_geqrf_against_torch(shape, tmp_path):
    x = uniform(shape, sum(shape))
    ref_a, ref_tau = (t.numpy() for t in torch.geqrf(x.double()))
    a = run(lambda v: torch.geqrf(v)[0], x, tmp_path)
    tau = run(lambda v: v.geqrf().tau, x, tmp_path)
    assert a.shape == ref_a.shape and tau.shape == ref_tau.shape
    assert rel(a, ref_a) <= 1e-6, rel(a, ref_a)
    assert np.abs(tau - ref_tau).max() <= 1e-6          # tau in [1, 2] or 0
    # the last column of a square matrix (and a single row) has no reflection: tau 0 as LAPACK's
    k = min(shape[-2:])
    if shape[-2] <= shape[-1]:
        assert (tau[..., k - 1] == 0).all()


def test_geqrf_of_reduced_columns_is_exact(tmp_path):
    """Columns already zero below the diagonal (upper-triangular, a zero
    matrix, a negative diagonal entry over zeros): H = I, tau = 0, a = A,
    as LAPACK's dlarfg (no sign flip)."""
    x = torch.tensor([[[2.0, 5.0, 1.0], [0.0, -3.0, 7.0], [0.0, 0.0, 4.0]],
                      [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]],
                      [[-1.5, 2.0, 3.0], [0.0, 1.0, 2.0], [0.0, 2.0, 5.0]]])
    a = run(lambda v: torch.geqrf(v).a, x, tmp_path)
    tau = run(lambda v: torch.geqrf(v)[1], x, tmp_path)
    ref_a, ref_tau = (t.numpy() for t in torch.geqrf(x.double()))
    np.testing.assert_array_equal(tau[:2], ref_tau[:2])
    np.testing.assert_array_equal(a[:2], ref_a[:2])
    assert tau[2, 0] == 0 and a[2, 0, 0] == -1.5                  # its first column reduced already
    assert rel(a[2], ref_a[2]) <= 1e-6 and np.abs(tau[2] - ref_tau[2]).max() <= 1e-6


TINY = [
    # entries below ~2^-75 of the matrix's largest: their float32 squares on the scaled copy are 0, yet the
    # column is not reduced (R_11 -7.07e19, tau 1.707 as LAPACK's)
    ("tiny column", [[1e-20, 1e20], [1e-20, 0.0]]),
    ("tiny entry below 1", [[1.0], [1e-30]]),
    # -0.0 on the diagonal: LAPACK's SIGN(., -0.0) is negative, so R_00 = +|x|
    ("negative zero diagonal", [[-0.0], [1.0]]),
    ("negative zero diagonal 3x2", [[-0.0, 2.0], [3.0, -1.0], [-4.0, 0.5]]),
]


@pytest.mark.parametrize("name,a", TINY, ids=[t[0] for t in TINY])
def test_geqrf_reduces_every_column_not_exactly_zero(name, a, tmp_path):
    """A column counts as reduced (tau 0) only when every entry below the
    diagonal is exactly 0; its norm is taken on the column scaled by its own
    largest entry (dnrm2 / dlarfg), and -0.0 takes SIGN's negative branch."""
    x = torch.tensor(a)
    ref_a, ref_tau = (t.numpy() for t in torch.geqrf(x.double()))
    got_a = run(lambda v: torch.geqrf(v)[0], x, tmp_path)
    tau = run(lambda v: torch.geqrf(v)[1], x, tmp_path)
    # float32 entries of 1e-20 / 1e20 go subnormal on the copy scaled by the largest: ~17 bits left
    assert np.abs(tau - ref_tau).max() <= 1e-6, (tau, ref_tau)
    assert (np.sign(got_a) == np.sign(ref_a)).all(), (got_a, ref_a)
    assert (np.abs(got_a - ref_a) <= 1e-5 * np.abs(ref_a)).all(), (got_a, ref_a)
    q = run(lambda v: torch.linalg.qr(v).Q, x, tmp_path)
    r = run(lambda v: torch.linalg.qr(v).R, x, tmp_path)
    tq, tr = (t.numpy() for t in torch.linalg.qr(x.double()))
    assert np.abs(q - tq).max() <= 1e-5 and (np.abs(r - tr) <= 1e-5 * np.abs(tr).max()).all(), (q, tq, r, tr)


@pytest.mark.parametrize("shape", [(2, 5, 3), (4, 4), (2, 6, 6)])
def test_householder_product_of_geqrf_is_q(shape, tmp_path):
    """torch.linalg.householder_product(*torch.geqrf(A)) in one program is
    torch.linalg.qr(A)'s Q."""
    x = uniform(shape, 7 + sum(shape))
    got = run(lambda v: torch.linalg.householder_product(*torch.geqrf(v)), x, tmp_path)
    q = torch.linalg.qr(x.double())[0].numpy()
    assert np.abs(got - q).max() <= 1e-5


def spd(n, batch, seed):
    b = uniform((batch, n, n), seed).double()
    return b @ b.mT + torch.eye(n, dtype=torch.float64)


def failing_at(n, orders, seed):
    """[len(orders), n, n] float32: SPD matrices, the one of order f > 0
    made to fail at its f-th leading minor (a_{f-1,f-1} lowered by itself
    plus 10: that pivot about -10 or less), 0 left positive-definite."""
    a = spd(n, len(orders), seed)
    for b, f in enumerate(orders):
        if f:
            a[b, f - 1, f - 1] -= a[b, f - 1, f - 1] + 10.0
    return a.float()


def factor_columns(a, f):
    """float64 L's first f - 1 columns (all rows) of a's lower triangle."""
    n = a.shape[-1]
    L = np.zeros((n, n))
    for j in range(f - 1):
        L[j, j] = np.sqrt(a[j, j] - L[j, :j] @ L[j, :j])
        for i in range(j + 1, n):
            L[i, j] = (a[i, j] - L[i, :j] @ L[j, :j]) / L[j, j]
    return L


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_ex_info_exact(upper, tmp_path):
    orders = [0, 1, 3, 6, 0, 4]
    x = failing_at(6, orders, 3)
    # the triangle not read holds junk (-50: read, every matrix would fail at order 2 or before)
    junk = torch.tril(torch.ones(6, 6), -1).bool() if upper else torch.triu(torch.ones(6, 6), 1).bool()
    x = torch.where(junk, torch.full((), -50.0), x)
    info = run(lambda v: torch.linalg.cholesky_ex(v, upper=upper, check_errors=False)[1], x, tmp_path)
    assert info.dtype == np.int32
    ref = torch.linalg.cholesky_ex(x.double(), upper=upper)[1].numpy()
    np.testing.assert_array_equal(info, ref)
    np.testing.assert_array_equal(info, orders)
    L = run(lambda v: torch.linalg.cholesky_ex(v, upper=upper).L, x, tmp_path)
    for b, f in enumerate(orders):
        got = L[b].T if upper else L[b]
        if f == 0:
            ref_l = torch.linalg.cholesky(x[b].double(), upper=upper).numpy()
            assert rel(L[b], ref_l) <= 1e-6
            continue
        # ptec's L where info > 0: the factor's columns before order f, NaN in the triangle from it on
        low = (x[b].double().triu().mT if upper else x[b].double().tril()).numpy()
        want = factor_columns(low, f)
        assert rel(got[:, :f - 1], want[:, :f - 1]) <= 1e-6 if f > 1 else True
        tri = np.tril(np.ones((6, 6), bool))
        assert np.isnan(got[:, f - 1:][tri[:, f - 1:]]).all()
        assert (got[~tri] == 0).all()


def test_cholesky_ex_info_shapes_and_zero_pivot(tmp_path):
    """A 2-D A's info is 0-d; a 4-D batch keeps its dims; a singular PSD
    matrix (v v^T, integers: its second pivot exactly 0) fails at 2 as
    LAPACK's test (ajj <= 0), an indefinite 2x2 at 2, a negative a_00 at 1."""
    v = torch.tensor([1.0, 2.0, 3.0])
    got = run(lambda a: torch.linalg.cholesky_ex(a).info, torch.outer(v, v), tmp_path)
    assert got.shape == () and int(got) == 2 == int(torch.linalg.cholesky_ex(torch.outer(v, v).double())[1])
    x = failing_at(3, [0, 2, 1, 3, 0, 0], 5).reshape(2, 3, 3, 3)
    x[1, 1] = torch.tensor([[1.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    x[1, 2] = torch.diag(torch.tensor([-1.0, 2.0, 3.0]))
    got = run(lambda a: torch.linalg.cholesky_ex(a)[1], x, tmp_path)
    assert got.shape == (2, 3)
    np.testing.assert_array_equal(got, torch.linalg.cholesky_ex(x.double())[1].numpy())
    np.testing.assert_array_equal(got, [[0, 2, 1], [3, 2, 1]])


def test_cholesky_ex_info_non_finite(tmp_path):
    """An inf or a NaN in the triangle read is computed through, as LAPACK:
    a NaN at (2, 1) reaches the third pivot, a -inf diagonal fails at once,
    a +inf diagonal passes (its column divided by inf)."""
    x = torch.eye(4).repeat(4, 1, 1) * 2
    x[0, 2, 1] = float("nan")
    x[1, 1, 1] = float("-inf")
    x[2, 0, 0] = float("inf")
    x[3, 3, 3] = float("nan")
    got = run(lambda a: torch.linalg.cholesky_ex(a)[1], x, tmp_path, calibration=torch.eye(4).repeat(4, 1, 1))
    np.testing.assert_array_equal(got, torch.linalg.cholesky_ex(x.double())[1].numpy())
    np.testing.assert_array_equal(got, [3, 2, 0, 4])


def test_cholesky_ex_both_results_in_one_program(tmp_path):
    """L and info of one call, both program outputs."""
    x = failing_at(4, [0, 2, 0], 9)
    L, info = run(lambda a: tuple(torch.linalg.cholesky_ex(a)), x, tmp_path, outputs=2)
    ref = torch.linalg.cholesky_ex(x.double())
    np.testing.assert_array_equal(info, ref.info.numpy())
    assert rel(L[[0, 2]], ref.L[[0, 2]].numpy()) <= 1e-6 and np.isnan(L[1, 1:, 1]).all()
