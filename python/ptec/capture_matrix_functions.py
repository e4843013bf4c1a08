"""Small-matrix linear algebra as exact closed forms at capture (issue 15):
determinants, inverses, solves, Cholesky factors, matrix powers and
exponentials of square matrices of n = 1..4, batched over any leading dims
(a Kalman filter's or a pose estimator's few small matrices on a
microcontroller); and the singular values (svdvals, matrix norms 2, -2,
'nuc') and symmetric eigenvalues (eigvalsh) of matrices of any size, on
kernels of their own.

Why fp32: a determinant of n = 4 is a sum of 24 products of 4 entries, an
inverse 16 such cofactors over it; rounded to int8 after each product the
result would keep barely a digit. So every step here is marked
attrs["fp32"] (FP32_REASON), which the cortex_m partitioner and every
delegating backend read as a refusal: the steps run on the portable fp32 kernels (linear, mul, div,
pow, hypot, copysign, sigmoid, slice, cat, views), the program's output is
the fp32 value, and a model around them is quantized as usual.

The shape of every form: A [..., n, n] viewed as one row of n*n entries
per matrix, [B, n*n]. Entries are picked by a linear with a 0/1 weight (an
exact copy in fp32), the factors of Leibniz's terms multiplied
element-wise, and the signed sums of terms taken by one more linear with a
+-1 weight:

* det: sum over permutations s of sign(s) * prod_i A[i, s(i)]
  (1, 2, 6, 24 terms);
* inv: the adjugate (each entry a cofactor, a Leibniz sum of the minor)
  over the determinant det = sum_j A[0, j] * C[0, j]; solve(A, B): the
  adjugate times B, over det;
* slogdet: sign = (det > 0) - (det < 0) (fp32 comparisons), logabsdet = log
  |det| by three Halley steps y += 2 (x - e^y) / (x + e^y) from the int8
  LUT's log (e^y = sigmoid(y) / sigmoid(-y): ptec has no fp32 log or exp),
  -inf where det is 0; logdet = logabsdet plus (p - p), p = det^0.5 (NaN
  where det < 0, as torch);
* cholesky: L_jj = sqrt(a_jj - sum_k L_jk^2), L_ij = (a_ij - sum_k L_ik
  L_jk) / L_jj (sqrt: pow 0.5), lower triangle read (upper=True: the upper
  one, U = L^T);
* matrix_power(A, k): repeated squaring by fp32 products (k < 0: of inv);
* matrix_exp: A / 64, its Taylor polynomial of degree 10 by Horner, squared
  6 times (fixed: the program cannot branch on the run's norm), about 1e-5
  relative while e^A stays within fp32 (|A| up to ~88);
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
* cond(A, p) for p None or 2 (sigma_max / sigma_min) or -2 (the inverse
  ratio): the same node, the two values picked and divided in fp32 (a
  singular A: a huge ratio of rounding size, or inf, where torch's is inf
  or huge; a zero A: NaN as torch); p 'fro', 'nuc', 1, inf and their
  negatives need the inverse and are refused;
* eigvalsh of a symmetric A [..., n, n] of any n (its lower triangle read,
  or the upper one with UPLO='U'): one node `eigvalsh` on A viewed as
  [B, n, n], lowered to ptec::linalg_eigvalsh.out (cyclic Jacobi rotations
  in fp32 on a scratch copy: op_linalg_eigvalsh.c), for the same reasons
  (the 2x2 and 3x3 closed forms it replaces kept about 1e-4 near a double
  eigenvalue, where acos is steep; Jacobi keeps about n roundings of the
  largest |eigenvalue| everywhere).

A singular A: det is 0 as torch's where a row or column is 0 (every term
holds a zero factor; other singular matrices give a det of rounding size,
as torch's LU may); inv and solve divide by it, giving inf / NaN where
torch raises (or huge values where det is a rounding); cholesky of a
matrix that is not positive-definite gives NaN where torch raises. Forms
not covered (n > 4, a non-square matrix, left=False, out=, a matrix of no
rows or columns) stay the unsupported node,
refused in one line naming the call and the limit."""
from __future__ import annotations

import itertools
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch

from .capture_calls import torch_functions, _meta_shape
from .capture_reductions import _norm_call
from .capture_rewrites import _constant_of, _Steps
from .ir import Node

# the largest n whose Leibniz sums are written out (24 terms of 4 factors)
MAX_N = 4
# the largest |k| of matrix_power: 2 log2 |k| fp32 products
MAX_POWER = 1024
# what the cortex_m partitioner says of a step marked fp32
FP32_REASON = ("linear algebra of a matrix (a closed form, or Jacobi rotations), computed in fp32 (int8 products of its "
               "entries would lose the result)")
HALLEY_STEPS = 3
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
    "matrix_power": (torch_functions("linalg.matrix_power", "matrix_power"), ("matrix_power",)),
    "svdvals": (torch_functions("linalg.svdvals"), ()),
    "cond": (torch_functions("linalg.cond"), ()),
    "eigvalsh": (torch_functions("linalg.eigvalsh"), ()),
    "norm": (torch_functions("linalg.matrix_norm", "linalg.norm", "norm"), ("norm",)),
    "matrix_exp": (torch_functions("linalg.matrix_exp", "matrix_exp"), ("matrix_exp",)),
}

# each call's arguments in torch's order (a method's self is the first)
NAMES = {
    "det": ("A",), "slogdet": ("A",), "logdet": ("A",), "inv": ("A",), "inv_ex": ("A", "check_errors"),
    "solve": ("A", "B", "left"), "solve_ex": ("A", "B", "left", "check_errors"),
    "cholesky": ("A", "upper"), "matrix_power": ("A", "n"), "svdvals": ("A", "driver"), "cond": ("A", "p"),
    "eigvalsh": ("A", "UPLO"), "matrix_exp": ("A",),
}


def _family(fn) -> Optional[str]:
    for name, (functions, methods) in CALLS.items():
        if fn.op == "call_method" and fn.target in methods:
            return name
        if fn.op == "call_function" and any(fn.target is f for f in functions):
            return name
    return None


class _Fp32(_Steps):
    """Steps whose arithmetic runs in fp32 (attrs["fp32"]); `int8` makes a
    step left to the usual int8 choice (a LUT, a comparison of fp32 values)."""

    def __call__(self, op, inputs, **attrs) -> str:
        return super().__call__(op, inputs, fp32=FP32_REASON, **attrs)

    def int8(self, op, inputs, **attrs) -> str:
        return super().__call__(op, inputs, **attrs)

    def const(self, value) -> str:
        return self.int8("constant", [], value=np.array(value, np.float32))

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


def _parity(perm) -> int:
    seen, sign = set(), 1
    for start in range(len(perm)):
        if start in seen:
            continue
        j, length = start, 0
        while j not in seen:
            seen.add(j)
            j, length = perm[j], length + 1
        sign *= -1 if length % 2 == 0 else 1
    return sign


def _leibniz(s: _Fp32, flat: str, n: int, minors) -> str:
    """[B, len(minors)]: minor m = (rows, cols, coefficient) gives
    coefficient * det(A[rows][:, cols]) of A = flat [B, n*n] (minors of
    one size, at least 1)."""
    terms = []          # (flat index of each factor, minor, signed coefficient)
    for m, (rows, cols, coeff) in enumerate(minors):
        for perm in itertools.permutations(range(len(rows))):
            terms.append(([rows[i] * n + cols[perm[i]] for i in range(len(rows))], m, coeff * _parity(perm)))
    k = len(minors[0][0])
    product = s.pick(flat, n * n, [t[0][0] for t in terms])
    for i in range(1, k):
        product = s("mul", [product, s.pick(flat, n * n, [t[0][i] for t in terms])])
    w = np.zeros((len(minors), len(terms)), np.float32)
    for j, (_, m, c) in enumerate(terms):
        w[m, j] = c
    return s.linear(product, w)


def _adjugate(s: _Fp32, flat: str, n: int) -> str:
    """[B, n*n]: the adjugate row-major, adj[r, c] = (-1)^(r+c) det(A
    without row c and column r)."""
    minors = []
    for r in range(n):
        for c in range(n):
            rows = [i for i in range(n) if i != c]
            cols = [j for j in range(n) if j != r]
            minors.append((rows, cols, float((-1) ** (r + c))))
    return _leibniz(s, flat, n, minors)


def _det_of(s: _Fp32, flat: str, n: int, adj: Optional[str] = None) -> str:
    """[B, 1]: det A; with the adjugate, the expansion along row 0
    (sum_j A[0, j] adj[j, 0]), so that inv's det and adjugate agree."""
    if adj is None:
        return _leibniz(s, flat, n, [(list(range(n)), list(range(n)), 1.0)])
    products = s("mul", [s.pick(flat, n * n, range(n)), s.pick(adj, n * n, [j * n for j in range(n)])])
    return s.linear(products, np.ones((1, n), np.float32))


def _product(s: _Fp32, x: str, y: str, n: int, k: int) -> str:
    """x [B, n*n] times y [B, n*k] as matrices: [B, n*k]."""
    terms = [(r, c, j) for r in range(n) for c in range(k) for j in range(n)]
    prod = s("mul", [s.pick(x, n * n, [r * n + j for r, c, j in terms]),
                     s.pick(y, n * k, [j * k + c for r, c, j in terms])])
    w = np.zeros((n * k, len(terms)), np.float32)
    for t, (r, c, j) in enumerate(terms):
        w[r * k + c, t] = 1.0
    return s.linear(prod, w)


def _bind(fn, names):
    if len(fn.args) > len(names) or set(fn.kwargs) - set(names) - {"out"} or fn.kwargs.get("out") is not None:
        return None
    got = dict(zip(names, fn.args))
    got.update(fn.kwargs)
    return got


class _Refused(Exception):
    """A form this module does not compute: its one-line reason."""


def _square(A, what: str, most: int = MAX_N) -> Tuple[List[int], int]:
    shape = _meta_shape(A) if isinstance(A, torch.fx.Node) else None
    if shape is None or len(shape) < 2:
        raise _Refused(f"{what}: ptec computes it for a tensor [..., n, n] of known shape")
    if shape[-1] != shape[-2]:
        raise _Refused(f"{what}: ptec computes it for square matrices (got {shape[-2]}x{shape[-1]})")
    n = shape[-1]
    if not 1 <= n <= most:
        raise _Refused(f"{what} of a {n}x{n} matrix: ptec computes it in closed form for n <= {most}")
    return shape, n


def _flat(s: _Fp32, A, shape) -> Tuple[str, int]:
    batch = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    return s("reshape", [A.name], target_shape=[batch, shape[-1] * shape[-1]]), batch


def _finish(s: _Fp32, cur: str, out) -> List[Node]:
    s("reshape", [cur], target_shape=list(out))
    return s.done()


def _inverse(s: _Fp32, flat: str, n: int) -> str:
    if n == 1:
        return s("div", [s.const(np.ones((1, 1), np.float32)), flat])
    adj = _adjugate(s, flat, n)
    return s("div", [adj, _det_of(s, flat, n, adj)])


def _sign(s: _Fp32, det: str) -> str:
    """(det > 0) - (det < 0) as float: comparisons of the fp32 value."""
    pos = s.int8("bool_to", [s.int8("compare", [det], kind="gt", scalar=0.0)], dtype="float32")
    neg = s.int8("bool_to", [s.int8("compare", [det], kind="lt", scalar=0.0)], dtype="float32")
    return s("sub", [pos, neg])


def _exp_of(s: _Fp32, y: str) -> str:
    """e^y = sigmoid(y) / sigmoid(-y), in fp32."""
    return s("div", [s("sigmoid", [y]), s("sigmoid", [s("mul", [y, s.const(-1.0)])])])


def _log_abs(s: _Fp32, det: str) -> str:
    """log |det|: the int8 LUT's log, refined by Halley's steps for e^y = x
    in fp32, and -inf where det is 0 (-z / (1 - z) with z = (det == 0))."""
    x = s.fn("copysign", det, 1.0)
    # the LUT reads a copy of its own: lowering keeps the int8 form it makes of its input in that
    # input's place, which would round x for the fp32 steps below too
    y = s.int8("elementwise", [s.fn("copysign", det, 1.0)], fn="log")
    for _ in range(HALLEY_STEPS):
        e = _exp_of(s, y)
        y = s("add", [y, s("mul", [s("div", [s("sub", [x, e]), s("add", [x, e])]), s.const(2.0)])])
    zero = s.int8("bool_to", [s.int8("compare", [det], kind="eq", scalar=0.0)], dtype="float32")
    return s("add", [y, s("div", [s("mul", [zero, s.const(-1.0)]), s("sub", [s.const(1.0), zero])])])


def _cholesky(s: _Fp32, flat: str, n: int, upper: bool) -> str:
    """[B, n*n]: L (or U = L^T), entry by entry as [B, 1] columns."""
    def a(i, j):
        return s("slice", [flat], dim=1, start=(j * n + i if upper else i * n + j),
                 end=(j * n + i if upper else i * n + j) + 1)
    L: Dict[Tuple[int, int], str] = {}
    for j in range(n):
        rest = a(j, j)
        for k in range(j):
            rest = s("sub", [rest, s("mul", [L[j, k], L[j, k]])])
        L[j, j] = s.fn("pow", rest, 0.5)
        for i in range(j + 1, n):
            rest = a(i, j)
            for k in range(j):
                rest = s("sub", [rest, s("mul", [L[i, k], L[j, k]])])
            L[i, j] = s("div", [rest, L[j, j]])
    zero = s("mul", [a(0, 0), s.const(0.0)])
    entries = [L.get((c, r) if upper else (r, c), zero) for r in range(n) for c in range(n)]
    return s("cat", entries, dim=1) if len(entries) > 1 else entries[0]


def _power(s: _Fp32, flat: str, n: int, k: int) -> str:
    if k < 0:
        flat, k = _inverse(s, flat, n), -k
    if k == 0:
        eye = np.eye(n, dtype=np.float32).reshape(1, n * n)
        return s("add", [s("mul", [flat, s.const(0.0)]), s.const(eye)])
    result, square = None, flat
    while True:
        if k & 1:
            result = square if result is None else _product(s, result, square, n, n)
        k >>= 1
        if not k:
            break
        square = _product(s, square, square, n, n)
    return result if result != flat else s("mul", [flat, s.const(1.0)])


def _exp(s: _Fp32, flat: str, n: int) -> str:
    """[B, n*n]: e^A by scaling and squaring: X = A / 2^s, the Taylor
    polynomial of degree EXP_DEGREE by Horner (P = I + X P / k, k down to
    1), then squared s times. s is fixed (EXP_SQUARINGS), as the program
    cannot branch on the run's norm: the constants say what range it serves."""
    eye = s.const(np.eye(n, dtype=np.float32).reshape(1, n * n))
    x = s("mul", [flat, s.const(0.5 ** EXP_SQUARINGS)])
    p = None
    for k in range(EXP_DEGREE, 0, -1):
        term = x if p is None else _product(s, x, p, n, n)
        p = s("add", [s("mul", [term, s.const(1.0 / k)]), eye])
    for _ in range(EXP_SQUARINGS):
        p = _product(s, p, p, n, n)
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


def _solve(s: _Fp32, fn, got, out) -> str:
    A, B = got.get("A"), got.get("B")
    shape, n = _square(A, "torch.linalg.solve")
    if got.get("left", True) is not True:
        raise _Refused("torch.linalg.solve(left=False): ptec solves A X = B (left=True)")
    bshape = _meta_shape(B) if isinstance(B, torch.fx.Node) else None
    if bshape is None or not bshape:
        raise _Refused("torch.linalg.solve: ptec takes B a tensor of known shape")
    vector = len(bshape) == 1 or (len(bshape) == len(shape) - 1 and list(bshape) == list(shape[:-1]))
    cols = 1 if vector else bshape[-1]
    rows_b = bshape if vector else bshape[:-1]
    bbatch = list(rows_b[:-1])
    abatch = list(shape[:-2])
    if rows_b[-1] != n or bbatch != abatch[len(abatch) - len(bbatch):] or len(bbatch) > len(abatch):
        raise _Refused("torch.linalg.solve: ptec takes B with A's batch dims (or none) and n rows")
    if list(out) != abatch + ([n] if vector else [n, cols]):
        raise _Refused(f"torch.linalg.solve: B {bshape} read as a {'vector' if vector else 'matrix'} does not give "
                       f"torch's result shape {list(out)}")
    flat, batch = _flat(s, A, shape)
    value = _constant_of(B, s.by_name)
    per = n * cols
    if value is not None:
        rhs = s.const(np.broadcast_to(np.asarray(value, np.float32).reshape(bbatch + [per]), abatch + [per])
                      .reshape(batch, per))
    elif bbatch == abatch:
        rhs = s("reshape", [B.name], target_shape=[batch, per])
    elif not bbatch:
        # one B for every matrix: its row copied down the batch
        rhs = s("reshape", [B.name], target_shape=[1, per])
        rhs = s("cat", [rhs] * batch, dim=0) if batch > 1 else rhs
    else:
        raise _Refused("torch.linalg.solve: ptec takes B with all of A's batch dims or none")
    if n == 1:
        return s("div", [rhs, flat])
    adj = _adjugate(s, flat, n)
    return s("div", [_product(s, adj, rhs, n, cols), _det_of(s, flat, n, adj)])


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
    what = f"torch.linalg.{family}" if family not in ("norm",) else "torch.linalg.matrix_norm"
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
        shape, m, n = _matrices(A, what)
        if m != n:
            raise _Refused(f"{what}: ptec computes it for square matrices (got {m}x{n})")
        uplo = got.get("UPLO", "L")
        if uplo not in ("L", "U"):
            raise _Refused(f"{what}: UPLO is 'L' or 'U'")
        batch = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
        flat = s("reshape", [A.name], target_shape=[batch, n, n])
        return _finish(s, s("eigvalsh", [flat], upper=uplo == "U"), out)
    shape, n = _square(A, what)
    flat, _ = _flat(s, A, shape)
    if family == "det":
        return _finish(s, _det_of(s, flat, n), out)
    if family in ("inv", "inv_ex"):
        return _finish(s, _inverse(s, flat, n), out)
    if family == "cholesky":
        upper = got.get("upper", False)
        if not isinstance(upper, bool):
            raise _Refused(f"{what}: upper is True or False")
        return _finish(s, _cholesky(s, flat, n, upper), out)
    if family == "matrix_power":
        k = got.get("n")
        if not isinstance(k, int) or isinstance(k, bool) or abs(k) > MAX_POWER:
            raise _Refused(f"{what}: ptec takes an integer power |n| <= {MAX_POWER}")
        return _finish(s, _power(s, flat, n, k), out)
    if family == "matrix_exp":
        return _finish(s, _exp(s, flat, n), out)
    if family == "logdet":
        det = _det_of(s, flat, n)
        root = s.fn("pow", det, 0.5)
        return _finish(s, s("add", [_log_abs(s, det), s("sub", [root, root])]), out)
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
                shape, n = _square(got.get("A"), "torch.linalg.slogdet")
                flat, _ = _flat(s, got["A"], shape)
                det = _det_of(s, flat, n)
                return _finish(s, _sign(s, det) if index in (0, "sign") else _log_abs(s, det), out)
            if family in ("inv_ex", "solve_ex") and index in (0, "inverse", "result"):
                return _compute(fn, family, by_name, out, item.name)
            raise _Refused(f"torch.linalg.{family}()[{index!r}]: ptec computes "
                           + ("the inverse or result only (no info: it never checks)" if family != "slogdet"
                              else "sign and logabsdet"))
        except _Refused as why:
            from .capture import _element_of, _function_node       # capture imports this module
            refused = _element_of(item.name, _function_node(fn, ins), index)
            # named as the call the model made, not the getitem that reads it
            refused.attrs["source"] = f"{fn.name} ({'Tensor' if fn.op == 'call_method' else 'torch.linalg'}.{family})"
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
        if family in ("slogdet", "inv_ex", "solve_ex"):
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
