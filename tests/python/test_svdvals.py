"""ptec::linalg_svdvals.out (issue 15): the singular values of [..., m, n]
by one-sided Jacobi in fp32, and the calls routed to it (torch.linalg.svdvals,
matrix_norm / norm of ord 2, -2, 'nuc', cond of p None / 2 / -2, any matrix
size); and
ptec::linalg_eigvalsh.out, the eigenvalues of symmetric [..., n, n] by
cyclic Jacobi (torch.linalg.eigvalsh, either triangle, any n).

Oracle: torch.linalg.svdvals / eigvalsh in float64. Tolerance: every value
within TOL(p) = 4 * p * FLT_EPSILON (p = max(m, n)) of the largest singular
value (|eigenvalue|) of torch's: Jacobi's values are within a few roundings per row of the
exact ones, relative to the largest (a rank-deficient matrix's zero values
come out at rounding size, as torch's float32 LAPACK gives them). The
host runtime's bytes are the reference interpreter's (ptec.reference.linalg
repeats the kernel's float32 steps), checked on every run here."""
import os
import subprocess

import numpy as np
import pytest
import torch

from conftest import ROOT
from model_checks import board_matches_reference
from ptec import host_runtime
from ptec.capture_matrix_functions import FP32_REASON
from ptec.compiler import CompileError, compile_model
from ptec.interpreter import run_program
from ptec.ir import UnsupportedOperator
from ptec.pte import parse_program
from ptec.pte.program_builder import ProgramBuilder
from ptec.pte.schema import ScalarType
from ptec.pte.writer import serialize_program
from model_checks import Call

EPS = float(np.finfo(np.float32).eps)


def tol(shape) -> float:
    return 4 * max(shape[-2:]) * EPS


def kernel_program(shape):
    """One ptec::linalg_svdvals.out call: x [..., m, n] -> [..., min(m, n)]."""
    b = ProgramBuilder()
    x = b.tensor(ScalarType.FLOAT, list(shape))
    y = b.tensor(ScalarType.FLOAT, list(shape[:-2]) + [min(shape[-2:])])
    b.call("ptec::linalg_svdvals.out", self=x, out=y)
    b.set_io([x], [y])
    data = serialize_program(b.build())
    return parse_program(data), data


def on_host(x: np.ndarray, tmp_path) -> np.ndarray:
    """The kernel's values for x, after checking they are the reference interpreter's bytes."""
    prog, data = kernel_program(x.shape)
    got = host_runtime.run(prog, data, [x], workdir=str(tmp_path))[0]
    want = run_program(prog, [x])[0]
    assert got.tobytes() == want.tobytes(), "ptec-run differs from the reference interpreter"
    return got


def oracle(x: np.ndarray) -> np.ndarray:
    return torch.linalg.svdvals(torch.from_numpy(np.asarray(x, np.float64))).numpy()


def assert_close(got, x):
    want = oracle(x)
    assert got.shape == want.shape
    top = np.abs(want).max(axis=-1, keepdims=True) if want.size else want
    err = np.abs(got - want) / np.where(top > 0, top, 1.0)
    assert err.max() <= tol(x.shape), f"{err.max():.2e} of the largest value (bound {tol(x.shape):.2e})"
    assert (np.diff(got, axis=-1) <= 0).all(), "not in descending order"


def rank(shape, r, seed):
    """Matrices of rank r: a product [.., m, r] x [.., r, n]."""
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(*shape[:-1], r, generator=g) @ torch.randn(*shape[:-2], r, shape[-1], generator=g)).numpy()


def rand(shape, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).numpy()


# (id, matrices)
KERNEL_CASES = [
    ("square 4x4", rand((1, 4, 4), 1)),
    ("square 8x8 batched", rand((3, 8, 8), 2)),
    ("tall 9x4", rand((2, 9, 4), 3)),
    ("wide 3x10", rand((2, 3, 10), 4)),
    ("1xN", rand((2, 1, 7), 5)),
    ("Nx1", rand((6, 1), 6)),
    ("1x1", rand((4, 1, 1), 7)),
    ("2-D 16x12", rand((16, 12), 8)),
    ("4-D batch 5x5", rand((2, 3, 5, 5), 9)),
    ("rank 2 of 8x8", rank((2, 8, 8), 2, 10)),
    ("rank 1 of 6x9", rank((1, 6, 9), 1, 11)),
    ("rank 3 of 12x5", rank((12, 5), 3, 12)),
    ("zero 5x5", np.zeros((2, 5, 5), np.float32)),
    ("large entries", rand((2, 6, 6), 13) * np.float32(1e30)),
    ("tiny entries", rand((2, 6, 6), 14) * np.float32(1e-30)),
    ("repeated values (orthogonal x 3)", np.linalg.qr(rand((7, 7), 15))[0].astype(np.float32) * 3),
    ("graded columns", rand((6, 6), 16) * np.float32(10.0) ** np.arange(-3, 3, dtype=np.float32)),
    ("32x32", rand((1, 32, 32), 17)),
]


@pytest.mark.parametrize("name,x", KERNEL_CASES, ids=[c[0] for c in KERNEL_CASES])
def test_kernel_matches_torch(name, x, tmp_path):
    assert_close(on_host(np.ascontiguousarray(x, np.float32), tmp_path), x)


def test_zero_matrix_gives_zeros(tmp_path):
    got = on_host(np.zeros((2, 4, 6), np.float32), tmp_path)
    assert got.shape == (2, 4) and not got.any() and not np.signbit(got).any()


def test_diagonal_is_exact(tmp_path):
    """Orthogonal columns: nothing to rotate, the values are |d| sorted exactly."""
    d = np.array([3.0, -7.5, 0.25, 12.0, -1.0], np.float32)
    got = on_host(np.diag(d)[None], tmp_path)
    assert got.tolist() == [sorted(np.abs(d).tolist(), reverse=True)]


def test_a_non_finite_entry_gives_nan_for_its_matrix_only(tmp_path):
    x = rand((3, 4, 4), 20)
    x[1, 2, 3] = np.inf
    x[2, 0, 0] = np.nan
    got = on_host(x, tmp_path)
    assert np.isnan(got[1:]).all()
    assert_close(got[:1], x[:1])


def test_ill_conditioned_hilbert(tmp_path):
    """cond 1e10: the small values are rounding-size, within TOL of the largest as torch's."""
    h = (1.0 / (np.arange(8)[:, None] + np.arange(8)[None, :] + 1)).astype(np.float32)
    assert_close(on_host(h[None], tmp_path), h[None])


def test_order_of_rows_and_columns_does_not_matter(tmp_path):
    """A permuted or transposed matrix has the same singular values (to rounding)."""
    x = rand((5, 7), 21)
    a, b, c = (on_host(m, tmp_path) for m in (x, x[::-1].copy(), x.T.copy()))
    assert np.abs(a - b).max() <= tol(x.shape) * a[0] and np.abs(a - c).max() <= tol(x.shape) * a[0]


# (id, call of x, input shape): compiled, each on the host within TOL of torch's (float64)
CALLS = [
    ("svdvals 4x4 batched", torch.linalg.svdvals, (2, 3, 4, 4)),
    ("svdvals 6x4", torch.linalg.svdvals, (2, 6, 4)),
    ("svdvals 3x8", torch.linalg.svdvals, (3, 8)),
    ("svdvals 3x3", torch.linalg.svdvals, (5, 3, 3)),
    ("matrix_norm 2", lambda x: torch.linalg.matrix_norm(x, 2), (2, 5, 5)),
    ("matrix_norm -2", lambda x: torch.linalg.matrix_norm(x, -2), (2, 7, 5)),
    ("matrix_norm nuc", lambda x: torch.linalg.matrix_norm(x, "nuc"), (2, 4, 9)),
    ("matrix_norm nuc keepdim dims", lambda x: torch.linalg.matrix_norm(x, "nuc", (-1, -2), True), (2, 6, 6)),
    ("linalg.norm 2 of a matrix", lambda x: torch.linalg.norm(x, 2), (5, 6)),
    ("linalg.norm -2 dims", lambda x: torch.linalg.norm(x, -2, (-2, -1)), (2, 4, 6)),
    ("torch.norm nuc", lambda x: torch.norm(x, "nuc"), (8, 5)),
    ("Tensor.norm nuc dims", lambda x: x.norm("nuc", (-2, -1)), (3, 4, 4)),
]


@pytest.mark.parametrize("name,fn,shape", CALLS, ids=[c[0] for c in CALLS])
def test_calls_run_on_the_kernel(name, fn, shape, tmp_path):
    g = torch.Generator().manual_seed(hash(name) % 1000)
    samples = [(torch.randn(*shape, generator=g),) for _ in range(3)]
    res = compile_model(Call(fn).eval(), [samples[0][0]], samples)
    assert "ptec::linalg_svdvals.out" in res.lowered.operators
    prog = parse_program(res.data)
    for (x,) in samples:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert got.tobytes() == run_program(prog, [x.numpy()])[0].tobytes()
        sv = oracle(x.numpy())
        with torch.no_grad():
            want = fn(x.double()).numpy()
        # 'nuc' sums min(m, n) values: each within TOL of the largest
        bound = tol(shape) * sv.max() * (min(shape[-2:]) if "nuc" in name else 1)
        assert got.shape == want.shape and np.abs(got - want).max() <= bound, name


@pytest.mark.parametrize("p", [None, 2, -2])
@pytest.mark.parametrize("shape", [(2, 3, 5, 5), (2, 4, 7), (6, 3)])
def test_cond_is_a_ratio_of_singular_values(p, shape, tmp_path):
    """torch.linalg.cond(x, p): sigma_max / sigma_min (p None, 2) or its
    inverse (-2). Each value within TOL of sigma_max, so the ratio within
    TOL (kappa + 1) relative, kappa = sigma_max / sigma_min."""
    fn = (lambda x: torch.linalg.cond(x)) if p is None else (lambda x: torch.linalg.cond(x, p))
    g = torch.Generator().manual_seed(70 + len(shape))
    samples = [(torch.randn(*shape, generator=g),) for _ in range(3)]
    res = compile_model(Call(fn).eval(), [samples[0][0]], samples)
    assert "ptec::linalg_svdvals.out" in res.lowered.operators
    prog = parse_program(res.data)
    for (x,) in samples:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert got.tobytes() == run_program(prog, [x.numpy()])[0].tobytes()
        with torch.no_grad():
            want, kappa = fn(x.double()).numpy(), torch.linalg.cond(x.double()).numpy()
        assert got.shape == want.shape
        assert (np.abs(got - want) <= tol(shape) * (kappa + 1) * np.abs(want)).all(), (got, want)


def test_cond_of_a_zero_matrix_is_nan_as_torch(tmp_path):
    x = torch.randn(3, 4, 4)
    res = compile_model(Call(torch.linalg.cond).eval(), [x], [(x,), (x * 0.5,)])
    zero = x.clone()
    zero[1] = 0.0
    got = host_runtime.run(parse_program(res.data), res.data, [zero.numpy()], workdir=str(tmp_path))[0]
    assert np.isnan(got[1]) and np.isnan(torch.linalg.cond(zero)[1].item()) and np.isfinite(got[[0, 2]]).all()


@pytest.mark.parametrize("p", ["fro", "nuc", 1, float("inf")])
def test_cond_of_other_norms_is_refused_in_one_line(p):
    x = torch.randn(2, 4, 4)
    with pytest.raises((CompileError, UnsupportedOperator)) as e:
        compile_model(Call(lambda a: torch.linalg.cond(a, p)).eval(), [x], [(x,)])
    assert "p None, 2 or -2" in str(e.value) and "\n" not in str(e.value)


def test_one_fp32_node_on_the_portable_kernel():
    """A view and the kernel, both fp32 for the stated reason; no int8 product."""
    x = torch.randn(2, 5, 5)
    res = compile_model(Call(torch.linalg.svdvals).eval(), [x], [(x,), (x * 0.5,)])
    placed = [p for p in res.lowered.placements if p.backend != "none"]
    assert [p.op for p in placed] == ["reshape", "svdvals", "reshape"], [p.op for p in placed]
    assert all(p.backend == "portable" and FP32_REASON in p.reason for p in placed)
    assert sorted(res.lowered.operators) == ["aten::view_copy.out", "ptec::linalg_svdvals.out"]


def test_behind_int8_layers(tmp_path):
    """A conv's int8 output read by the kernel: dequantized to fp32 before it,
    torch's values within the conv's rounding (half a step in each of the m n
    entries moves a singular value by at most half a step times sqrt(m n))."""
    class ConvNorm(torch.nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(31)
            self.conv = torch.nn.Conv2d(1, 2, 3, padding=1)

        def forward(self, x):
            return torch.linalg.matrix_norm(self.conv(x)[0], 2)

    fn = ConvNorm().eval()
    g = torch.Generator().manual_seed(30)
    samples = [(torch.randn(1, 1, 6, 6, generator=g),) for _ in range(4)]
    res = compile_model(fn, [samples[0][0]], samples)
    prog = parse_program(res.data)
    for (x,) in samples:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        with torch.no_grad():
            want = fn(x).numpy()
        # measured at most 0.0042 of the value (the conv's int8 rounding)
        assert np.abs(got - want).max() <= 0.01 * np.abs(want).max(), (got, want)


def test_empty_matrices_are_refused_in_one_line():
    x = torch.randn(2, 4, 4)
    with pytest.raises((CompileError, UnsupportedOperator)) as e:
        compile_model(Call(lambda a: torch.linalg.svdvals(a[..., :0, :])).eval(), [x], [(x,)])
    assert "at least one row and column" in str(e.value) and "\n" not in str(e.value)


def test_cli_compiles_a_large_spectral_norm(tmp_path):
    """The CLI refused matrix_norm(x, 2) of a 4x8 x before (exit 2); now it writes the program."""
    (tmp_path / "m.py").write_text(
        "import torch\n"
        "class M(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        return torch.linalg.matrix_norm(x, 2)\n"
        "def make():\n"
        "    m = M()\n"
        "    m.input_shape = (1, 4, 8)\n"
        "    return m\n")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    r = subprocess.run(["/usr/bin/python3", "-m", "ptec", "compile", f"{tmp_path}/m.py:make", "--calib", "2", "-o",
                        f"{tmp_path}/m.pte"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    plan = parse_program((tmp_path / "m.pte").read_bytes()).plan()
    assert "ptec::linalg_svdvals" in [f"{o.name}" for o in plan.operators]


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
def test_kernel_on_a_board(target, tmp_path):
    """The kernel in the emulated board's firmware gives the reference's bytes."""
    x = rand((2, 6, 5), 40)
    _, data = kernel_program(x.shape)
    board_matches_reference(data, x, target, tmp_path)


# -- ptec::linalg_eigvalsh.out: symmetric eigenvalues, ascending --------------------------------------------

def eig_program(shape, upper):
    b = ProgramBuilder()
    x = b.tensor(ScalarType.FLOAT, list(shape))
    y = b.tensor(ScalarType.FLOAT, list(shape[:-1]))
    b.call("ptec::linalg_eigvalsh.out", self=x, upper=upper, out=y)
    b.set_io([x], [y])
    data = serialize_program(b.build())
    return parse_program(data), data


def eig_on_host(x: np.ndarray, upper: bool, tmp_path) -> np.ndarray:
    prog, data = eig_program(x.shape, upper)
    got = host_runtime.run(prog, data, [x], workdir=str(tmp_path))[0]
    want = run_program(prog, [x])[0]
    assert got.tobytes() == want.tobytes(), "ptec-run differs from the reference interpreter"
    return got


def eig_close(got, x, upper):
    """Within TOL(n) of the largest |eigenvalue| of torch's (float64), ascending."""
    want = torch.linalg.eigvalsh(torch.from_numpy(np.asarray(x, np.float64)), UPLO="U" if upper else "L").numpy()
    top = np.abs(want).max(axis=-1, keepdims=True)
    err = np.abs(got - want) / np.where(top > 0, top, 1.0)
    assert got.shape == want.shape and err.max() <= tol(x.shape), f"{err.max():.2e} (bound {tol(x.shape):.2e})"
    assert (np.diff(got, axis=-1) >= 0).all(), "not in ascending order"


def sym(shape, seed):
    a = rand(shape, seed)
    return ((a + np.swapaxes(a, -1, -2)) / 2).astype(np.float32)


def psd(shape, r, seed):
    """Positive semi-definite of rank r: V V^T."""
    v = rand(shape[:-1] + (r,), seed)
    return (v @ np.swapaxes(v, -1, -2)).astype(np.float32)


def repeated(n, seed):
    q = np.linalg.qr(rand((n, n), seed).astype(np.float64))[0]
    return (q @ np.diag([1.0, 1.0, 1.0] + [-2.0] * (n - 3)) @ q.T).astype(np.float32)


EIG_CASES = [
    ("symmetric 4x4", sym((1, 4, 4), 50)),
    ("symmetric 8x8 batched", sym((3, 8, 8), 51)),
    ("4-D batch 5x5", sym((2, 3, 5, 5), 52)),
    ("2-D 12x12", sym((12, 12), 53)),
    ("1x1", rand((4, 1, 1), 54)),
    ("2x2", sym((3, 2, 2), 55)),
    ("psd rank 2 of 7x7", psd((2, 7, 7), 2, 56)),
    ("zero", np.zeros((2, 6, 6), np.float32)),
    ("repeated eigenvalues 6x6", repeated(6, 57)[None]),
    ("large entries", sym((2, 5, 5), 58) * np.float32(1e30)),
    ("tiny entries", sym((2, 5, 5), 59) * np.float32(1e-30)),
    ("diagonal", np.diag(np.array([3.0, -1.0, 0.5, 8.0], np.float32))[None]),
    ("24x24", sym((1, 24, 24), 60)),
]


@pytest.mark.parametrize("upper", [False, True], ids=["lower", "upper"])
@pytest.mark.parametrize("name,x", EIG_CASES, ids=[c[0] for c in EIG_CASES])
def test_eigvalsh_kernel_matches_torch(name, x, upper, tmp_path):
    eig_close(eig_on_host(np.ascontiguousarray(x, np.float32), upper, tmp_path), x, upper)


@pytest.mark.parametrize("upper", [False, True], ids=["lower", "upper"])
def test_eigvalsh_reads_one_triangle(upper, tmp_path):
    """The other triangle is never read: garbage there (even NaN) changes nothing."""
    x = sym((2, 5, 5), 61)
    junk = x.copy()
    other = np.tril(np.ones((5, 5), bool), -1) if upper else np.triu(np.ones((5, 5), bool), 1)
    junk[:, other] = np.nan
    junk[0, other] = 7.0
    a, b = eig_on_host(x, upper, tmp_path), eig_on_host(junk, upper, tmp_path)
    assert a.tobytes() == b.tobytes()
    eig_close(b, junk, upper)


def test_eigvalsh_non_finite_in_the_read_triangle_gives_nan(tmp_path):
    x = sym((3, 4, 4), 62)
    x[1, 3, 1] = np.inf
    got = eig_on_host(x, False, tmp_path)
    assert np.isnan(got[1]).all() and np.isfinite(got[[0, 2]]).all()
    eig_close(got[[0, 2]], x[[0, 2]], False)


EIG_CALLS = [
    ("eigvalsh 4x4 batched", torch.linalg.eigvalsh, (2, 3, 4, 4)),
    ("eigvalsh 6x6 UPLO=U", lambda x: torch.linalg.eigvalsh(x, UPLO="U"), (2, 6, 6)),
    ("eigvalsh 9x9 2-D", torch.linalg.eigvalsh, (9, 9)),
]


@pytest.mark.parametrize("name,fn,shape", EIG_CALLS, ids=[c[0] for c in EIG_CALLS])
def test_eigvalsh_calls_run_on_the_kernel(name, fn, shape, tmp_path):
    g = torch.Generator().manual_seed(len(name))
    samples = [(torch.randn(*shape, generator=g),) for _ in range(3)]
    res = compile_model(Call(fn).eval(), [samples[0][0]], samples)
    assert "ptec::linalg_eigvalsh.out" in res.lowered.operators
    prog = parse_program(res.data)
    for (x,) in samples:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert got.tobytes() == run_program(prog, [x.numpy()])[0].tobytes()
        with torch.no_grad():
            want = fn(x.double()).numpy()
        assert got.shape == want.shape and np.abs(got - want).max() <= tol(shape) * np.abs(want).max(), name


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
def test_eigvalsh_kernel_on_a_board(target, tmp_path):
    _, data = eig_program((2, 6, 6), True)
    board_matches_reference(data, sym((2, 6, 6), 63), target, tmp_path)
