"""Linear algebra of matrices at capture (issue 15): determinants
(det, slogdet, logdet), inverses and solves of square matrices of any n on
LU kernels; Cholesky factors and triangular solves (solve_triangular,
triangular_solve, cholesky_solve) of any n on kernels of their own; matrix
powers and exponentials of any n as fp32 matrix products (aten::bmm.out), batched over any leading dims (a Kalman filter's or
a pose estimator's few small matrices on a microcontroller); and the
singular values (svdvals, matrix norms 2, -2, 'nuc') and symmetric
eigenvalues (eigvalsh) of matrices of any size, on kernels of their own.

Why fp32: a determinant of n = 4 is a sum of 24 products of 4 entries (or
n pivots, each of many eliminations); rounded to int8 after each product
the result would keep barely a digit. So every step here is marked
attrs["fp32"] (FP32_REASON), which the cortex_m partitioner and every
delegating backend read as a refusal: the steps run on the portable fp32 kernels (the LU and
Jacobi kernels, linear, mul, div, pow, slice, cat, views), the program's output is
the fp32 value, and a model around them is quantized as usual.

The shape of the closed forms (matrix_power, matrix_exp): A
[..., n, n] viewed as [B, n, n], each product of matrices one
aten::bmm.out call (float32 sums in index order; it replaced 0/1 pick
tables and n^3 element-wise products that served n <= 8):

* det, slogdet (sign, logabsdet), logdet of any n >= 1: A viewed as
  [B, n, n] and one node `linalg_det` (mode 0..3), lowered to
  ptec::linalg_det.out: LU with partial pivoting in fp32 on a scratch
  copy, det the product of the pivots, log |det| the double sum of their
  logs (finite where det over- or underflows fp32), logdet NaN where the
  sign is -1 (as torch);
* inv and solve(A, B) (left=True) of any n: one node `linalg_solve` on
  A [B, n, n] and B [B or 1, n, k] (a vector B a column; inv: the
  identity, one for the whole batch), lowered to ptec::linalg_solve.out
  (the same LU, then back substitution). These replaced the Leibniz /
  adjugate closed forms of n <= 4 (det a sum of n! products, inv the
  adjugate over det, slogdet's log by Halley steps from an int8 LUT): LU
  with partial pivoting is backward stable where adjugate / det is not
  (an ill-conditioned A's inverse kept only det's digits), its log |det|
  holds the C library's log instead of three refinements of a LUT, and one
  kernel serves every n (tests/python/test_linalg_kernels.py measures it);
* cholesky of any n: one node `linalg_cholesky` on A viewed as [B, n, n],
  lowered to ptec::linalg_cholesky.out: L_jj = sqrt(a_jj - sum_k L_jk^2),
  L_ij = (a_ij - sum_k L_ik L_jk) / L_jj in fp32, lower triangle read
  (upper=True: the upper one, U = L^T); it replaced the closed form of
  n <= 4 that made the same recurrence of slices, one step an entry (the
  same arithmetic, a kernel call instead of n^3 / 3 steps);
* solve_triangular(A, B, upper=, left=True, unitriangular=),
  triangular_solve(B, A, upper, transpose, unitriangular)'s solution and
  cholesky_solve(B, L, upper) (L Y = B, then L^T X = Y): nodes
  `linalg_triangular_solve` on A [B, n, n] and B as solve's (a matrix
  here), lowered to ptec::linalg_triangular_solve.out (substitution in
  fp32, only the triangle named read);
* matrix_power(A, k) of any n: repeated squaring by aten::bmm.out
  products, k = 0 the identity, k < 0 the same of inv (by
  ptec::linalg_solve.out);
* matrix_exp of any n by scaling and squaring with a FIXED s = 6 (the
  program cannot branch on the run's norm): X = A / 64, its Taylor
  polynomial of degree 10 by Horner, squared 6 times. Where ||A||_1 <= 88,
  ||X||_1 <= 1.4 and the truncation is below 1.4^11 / 11! < 1e-6 relative;
  the squarings double the fp32 rounding each: measured within 1e-4
  relative of torch's float64 result (random, nilpotent, larger-norm and
  skew batches, 5x5 to 32x32: tests/python/test_matrix_functions.py). A matrix of
  larger 1-norm is computed with the same s, less accurately: the accuracy
  is stated for ||A||_1 <= 88;
* svdvals and matrix_norm / norm of ord 2, -2, 'nuc', for A [..., m, n] of
  any m, n (square or not, 1x1 to as large as the scratch allows): A
  viewed as [B, m, n] and one node `svdvals`, lowered to the portable
  kernel ptec::linalg_svdvals.out (one-sided Jacobi rotations in fp32 on
  a scratch copy, a fixed cap on sweeps: op_linalg_svdvals.c), then the
  first (2) or last (-2) value picked, or all summed ('nuc'), by an fp32
  linear. One kernel for every size rather than the closed forms that
  served n <= 3 before: those ran in fp32 too (no int8 step to keep), took
  dozens of steps, and a 3x3 matrix's small singular values lost digits
  as square roots of A^T A's eigenvalues; Jacobi's are within about
  max(m, n) fp32 roundings of the largest value;
* svd's U / Vh (torch.linalg.svd, full_matrices either way; torch.svd's
  V = Vh^T by a permute), S the svdvals node; pinv (torch.linalg.pinv with
  torch's default rtol epsilon max(m, n) or an rtol / rcond given,
  torch.pinverse's rcond 1e-15): one node `linalg_svd` (which 0, 1, 2),
  lowered to ptec::linalg_svd.out (svdvals' Jacobi with the rotations
  accumulated; rounding-size and added columns completed by Gram-Schmidt;
  each u_j's first largest component positive, v_j flipped with it: ptec's
  normalisation, torch's sign being LAPACK's); lstsq's solution pinv(A) B
  (the product by aten::bmm.out), its residuals, rank and singular values
  where torch 1.13 gives them, empty where torch's are (lstsq_result); matrix_rank: the
  values' ratios to the largest compared with rtol and counted (int64) as
  capture_reductions counts a mask;
* torch.linalg.qr (mode 'reduced', 'complete', 'r': R only) and torch.qr
  (some): one node `linalg_qr` (which 0 Q, 1 R), lowered to
  ptec::linalg_qr.out (Householder reflections in fp32, LAPACK's sign
  convention, so R's diagonal signs are torch's);
* torch.geqrf (a, tau) and torch.linalg.cholesky_ex (L, info): the same
  kernels (capture_compact_factors);
* torch.linalg.lu_factor / lu_factor_ex / torch.lu / Tensor.lu (LU,
  pivots) and torch.linalg.lu (P, L, U) of [..., m, n], any m, n: one node
  `linalg_lu` (which 0 LU, 2 P, 3 L, 4 U) or `linalg_lu_pivots` (int32,
  1-based, an index value viewed to torch's shape by an integer view) on A
  viewed as [B, m, n], lowered to ptec::linalg_lu.out (det and solve's LU
  with partial pivoting: LAPACK getrf's pivot rule, so torch's pivots
  where a column's largest |entry| is not tied to rounding; a singular A
  factors as lu_factor_ex's); torch.lu_unpack (P, L, U) and
  torch.linalg.lu_solve / torch.lu_solve (adjoint either way) of the LU
  and pivots of one such call of the program: the same kernel on that A
  (lu_solve: ptec::linalg_solve.out, the same LU bit for bit), the
  factorisation's own results dropped when only they read them
  (without_unread_factors); info, pivot=False, left=False and an LU not
  factored in the program are refused;
* cond(A, p) for p None or 2 (sigma_max / sigma_min) or -2 (the inverse
  ratio): the same node, the two values picked and divided in fp32 (a
  singular A: a huge ratio of rounding size, or inf, where torch's is inf
  or huge; a zero A: NaN as torch); p 'fro', 'nuc', 1, inf and their
  negatives need the inverse and are refused;
* eigvalsh (and eigh's eigenvalues) of a symmetric A [..., n, n] of any n
  (its lower triangle read, or the upper one with UPLO='U'): one node
  `eigvalsh` on A viewed as [B, n, n], lowered to ptec::linalg_eigvalsh.out (cyclic Jacobi rotations
  in fp32 on a scratch copy: op_linalg_eigvalsh.c), for the same reasons
  (the 2x2 and 3x3 closed forms it replaces kept about 1e-4 near a double
  eigenvalue, where acos is steep; Jacobi keeps about n roundings of the
  largest |eigenvalue| everywhere);
* eigh's eigenvectors: one node `linalg_eigh_vectors`, lowered to
  ptec::linalg_eigh_vectors.out (the same Jacobi rotations accumulated in
  V, so its columns follow the eigenvalues' order), each vector's first
  largest-magnitude component made positive: an eigenvector is defined up
  to sign (and within a repeated eigenvalue's space up to rotation), torch's
  sign is LAPACK's; tests compare A V = V diag(lambda), V^T V = I and
  torch's vectors up to sign.

A singular A: det is 0 as torch's where LU meets a zero pivot (a zero row
or column; other singular matrices give a det of rounding size, as
torch's LU does); inv and solve divide by that pivot, giving inf / NaN
where torch raises (or huge values where it is a rounding); cholesky of a
matrix that is not positive-definite gives NaN where torch raises. Forms
not covered (a non-square matrix,
left=False, out=, a matrix of no rows or columns, B broadcast over some of
A's batch dims, triangular_solve's cloned coefficient) stay the unsupported node, refused in one line
naming the call and the limit."""
from __future__ import annotations

from operator import getitem
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch

from .capture_calls import torch_functions, _meta_shape
from .capture_reductions import _norm_call
from .capture_rewrites import _constant_of, Fp32Steps
from .ir import Node

# det, slogdet, logdet, inv and solve (LU kernels): any n the scratch holds
LU_MAX_N = 1 << 30
# the largest |k| of matrix_power: 2 log2 |k| fp32 products
MAX_POWER = 1024
# what the cortex_m partitioner says of a step marked fp32
FP32_REASON = ("linear algebra of a matrix (a closed form, or Jacobi rotations), computed in fp32 (int8 products of its "
               "entries would lose the result)")
# matrix_exp: A / 2^6 (norm <= 1.4 for |A| up to 88, where e^A leaves fp32) and Taylor to degree 10
# (error below 1e-6 there, 1e-11 for |A| <= 32), then 6 squarings (each doubling the rounding: ~4e-6)
EXP_SQUARINGS, EXP_DEGREE = 6, 10


# call family -> (torch functions, Tensor method names)
CALLS: Dict[str, Tuple[Tuple, Tuple[str, ...]]] = {
    "det": (torch_functions("linalg.det", "det"), ("det",)),
    "slogdet": (torch_functions("linalg.slogdet", "slogdet"), ("slogdet",)),
    "logdet": (torch_functions("logdet"), ("logdet",)),
    "inv": (torch_functions("linalg.inv", "inverse"), ("inverse",)),
    "inv_ex": (torch_functions("linalg.inv_ex"), ()),
    "solve": (torch_functions("linalg.solve"), ()),
    "solve_ex": (torch_functions("linalg.solve_ex"), ()),
    "cholesky": (torch_functions("linalg.cholesky", "cholesky"), ("cholesky",)),
    "solve_triangular": (torch_functions("linalg.solve_triangular"), ()),
    "triangular_solve": (torch_functions("triangular_solve"), ("triangular_solve",)),
    "cholesky_solve": (torch_functions("cholesky_solve"), ("cholesky_solve",)),
    "matrix_power": (torch_functions("linalg.matrix_power", "matrix_power"), ("matrix_power",)),
    "svdvals": (torch_functions("linalg.svdvals"), ()),
    "cond": (torch_functions("linalg.cond"), ()),
    "eigvalsh": (torch_functions("linalg.eigvalsh"), ()),
    "eigh": (torch_functions("linalg.eigh"), ()),
    "svd": (torch_functions("linalg.svd"), ()),
    "svd_old": (torch_functions("svd"), ("svd",)),
    "pinv": (torch_functions("linalg.pinv", "pinverse"), ("pinverse",)),
    "matrix_rank": (torch_functions("linalg.matrix_rank"), ()),
    "lstsq": (torch_functions("linalg.lstsq"), ()),
    "qr": (torch_functions("linalg.qr"), ()),
    "qr_old": (torch_functions("qr"), ("qr",)),
    "geqrf": (torch_functions("geqrf"), ("geqrf",)),
    "cholesky_ex": (torch_functions("linalg.cholesky_ex"), ()),
    "lu_factor": (torch_functions("linalg.lu_factor"), ()),
    "lu_factor_ex": (torch_functions("linalg.lu_factor_ex"), ()),
    "lu": (torch_functions("linalg.lu"), ()),
    "lu_old": (torch_functions("lu"), ("lu",)),
    "lu_unpack": (torch_functions("lu_unpack"), ()),
    "lu_solve": (torch_functions("linalg.lu_solve"), ()),
    "lu_solve_old": (torch_functions("lu_solve"), ("lu_solve",)),
    "norm": (torch_functions("linalg.matrix_norm", "linalg.norm", "norm"), ("norm",)),
    "matrix_exp": (torch_functions("linalg.matrix_exp", "matrix_exp"), ("matrix_exp",)),
}

# torch.linalg.lstsq's results by index or name
LSTSQ_RESULTS = {0: "solution", "solution": "solution", 1: "residuals", "residuals": "residuals", 2: "rank",
                 "rank": "rank", 3: "singular_values", "singular_values": "singular_values"}

# each call's arguments in torch's order (a method's self is the first)
NAMES = {
    "det": ("A",), "slogdet": ("A",), "logdet": ("A",), "inv": ("A",), "inv_ex": ("A", "check_errors"),
    "solve": ("A", "B", "left"), "solve_ex": ("A", "B", "left", "check_errors"),
    "cholesky": ("A", "upper"), "solve_triangular": ("A", "B", "upper", "left", "unitriangular"),
    "triangular_solve": ("B", "A", "upper", "transpose", "unitriangular"), "cholesky_solve": ("B", "A", "upper"),
    "matrix_power": ("A", "n"), "svdvals": ("A", "driver"), "cond": ("A", "p"),
    "eigvalsh": ("A", "UPLO"), "eigh": ("A", "UPLO"),
    "svd": ("A", "full_matrices", "driver"), "svd_old": ("A", "some", "compute_uv"),
    "pinv": ("A", "rcond", "hermitian", "atol", "rtol"), "matrix_rank": ("A", "tol", "hermitian", "atol", "rtol"),
    "lstsq": ("A", "B", "rcond", "driver"), "qr": ("A", "mode"), "qr_old": ("A", "some"),
    "geqrf": ("A",), "cholesky_ex": ("A", "upper", "check_errors"),
    "lu_factor": ("A", "pivot"), "lu_factor_ex": ("A", "pivot", "check_errors"), "lu": ("A", "pivot"),
    "lu_old": ("A", "pivot", "get_infos"), "lu_unpack": ("LU_data", "LU_pivots", "unpack_data", "unpack_pivots"),
    "lu_solve": ("LU", "pivots", "B", "left", "adjoint"), "lu_solve_old": ("B", "LU", "pivots"),
    "matrix_exp": ("A",),
}


def _family(fn) -> Optional[str]:
    for name, (functions, methods) in CALLS.items():
        if fn.op == "call_method" and fn.target in methods:
            return name
        if fn.op == "call_function" and any(fn.target is f for f in functions):
            return name
    return None


class _Fp32(Fp32Steps):
    reason = FP32_REASON

    def linear(self, src: str, weight) -> str:
        """src [B, K] times weight [M, K] transposed: [B, M] (an fp32 linear:
        a 0/1 row copies an entry exactly)."""
        return self("linear", [src], weight=np.asarray(weight, np.float32), bias=None)

    def pick(self, src: str, width: int, columns: Sequence[int]) -> str:
        w = np.zeros((len(columns), width), np.float32)
        w[np.arange(len(columns)), list(columns)] = 1.0
        return self.linear(src, w)

    def fn(self, kind: str, a: str, b) -> str:
        """torch.pow / hypot / copysign of a and b (b a number or a step)."""
        return self("binary_math", [a, b if isinstance(b, str) else self.const(b)], fn=kind)










def _bmm(s: _Fp32, x: str, y: str) -> str:
    """x [B, n, k] times y [B, k, m]: [B, n, m] by aten::bmm.out (fp32,
    summed in k order from 0)."""
    return s("bmm", [x, y])


def _bind(fn, names):
    if len(fn.args) > len(names) or set(fn.kwargs) - set(names) - {"out"} or fn.kwargs.get("out") is not None:
        return None
    got = dict(zip(names, fn.args))
    got.update(fn.kwargs)
    return got


class _Refused(Exception):
    """A form this module does not compute: its one-line reason."""


def _square(A, what: str, most: int = LU_MAX_N) -> Tuple[List[int], int]:
    shape = _meta_shape(A) if isinstance(A, torch.fx.Node) else None
    if shape is None or len(shape) < 2:
        raise _Refused(f"{what}: ptec computes it for a tensor [..., n, n] of known shape")
    if shape[-1] != shape[-2]:
        raise _Refused(f"{what}: ptec computes it for square matrices (got {shape[-2]}x{shape[-1]})")
    n = shape[-1]
    if not 1 <= n <= most:
        raise _Refused(f"{what}: ptec computes it for matrices of at least one row")
    return shape, n




def _finish(s: _Fp32, cur: str, out) -> List[Node]:
    s("reshape", [cur], target_shape=list(out))
    return s.done()












def _power(s: _Fp32, mats: str, n: int, k: int) -> str:
    """[B, n, n]: A^k by repeated squaring, each product aten::bmm.out
    (k < 0: of A^-1, by ptec::linalg_solve.out)."""
    eye = np.eye(n, dtype=np.float32)[None]
    if k < 0:
        mats, k = s("linalg_solve", [mats, s.const(eye)]), -k
    if k == 0:
        return s("add", [s("mul", [mats, s.const(0.0)]), s.const(eye)])
    result, square = None, mats
    while True:
        if k & 1:
            result = square if result is None else _bmm(s, result, square)
        k >>= 1
        if not k:
            break
        square = _bmm(s, square, square)
    return result if result != mats else s("mul", [mats, s.const(1.0)])


def _exp(s: _Fp32, mats: str, n: int) -> str:
    """[B, n, n]: e^A by scaling and squaring: X = A / 2^s, the Taylor
    polynomial of degree EXP_DEGREE by Horner (P = I + X P / k, k down to
    1), then squared s times, each product aten::bmm.out. s is fixed
    (EXP_SQUARINGS), as the program cannot branch on the run's norm: the
    constants say what range it serves."""
    eye = s.const(np.eye(n, dtype=np.float32)[None])
    x = s("mul", [mats, s.const(0.5 ** EXP_SQUARINGS)])
    p = None
    for k in range(EXP_DEGREE, 0, -1):
        term = x if p is None else _bmm(s, x, p)
        p = s("add", [s("mul", [term, s.const(1.0 / k)]), eye])
    for _ in range(EXP_SQUARINGS):
        p = _bmm(s, p, p)
    return p


def _matrices(A, what: str) -> Tuple[List[int], int, int]:
    """A's shape [..., m, n] (any m, n >= 1) for the singular-value kernel."""
    shape = _meta_shape(A) if isinstance(A, torch.fx.Node) else None
    if shape is None or len(shape) < 2:
        raise _Refused(f"{what}: ptec computes it for a tensor [..., m, n] of known shape")
    if shape[-2] < 1 or shape[-1] < 1:
        raise _Refused(f"{what}: ptec computes it for matrices of at least one row and column "
                       f"(got {shape[-2]}x{shape[-1]})")
    return list(shape), shape[-2], shape[-1]


def _singular(s: _Fp32, A, shape) -> str:
    """[B, min(m, n)]: the singular values of A [..., m, n] viewed as
    [B, m, n], largest first, by ptec::linalg_svdvals.out (one-sided
    Jacobi in fp32: op_linalg_svdvals.c)."""
    m, n = shape[-2], shape[-1]
    batch = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    return s("svdvals", [s("reshape", [A.name], target_shape=[batch, m, n])])


def _matrices_of(s: _Fp32, A, shape) -> Tuple[str, int]:
    """A [..., n, n] viewed as [B, n, n] (the LU kernels' self)."""
    batch = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    return s("reshape", [A.name], target_shape=[batch, shape[-1], shape[-1]]), batch


def _lu_det(s: _Fp32, A, shape, mode: int) -> str:
    """[B]: det (mode 0), its sign (1), log |det| (2) or log det (3) of each
    matrix, by ptec::linalg_det.out (LU with partial pivoting)."""
    return s("linalg_det", [_matrices_of(s, A, shape)[0]], mode=mode)


def _lu_inverse(s: _Fp32, A, shape) -> str:
    """[B, n, n]: A^-1 as A^-1 I by ptec::linalg_solve.out, one identity
    for the whole batch."""
    n = shape[-1]
    return s("linalg_solve", [_matrices_of(s, A, shape)[0], s.const(np.eye(n, dtype=np.float32)[None])])


def _system(s: _Fp32, what: str, A, B, out, vector_ok: bool = True) -> Tuple[str, str]:
    """(A [B, n, n], B [B or 1, n, k]) of a solve's matrices: B a vector
    (vector_ok: torch.linalg.solve's rule) or a matrix, a constant or a
    tensor of A's batch dims or none (one B for every A, which the kernels
    read as a batch of 1)."""
    shape, n = _square(A, what, LU_MAX_N)
    bshape = _meta_shape(B) if isinstance(B, torch.fx.Node) else None
    if bshape is None or not bshape:
        raise _Refused(f"{what}: ptec takes B a tensor of known shape")
    vector = vector_ok and (len(bshape) == 1 or (len(bshape) == len(shape) - 1 and list(bshape) == list(shape[:-1])))
    if not vector and len(bshape) < 2:
        raise _Refused(f"{what}: ptec takes B a matrix [..., n, k]")
    cols = 1 if vector else bshape[-1]
    rows_b = bshape if vector else bshape[:-1]
    bbatch = list(rows_b[:-1])
    abatch = list(shape[:-2])
    if rows_b[-1] != n or len(bbatch) > len(abatch) or bbatch != abatch[len(abatch) - len(bbatch):]:
        raise _Refused(f"{what}: ptec takes B with A's batch dims (or none) and n rows")
    if list(out) != abatch + ([n] if vector else [n, cols]):
        raise _Refused(f"{what}: B {bshape} read as a {'vector' if vector else 'matrix'} does not give "
                       f"torch's result shape {list(out)}")
    mats, batch = _matrices_of(s, A, shape)
    value = _constant_of(B, s.by_name)
    if value is not None:
        value = np.asarray(value, np.float32).reshape(bbatch + [n, cols])
        rhs = s.const(np.broadcast_to(value, abatch + [n, cols]).reshape(batch, n, cols) if bbatch
                      else value.reshape(1, n, cols))
    elif bbatch == abatch:
        rhs = s("reshape", [B.name], target_shape=[batch, n, cols])
    elif not bbatch:
        # one B for every matrix: the kernel reads a batch of 1 for each
        rhs = s("reshape", [B.name], target_shape=[1, n, cols])
    else:
        raise _Refused(f"{what}: ptec takes B with all of A's batch dims or none")
    return mats, rhs


def _solve(s: _Fp32, fn, got, out) -> str:
    if got.get("left", True) is not True:
        raise _Refused("torch.linalg.solve(left=False): ptec solves A X = B (left=True)")
    return s("linalg_solve", list(_system(s, "torch.linalg.solve", got.get("A"), got.get("B"), out)))


def _flag(got, name: str, default: bool, what: str) -> bool:
    value = got.get(name, default)
    if not isinstance(value, bool):
        raise _Refused(f"{what}: {name} is True or False")
    return value


def _triangular(s: _Fp32, family: str, got, out) -> str:
    """solve_triangular (left=True), triangular_solve's solution and
    cholesky_solve on ptec::linalg_triangular_solve.out: cholesky_solve(B,
    L) is L Y = B then L^T X = Y (upper: U^T Y = B then U X = Y)."""
    what = {"solve_triangular": "torch.linalg.solve_triangular", "triangular_solve": "torch.triangular_solve",
            "cholesky_solve": "torch.cholesky_solve"}[family]
    if family == "solve_triangular":
        if got.get("left", True) is not True:
            raise _Refused(f"{what}(left=False): ptec solves A X = B (left=True)")
        if "upper" not in got:
            raise _Refused(f"{what}: upper is a required argument")
        upper = _flag(got, "upper", True, what)
        mats, rhs = _system(s, what, got.get("A"), got.get("B"), out, vector_ok=False)
        return s("linalg_triangular_solve", [mats, rhs], upper=upper, transpose=False,
                 unitriangular=_flag(got, "unitriangular", False, what))
    if family == "triangular_solve":
        mats, rhs = _system(s, what, got.get("A"), got.get("B"), out, vector_ok=False)
        return s("linalg_triangular_solve", [mats, rhs], upper=_flag(got, "upper", True, what),
                 transpose=_flag(got, "transpose", False, what),
                 unitriangular=_flag(got, "unitriangular", False, what))
    upper = _flag(got, "upper", False, what)
    mats, rhs = _system(s, what, got.get("A"), got.get("B"), out, vector_ok=False)
    y = s("linalg_triangular_solve", [mats, rhs], upper=upper, transpose=upper, unitriangular=False)
    return s("linalg_triangular_solve", [mats, y], upper=upper, transpose=not upper, unitriangular=False)


def _symmetric(s: _Fp32, what: str, got, vectors: bool) -> str:
    """eigvalsh / eigh's eigenvalues ([B, n], ptec::linalg_eigvalsh.out) or
    eigh's eigenvectors ([B, n, n], ptec::linalg_eigh_vectors.out: the same
    rotations, so the columns follow the values' order) of A viewed as
    [B, n, n]."""
    shape, m, n = _matrices(got.get("A"), what)
    if m != n:
        raise _Refused(f"{what}: ptec computes it for square matrices (got {m}x{n})")
    uplo = got.get("UPLO", "L")
    if uplo not in ("L", "U"):
        raise _Refused(f"{what}: UPLO is 'L' or 'U'")
    mats, _ = _matrices_of(s, got["A"], shape)
    return s("linalg_eigh_vectors" if vectors else "eigvalsh", [mats], upper=uplo == "U")


def _default_rtol(m: int, n: int) -> float:
    """torch's default relative tolerance of pinv / matrix_rank / lstsq: the
    dtype's epsilon (float32: the programs compute in it) times max(m, n)."""
    return float(np.finfo(np.float32).eps) * max(m, n)


def _rtol_of(got, what: str, default: float) -> float:
    """The relative tolerance of a pinv / matrix_rank / lstsq call: its rtol
    or rcond, else `default`; atol other than 0 and matrix_rank's tol are
    refused."""
    if got.get("atol") not in (None, 0, 0.0) or got.get("tol") is not None:
        raise _Refused(f"{what}: ptec takes a relative tolerance (rtol / rcond) only, not atol / tol")
    rtol = got.get("rtol") if got.get("rtol") is not None else got.get("rcond")
    if rtol is None:
        return default
    if not isinstance(rtol, (int, float)) or isinstance(rtol, bool) or not 0.0 <= float(rtol) <= 1.0:
        raise _Refused(f"{what}: ptec takes a constant tolerance in [0, 1] (got {rtol!r})")
    return float(rtol)


def _svd_node(s: _Fp32, what: str, A, which: int, full: bool = False, rtol: float = 0.0) -> Tuple[str, int, int]:
    """(node, m, n): U (which 0), Vh (1) or pinv (2) of A [..., m, n] viewed
    as [B, m, n], by ptec::linalg_svd.out."""
    shape, m, n = _matrices(A, what)
    batch = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    mats = s("reshape", [A.name], target_shape=[batch, m, n])
    return s("linalg_svd", [mats], which=which, full_matrices=bool(full), rtol=float(rtol)), m, n


def _svd_element(s: _Fp32, family: str, got, index) -> str:
    """torch.linalg.svd's U / S / Vh or torch.svd's U / S / V."""
    what = "torch.linalg.svd" if family == "svd" else "torch.svd"
    A = got.get("A")
    if family == "svd":
        full = got.get("full_matrices", True)
        if not isinstance(full, bool):
            raise _Refused(f"{what}: full_matrices is True or False")
    else:
        some, uv = got.get("some", True), got.get("compute_uv", True)
        if not isinstance(some, bool) or uv is not True:
            raise _Refused(f"{what}: ptec computes it with compute_uv=True and some a bool")
        full = not some
    if index in (1, "S"):
        shape, _, _ = _matrices(A, what)
        return _singular(s, A, shape)
    if index in (0, "U"):
        return _svd_node(s, what, A, 0, full)[0]
    vh, m, n = _svd_node(s, what, A, 1, full)
    if family == "svd":
        return vh
    return s("permute", [vh], dims=[0, 2, 1])             # torch.svd's V = Vh^T


def _pinv(s: _Fp32, fn, got) -> str:
    """pinv by ptec::linalg_svd.out: torch.pinverse's rcond defaults to
    1e-15, torch.linalg.pinv's rtol to epsilon max(m, n)."""
    old = fn.target in ("pinverse", torch.pinverse)
    what = "torch.pinverse" if old else "torch.linalg.pinv"
    shape, m, n = _matrices(got.get("A"), what)
    if got.get("hermitian") not in (None, False, True):
        raise _Refused(f"{what}: hermitian is True or False")
    rtol = _rtol_of(got, what, 1e-15 if old else _default_rtol(m, n))
    return _svd_node(s, what, got["A"], 2, rtol=rtol)[0]


def _matrix_rank(s: _Fp32, got, out) -> List[Node]:
    """The count of singular values above rtol times the largest (int64):
    svdvals, their ratio to the first (fp32), compared and counted as
    capture_reductions counts a mask."""
    from .capture_reductions import _int_view
    what = "torch.linalg.matrix_rank"
    A = got.get("A")
    shape, m, n = _matrices(A, what)
    if got.get("hermitian") not in (None, False, True):
        raise _Refused(f"{what}: hermitian is True or False")
    rtol = _rtol_of(got, what, _default_rtol(m, n))
    _int_view(_Int8Steps(s), _matrix_rank_count(s, A, shape, rtol), list(out))
    return s.done()


def _matrix_rank_count(s: _Fp32, A, shape, rtol: float) -> str:
    """[B, 1]: the count (int64) of A's singular values above rtol times the
    largest, their ratios compared and counted as capture_reductions counts
    a mask."""
    from .capture_reductions import _count
    m, n = shape[-2], shape[-1]
    k = min(m, n)
    batch = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    sv = _singular(s, A, shape)
    ratio = s("div", [sv, s.pick(sv, k, [0])])
    mask = s.int8("compare", [ratio], kind="gt", scalar=rtol)
    return _count(_Int8Steps(s), mask, [batch, k], [1])


class _Int8Steps:
    """The int8 (unmarked) face of _Fp32 steps, for helpers of other modules."""

    def __init__(self, s: _Fp32):
        self.s = s

    def __call__(self, op, inputs, **attrs) -> str:
        return self.s.int8(op, inputs, **attrs)

    def const(self, value) -> str:
        return self.s.const(value)


def _lstsq(s: _Fp32, got, out, which: str = "solution") -> str:
    """torch.linalg.lstsq's solution: pinv(A) B (rcond torch's default where
    not given), the product by aten::bmm.out; its residuals, rank and
    singular values where torch 1.13 gives them (lstsq_result), each as
    torch shapes it (an empty tensor where torch's is empty)."""
    what = "torch.linalg.lstsq"
    A, B = got.get("A"), got.get("B")
    driver = got.get("driver")
    if driver not in (None, "gelsy", "gelsd", "gelss", "gels"):
        raise _Refused(f"{what}: driver is one of torch's")
    driver = driver or "gelsy"
    shape, m, n = _matrices(A, what)
    bshape = _meta_shape(B) if isinstance(B, torch.fx.Node) else None
    if bshape is None or len(bshape) != len(shape) or list(bshape[:-2]) != list(shape[:-2]) or bshape[-2] != m:
        raise _Refused(f"{what}: ptec takes B [..., m, k] of A's batch dims")
    k = bshape[-1]
    if k < 1:
        raise _Refused(f"{what}: ptec takes B of at least one column")
    batch = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    rtol = _rtol_of(got, what, _default_rtol(m, n))
    given = lstsq_result(driver, m, n)[which]
    if not given:
        # torch's empty tensor: none of A's entries (A viewed flat, sliced to nothing); gels' rank torch's empty
        # int64 tensor, of that nothing as an index
        flat = s("reshape", [A.name], target_shape=[int(np.prod(shape))])
        empty = s("slice", [flat], dim=0, start=0, end=0)
        return s.int8("to_index", [empty], dtype="int64") if which == "rank" else empty
    if which == "singular_values":
        return _singular(s, A, shape)
    if which == "rank":
        return _matrix_rank_count(s, A, shape, rtol)
    pinv, _, _ = _svd_node(s, what, A, 2, rtol=rtol)
    value = _constant_of(B, getattr(s, "by_name", {}))
    rhs = (s.const(np.asarray(value, np.float32).reshape(batch, m, k)) if value is not None
           else s("reshape", [B.name], target_shape=[batch, m, k]))
    x = _bmm(s, pinv, rhs)
    if which == "solution":
        return x
    # residuals: the squared column norms of A X - B, summed over the m rows (in row order) by a product
    # with ones
    r = s("sub", [_bmm(s, s("reshape", [A.name], target_shape=[batch, m, n]), x), rhs])
    return _bmm(s, s.const(np.ones((batch, 1, m), np.float32)), s("mul", [r, r]))


def lstsq_result(driver: str, m: int, n: int) -> Dict[str, bool]:
    """Which of torch.linalg.lstsq's results torch 1.13 (CPU) fills for A
    [..., m, n] (False: an empty tensor): the solution always; residuals
    when m > n and the driver is not gelsy (gelsd / gelss: only when every
    matrix has full rank, a fact of the data; ptec's program, of one shape,
    computes them then as torch does for full-rank matrices); rank but with
    gels (ptec's: matrix_rank's count of singular values, gelsd's rule;
    gelsy's pivoted-QR estimate agrees on full-rank matrices); singular
    values with gelsd and gelss."""
    return {"solution": True, "residuals": m > n and driver != "gelsy", "rank": driver != "gels",
            "singular_values": driver in ("gelsd", "gelss")}


def _qr_element(s: _Fp32, family: str, got, index) -> str:
    """torch.linalg.qr's (mode 'reduced', 'complete', 'r') or torch.qr's
    (some) Q or R by ptec::linalg_qr.out (Householder, LAPACK's signs)."""
    what = "torch.linalg.qr" if family == "qr" else "torch.qr"
    if family == "qr":
        mode = got.get("mode", "reduced")
        if mode not in ("reduced", "complete", "r"):
            raise _Refused(f"{what}: mode is 'reduced', 'complete' or 'r'")
    else:
        some = got.get("some", True)
        if not isinstance(some, bool):
            raise _Refused(f"{what}: some is True or False")
        mode = "reduced" if some else "complete"
    q = index in (0, "Q")
    if q and mode == "r":
        raise _Refused(f"{what}(mode='r'): its Q is empty; ptec computes R")
    shape, m, n = _matrices(got.get("A"), what)
    batch = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    mats = s("reshape", [got["A"].name], target_shape=[batch, m, n])
    return s("linalg_qr", [mats], which=0 if q else 1, complete=mode == "complete")


# the LU calls' names as the model spells them
LU_WHAT = {"lu_factor": "torch.linalg.lu_factor", "lu_factor_ex": "torch.linalg.lu_factor_ex",
           "lu": "torch.linalg.lu", "lu_old": "torch.lu", "lu_unpack": "torch.lu_unpack",
           "lu_solve": "torch.linalg.lu_solve", "lu_solve_old": "torch.lu_solve"}
# result index -> ptec::linalg_lu.out's which: (LU, pivots) of a factorisation, (P, L, U) of an unpacking
LU_PACKED = {0: 0, "LU": 0, 1: 1, "pivots": 1}
LU_UNPACKED = {0: 2, "P": 2, 1: 3, "L": 3, 2: 4, "U": 4}


def _lu_factored(what: str, LU, pivots):
    """A, the matrix whose torch.linalg.lu_factor / lu_factor_ex / torch.lu
    (pivot=True) gave the values LU and pivots (results 0 and 1 of one such
    call in the program); else refused: ptec has no kernel reading a packed
    LU and pivots it did not make (their A is what its kernels factor)."""
    calls = []
    for value, index in ((LU, 0), (pivots, 1)):
        if not (isinstance(value, torch.fx.Node) and value.op == "call_function" and value.target is getitem
                and len(value.args) == 2 and isinstance(value.args[0], torch.fx.Node)
                and LU_PACKED.get(value.args[1]) == index
                and _family(value.args[0]) in ("lu_factor", "lu_factor_ex", "lu_old")):
            raise _Refused(f"{what}: ptec takes the LU and pivots of one torch.linalg.lu_factor (lu_factor_ex, "
                           "torch.lu) call of the program")
        calls.append(value.args[0])
    if calls[0] is not calls[1]:
        raise _Refused(f"{what}: ptec takes the LU and pivots of one torch.linalg.lu_factor call, not of two")
    got = _bind(calls[0], NAMES[_family(calls[0])])
    if got is None or got.get("pivot", True) is not True:
        raise _Refused(f"{what}: ptec takes the LU and pivots of a torch.linalg.lu_factor(pivot=True) call")
    return got.get("A")


def _lu_element(s: _Fp32, what: str, A, which: int, out) -> List[Node]:
    """LU (which 0), the pivots (1), P (2), L (3) or U (4) of A [..., m, n]
    viewed as [B, m, n] by ptec::linalg_lu.out, made torch's shape `out`;
    the pivots an int32 value (a `linalg_lu_pivots` node, viewed by an
    integer view), carried as float32 like every index."""
    shape, m, n = _matrices(A, what)
    batch = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    mats = s("reshape", [A.name], target_shape=[batch, m, n])
    if which != 1:
        return _finish(s, s("linalg_lu", [mats], which=which), out)
    piv = s("linalg_lu_pivots", [mats])
    if list(out) != [batch, min(m, n)]:
        s.int8("int_math", [piv], kind="view", dtype="int32", shape=list(out))
    return s.done()


def without_unread_factors(nodes: List[Node], outputs) -> List[Node]:
    """nodes without the steps of a factorisation's LU or pivots
    (attrs["drop_unread"]) that nothing reads: torch.lu_unpack and
    torch.linalg.lu_solve read them in the fx graph, but their nodes factor A
    again (the same kernel, the same bytes), so an LU read only by them
    would be computed for nothing. Dropped until none is left unread."""
    while True:
        read = {i for n in nodes for i in n.inputs} | set(outputs)
        kept = [n for n in nodes if not n.attrs.get("drop_unread") or n.name in read]
        if len(kept) == len(nodes):
            return kept
        nodes = kept


def _lu_result(s: _Fp32, family: str, got, index, out) -> List[Node]:
    """Result `index` of a factorisation (lu_factor, lu_factor_ex, torch.lu:
    LU, pivots) or an unpacking (torch.linalg.lu, torch.lu_unpack: P, L,
    U); info and empty results refused."""
    what = LU_WHAT[family]
    if family == "lu_unpack":
        for flag in ("unpack_data", "unpack_pivots"):
            if got.get(flag, True) is not True:
                raise _Refused(f"{what}({flag}=False): its results are empty; ptec unpacks with both True")
        A = _lu_factored(what, got.get("LU_data"), got.get("LU_pivots"))
    else:
        if got.get("pivot", True) is not True:
            raise _Refused(f"{what}(pivot=False): ptec factors with partial pivoting (pivot=True), as torch on a CPU")
        A = got.get("A")
    which = (LU_UNPACKED if family in ("lu", "lu_unpack") else LU_PACKED).get(index)
    if which is None:
        raise _Refused(f"{what}()[{index!r}]: ptec computes " + ("P, L and U" if family in ("lu", "lu_unpack") else
                                                                "LU and pivots (no info: a singular matrix still "
                                                                "factors, as lu_factor_ex's)"))
    made = _lu_element(s, what, A, which, out)
    if family not in ("lu", "lu_unpack"):
        for n in made:
            n.attrs["drop_unread"] = True      # (read by lu_unpack / lu_solve only: dropped)
    return made


def _lu_solve(s: _Fp32, family: str, got, out) -> str:
    """torch.linalg.lu_solve(LU, pivots, B, adjoint=) / torch.lu_solve(B,
    LU, pivots) of an LU the program factored: A X = B (A^T X = B) by
    ptec::linalg_solve.out on A itself (the same LU, bit for bit, then the
    substitutions)."""
    what = LU_WHAT[family]
    if got.get("left", True) is not True:
        raise _Refused(f"{what}(left=False): ptec solves A X = B (left=True)")
    adjoint = _flag(got, "adjoint", False, what)
    A = _lu_factored(what, got.get("LU"), got.get("pivots"))
    mats, rhs = _system(s, what, A, got.get("B"), out, vector_ok=False)
    if adjoint:
        mats = s("permute", [mats], dims=[0, 2, 1])
    return s("linalg_solve", [mats, rhs])


def _norm_form(fn):
    """(A, ord) of a matrix norm 2, -2 or 'nuc' over the last two dims, or None."""
    call = _norm_call(fn)
    if fn.target in ("norm", torch.norm) and call is None:
        args = dict(zip(("input", "p", "dim", "keepdim", "out", "dtype"), fn.args), **fn.kwargs)
        if args.get("p") == "nuc" and args.get("out") is None and args.get("dtype") is None:
            call = (args["input"], "matrix", "nuc", args.get("dim") or [-2, -1], args.get("keepdim", False))
    if call is None or call[1] != "matrix" or call[2] not in (2, -2, "nuc") or isinstance(call[2], bool):
        return None
    A, _, ord, dim, _ = call
    shape = _meta_shape(A) if isinstance(A, torch.fx.Node) else None
    if shape is None or dim is None or len(dim) != 2 or {d % len(shape) for d in dim} != {len(shape) - 2,
                                                                                          len(shape) - 1}:
        return None
    return A, ord


def _compute(fn, family: str, by_name, out, name: Optional[str] = None) -> List[Node]:
    s = _Fp32(name or fn.name)
    s.by_name = by_name
    what = LU_WHAT.get(family) or (f"torch.linalg.{family}" if family not in ("norm",) else "torch.linalg.matrix_norm")
    if family == "norm":
        form = _norm_form(fn)
        if form is None:
            return None
        A, ord = form
        shape, m, n = _matrices(A, f"{what}(ord={ord!r})")
        k = min(m, n)
        sv = _singular(s, A, shape)
        cur = {2: lambda: s.pick(sv, k, [0]), -2: lambda: s.pick(sv, k, [k - 1]),
               "nuc": lambda: s.linear(sv, [[1.0] * k])}[ord]()
        return _finish(s, cur, out)
    got = _bind(fn, NAMES[family])
    if got is None:
        raise _Refused(f"{what}: ptec computes it without out= and with torch's argument names")
    A = got.get("A")
    if family in ("solve", "solve_ex"):
        return _finish(s, _solve(s, fn, got, out), out)
    if family == "svdvals":
        shape, _, _ = _matrices(A, what)
        return _finish(s, _singular(s, A, shape), out)
    if family == "cond":
        p = got.get("p")
        if p not in (None, 2, -2) or isinstance(p, bool):
            raise _Refused(f"{what}(p={p!r}): ptec computes it for p None, 2 or -2 (the ratio of singular values; "
                           "the other norms need the inverse)")
        shape, m, n = _matrices(A, what)
        k = min(m, n)
        sv = _singular(s, A, shape)
        top, low = s.pick(sv, k, [0]), s.pick(sv, k, [k - 1])
        return _finish(s, s("div", [low, top] if p == -2 else [top, low]), out)
    if family == "eigvalsh":
        return _finish(s, _symmetric(s, what, got, False), out)
    if family in ("det", "logdet"):
        shape, n = _square(A, what, LU_MAX_N)
        return _finish(s, _lu_det(s, A, shape, 0 if family == "det" else 3), out)
    if family in ("inv", "inv_ex"):
        shape, n = _square(A, what, LU_MAX_N)
        return _finish(s, _lu_inverse(s, A, shape), out)
    if family == "cholesky":
        shape, n = _square(A, what, LU_MAX_N)
        upper = _flag(got, "upper", False, what)
        return _finish(s, s("linalg_cholesky", [_matrices_of(s, A, shape)[0]], upper=upper), out)
    if family in ("solve_triangular", "cholesky_solve"):
        return _finish(s, _triangular(s, family, got, out), out)
    if family == "pinv":
        return _finish(s, _pinv(s, fn, got), out)
    if family == "matrix_rank":
        return _matrix_rank(s, got, out)
    if family in ("lu_solve", "lu_solve_old"):
        return _finish(s, _lu_solve(s, family, got, out), out)
    shape, n = _square(A, what)
    mats, _ = _matrices_of(s, A, shape)
    if family == "matrix_power":
        k = got.get("n")
        if not isinstance(k, int) or isinstance(k, bool) or abs(k) > MAX_POWER:
            raise _Refused(f"{what}: ptec takes an integer power |n| <= {MAX_POWER}")
        return _finish(s, _power(s, mats, n, k), out)
    if family == "matrix_exp":
        return _finish(s, _exp(s, mats, n), out)
    raise _Refused(f"{what}: not covered")


def _elements(fn, ins, family: str, by_name):
    """The per-element maker of slogdet / inv_ex / solve_ex: (getitem fx
    node, index) -> its nodes; an element not computed (info, an int, or a
    form not covered) is one unsupported node with the reason."""
    def element(item: torch.fx.Node, index):
        out = _meta_shape(item)
        try:
            if out is None:
                raise _Refused(f"torch.linalg.{family}: its traced shape is unknown")
            if family == "slogdet" and index in (0, "sign", 1, "logabsdet"):
                got = _bind(fn, NAMES[family])
                if got is None:
                    raise _Refused("torch.linalg.slogdet: ptec computes it without out=")
                s = _Fp32(item.name)
                shape, n = _square(got.get("A"), "torch.linalg.slogdet", LU_MAX_N)
                return _finish(s, _lu_det(s, got["A"], shape, 1 if index in (0, "sign") else 2), out)
            if family in ("inv_ex", "solve_ex") and index in (0, "inverse", "result"):
                return _compute(fn, family, by_name, out, item.name)
            if family == "eigh" and index in (0, "eigenvalues", 1, "eigenvectors"):
                got = _bind(fn, NAMES[family])
                if got is None:
                    raise _Refused("torch.linalg.eigh: ptec computes it without out=")
                s = _Fp32(item.name)
                return _finish(s, _symmetric(s, "torch.linalg.eigh", got, index in (1, "eigenvectors")), out)
            if family in ("svd", "svd_old") and index in (0, "U", 1, "S", 2, "Vh" if family == "svd" else "V"):
                got = _bind(fn, NAMES[family])
                if got is None:
                    raise _Refused(f"torch.linalg.{family}: ptec computes it without out=")
                s = _Fp32(item.name)
                return _finish(s, _svd_element(s, family, got, index), out)
            if family in ("qr", "qr_old") and index in (0, "Q", 1, "R"):
                got = _bind(fn, NAMES[family])
                if got is None:
                    raise _Refused("torch.linalg.qr: ptec computes it without out=")
                s = _Fp32(item.name)
                return _finish(s, _qr_element(s, family, got, index), out)
            if family in ("geqrf", "cholesky_ex"):             # capture_compact_factors
                from .capture_compact_factors import compact_element
                got = _bind(fn, NAMES[family])
                if got is None:
                    raise _Refused(f"torch.{'geqrf' if family == 'geqrf' else 'linalg.cholesky_ex'}: ptec computes "
                                   "it without out=")
                return compact_element(_Fp32(item.name), family, got, index, out)
            if family in ("lu_factor", "lu_factor_ex", "lu", "lu_old", "lu_unpack"):
                got = _bind(fn, NAMES[family])
                if got is None:
                    raise _Refused(f"{LU_WHAT[family]}: ptec computes it without out=")
                return _lu_result(_Fp32(item.name), family, got, index, out)
            if family == "lstsq" and index in LSTSQ_RESULTS:
                got = _bind(fn, NAMES[family])
                if got is None:
                    raise _Refused("torch.linalg.lstsq: ptec computes it without out=")
                s = _Fp32(item.name)
                s.by_name = by_name
                which = LSTSQ_RESULTS[index]
                if which == "rank":
                    from .capture_reductions import _int_view
                    _int_view(_Int8Steps(s), _lstsq(s, got, out, which), list(out))
                    return s.done()
                return _finish(s, _lstsq(s, got, out, which), out)
            if family == "triangular_solve" and index in (0, "solution"):
                got = _bind(fn, NAMES[family])
                if got is None:
                    raise _Refused("torch.triangular_solve: ptec computes it without out=")
                s = _Fp32(item.name)
                s.by_name = by_name
                return _finish(s, _triangular(s, family, got, out), out)
            raise _Refused(f"torch.linalg.{family}()[{index!r}]: ptec computes "
                           + ("sign and logabsdet" if family == "slogdet" else
                              "the solution only (the cloned coefficient is A itself)" if family == "triangular_solve"
                              else "the inverse or result only (no info: it never checks)"))
        except _Refused as why:
            from .capture import _element_of, _function_node       # capture imports this module
            refused = _element_of(item.name, _function_node(fn, ins), index)
            # named as the call the model made, not the getitem that reads it
            refused.attrs["source"] = (f"{fn.name} ({'Tensor.lu' if fn.op == 'call_method' else LU_WHAT[family]})"
                                       if family in LU_WHAT else
                                       f"{fn.name} ({'Tensor' if fn.op == 'call_method' else 'torch.linalg'}.{family})"
                                       .replace("torch.linalg.geqrf", "torch.geqrf"))
            refused.attrs["why"] = str(why)
            return [refused]
    return element


def matrix_function_nodes(fn, ins, by_name):
    """The nodes of a small-matrix call; for slogdet / inv_ex / solve_ex
    (tuples) a function (getitem fx node, index) -> its nodes; for one of
    these calls in a form not covered, the unsupported node with its reason
    (attrs["why"]); else None."""
    if fn.op not in ("call_function", "call_method"):
        return None
    try:
        hash(fn.target)
    except TypeError:
        return None
    family = _family(fn)
    if family is None:
        return None
    out = _meta_shape(fn)
    try:
        if family in ("slogdet", "inv_ex", "solve_ex", "triangular_solve", "eigh", "svd", "svd_old", "lstsq", "qr",
                      "qr_old", "geqrf", "cholesky_ex", "lu_factor", "lu_factor_ex", "lu", "lu_old", "lu_unpack"):
            return _elements(fn, ins, family, by_name)
        if out is None:
            raise _Refused(f"torch.linalg.{family}: its traced shape is unknown")
        made = _compute(fn, family, by_name, out)
        if made is None:
            return None
        return made
    except _Refused as why:
        from .capture import _function_node       # capture imports this module
        refused = _function_node(fn, ins)
        refused.attrs["why"] = str(why)
        return [refused]
