"""torch's linear-algebra calls as exact rewrites at capture (issue 15):
torch.dot / vdot, inner, outer / ger, mv, addmm, addmv, addbmm, baddbmm,
addr, tensordot and linalg.vecdot are each one product of tensors, so one
int8 batch matmul of the operands permuted and viewed as [B, rows, K] @
[B, K, cols] (_product; linalg.multi_dot and chain_matmul: one per pair),
with the scalars alpha / beta as constant muls and `input` broadcast to
the product's shape and added; torch.cross / linalg.cross of 3-vectors is the operands' copies
rotated along dim (slices joined), two int8 muls and a sub; torch.cdist
is the differences of every pair of rows (rows copied and joined, an int8
sub), then the square root of each difference times itself (p = 2, a
batch matmul and a LUT), the maximum of |d| (p = inf, a max pool) or |d|
(p = 1) or |d|^p summed and the 1/p power (other p > 0, LUTs and a mean
times the count).

Either operand may be computed from the input or be a constant: a
constant's permutes and views are done now, on its value. A call in a form
this module does not rewrite stays the unsupported node capture makes,
with the reason in one line (linalg_nodes)."""
from __future__ import annotations

import math
from typing import List, Optional, Sequence, Union

import numpy as np
import torch

from .capture_calls import torch_functions, _ints, _meta_shape, _reduce_max_nodes
from .capture_rewrites import _constant_of, _number, _Steps
from .ir import Node


def _numel(shape: Sequence[int]) -> int:
    return int(np.prod(shape)) if len(shape) else 1


class _Build(_Steps):
    """_Steps that know the call's constants (capture's nodes by name). An
    operand is an fx node of the call or the name of an earlier step."""

    def __init__(self, fn, by_name):
        super().__init__(fn.name)
        self.by_name = by_name

    def const(self, value) -> str:
        return super().const(np.array(value, np.float32))     # a copy of its own: views of broadcasts are read-only

    def value(self, arg):
        """arg's value if it is a constant, else None."""
        return None if isinstance(arg, str) else _constant_of(arg, self.by_name)

    def arranged(self, arg, shape, order, view, full=None) -> str:
        """arg (of `shape`; broadcast to `full` first, when given) with its
        dims in `order`, viewed as `view`: a constant's value is moved now,
        a tensor of the program gets a permute (when the order moves a dim)
        and a reshape (when the view differs)."""
        full = list(shape) if full is None else list(full)
        value = self.value(arg)
        if value is not None:
            value = np.broadcast_to(value.astype(np.float32), full)
            return self.const(np.transpose(value, order).reshape(view))
        cur = self.spread(arg, shape, full)
        if list(order) != list(range(len(full))):
            cur = self("permute", [cur], dims=list(order))
        if [full[d] for d in order] != list(view):
            cur = self("reshape", [cur], target_shape=list(view))
        return cur

    def spread(self, arg, shape, full, scale: float = 1.0) -> str:
        """arg (of `shape`, broadcastable to `full`) times scale, copied to
        `full` as torch broadcasts it: a constant's value now, a tensor of
        the program viewed with leading 1s and joined copies along each
        dim of size 1 (exact: the int8 bytes repeated)."""
        value = self.value(arg)
        if value is not None:
            return self.const(np.broadcast_to(value.astype(np.float32) * scale, full))
        cur = arg if isinstance(arg, str) else arg.name
        kept = [1] * (len(full) - len(shape)) + list(shape)
        if scale != 1.0:
            cur = self("mul", [cur, self.const(scale)])
        if kept != list(shape):
            cur = self("reshape", [cur], target_shape=kept)
        return self.widen(cur, kept, full)


def _product(s: _Build, a, ash, b, bsh, batch, ca, cb) -> str:
    """The contraction of a's dims ca with b's dims cb (pairwise), a's and
    b's dims `batch` (pairs) kept as one batch: a's dims moved to [batch,
    its free dims, ca] and viewed as [B, L, K], b's to [batch, cb, its free
    dims] as [B, K, R], one int8 batch matmul giving [B, L, R] (a K of 1 is
    the outer product). A b of the program whose dims are in the order
    [batch, free, cb] is viewed as [B, R, K] and transposed by a permute
    the matmul's lowering takes as it is."""
    ba, bb = [p[0] for p in batch], [p[1] for p in batch]
    fa = [d for d in range(len(ash)) if d not in ba and d not in ca]
    fb = [d for d in range(len(bsh)) if d not in bb and d not in cb]
    n_b, n_k = _numel([ash[d] for d in ba]), _numel([ash[d] for d in ca])
    n_l, n_r = _numel([ash[d] for d in fa]), _numel([bsh[d] for d in fb])
    lhs = s.arranged(a, ash, ba + fa + list(ca), [n_b, n_l, n_k])
    natural = bb + list(cb) + fb
    transposed = bb + fb + list(cb)
    if s.value(b) is None and natural != list(range(len(bsh))) and transposed == list(range(len(bsh))):
        rhs = s("permute", [s.arranged(b, bsh, transposed, [n_b, n_r, n_k])], dims=[0, 2, 1])
    else:
        rhs = s.arranged(b, bsh, natural, [n_b, n_k, n_r])
    return s("matmul", [lhs, rhs])


def _bind(fn, names):
    """fn's arguments by name (names in torch's order), or None when it
    passes one torch does not name or an out= tensor."""
    if len(fn.args) > len(names) or set(fn.kwargs) - set(names):
        return None
    got = dict(zip(names, fn.args))
    got.update(fn.kwargs)
    return None if got.get("out") is not None else got


def _shape(arg):
    return _meta_shape(arg) if isinstance(arg, torch.fx.Node) else None


Result = Union[List[Node], str, None]

# what each call's arguments are, in torch's order (Tensor methods: self first)
_NAMES = {
    "dot": ("input", "other", "out"), "inner": ("input", "other", "out"), "outer": ("input", "vec2", "out"),
    "mv": ("input", "vec", "out"), "addmm": ("input", "mat1", "mat2", "beta", "alpha", "out"),
    "addmv": ("input", "mat", "vec", "beta", "alpha", "out"),
    "addbmm": ("input", "batch1", "batch2", "beta", "alpha", "out"),
    "baddbmm": ("input", "batch1", "batch2", "beta", "alpha", "out"),
    "addr": ("input", "vec1", "vec2", "beta", "alpha", "out"),
    "tensordot": ("a", "b", "dims", "out"), "vecdot": ("x", "y", "dim", "out"),
    "cross": ("input", "other", "dim", "out"), "cdist": ("x1", "x2", "p", "compute_mode"),
}

# (the two factors' names, each one's contracted dims, batch dims kept) of
# the calls that are one product: dims of the traced shapes' ranks
_PRODUCTS = {
    "dot": (("input", "other"), lambda ra, rb: ([0], [0], [])),
    "inner": (("input", "other"), lambda ra, rb: ([ra - 1], [rb - 1], [])),
    "outer": (("input", "vec2"), lambda ra, rb: ([], [], [])),
    "mv": (("input", "vec"), lambda ra, rb: ([1], [0], [])),
    "addmm": (("mat1", "mat2"), lambda ra, rb: ([1], [0], [])),
    "addmv": (("mat", "vec"), lambda ra, rb: ([1], [0], [])),
    "addbmm": (("batch1", "batch2"), lambda ra, rb: ([0, 2], [0, 1], [])),
    "baddbmm": (("batch1", "batch2"), lambda ra, rb: ([2], [1], [(0, 0)])),
    "addr": (("vec1", "vec2"), lambda ra, rb: ([], [], [])),
}


def _call_name(fn) -> Optional[str]:
    """The family name of fn's target (torch.ger is outer, torch.vdot is
    dot: the same for real tensors), or None for a call not rewritten here."""
    t = fn.target
    if isinstance(t, str):
        name = {"ger": "outer", "vdot": "dot"}.get(t, t)
        return name if name in _NAMES and name not in ("tensordot", "vecdot", "cdist") else None
    for name, targets in _TARGETS.items():
        if any(t is x for x in targets):
            return name
    return None


_TARGETS = {
    "dot": torch_functions("dot", "vdot"), "inner": torch_functions("inner"), "outer": torch_functions("outer", "ger"),
    "mv": torch_functions("mv"), "addmm": torch_functions("addmm"), "addmv": torch_functions("addmv"), "addbmm": torch_functions("addbmm"),
    "baddbmm": torch_functions("baddbmm"), "addr": torch_functions("addr"), "tensordot": torch_functions("tensordot"),
    "multi_dot": torch_functions("linalg.multi_dot", "chain_matmul"), "vecdot": torch_functions("linalg.vecdot"),
    "cross": torch_functions("cross"), "linalg.cross": torch_functions("linalg.cross"), "cdist": torch_functions("cdist"),
}


def _scaled_sum(s: _Build, got, product, out) -> Result:
    """alpha * product() + beta * input, input broadcast to out. As in
    torch, beta = 0 does not read input; alpha = 0 leaves beta * input."""
    alpha, beta, c = got.get("alpha", 1), got.get("beta", 1), got.get("input")
    if not (_number(alpha) and _number(beta)):
        return "ptec rewrites finite number alpha and beta"
    if not isinstance(c, torch.fx.Node) or _shape(c) is None:
        return "ptec rewrites a tensor input"
    if alpha == 0 and (beta == 0 or s.value(c) is not None):
        return "alpha=0 leaves beta * input, here a constant: not a function of the program's input"
    terms = []
    if alpha != 0:
        terms.append(s("reshape", [product()], target_shape=out))
        if alpha != 1:
            terms[-1] = s("mul", [terms[-1], s.const(float(alpha))])
    if beta != 0:
        terms.append(s.spread(c, _shape(c), out, float(beta)))
    if len(terms) == 2:
        s("add", terms)
    elif terms[0] == c.name:
        s("identity", terms)            # alpha=0, beta=1: input itself
    return s.done()


def _products(fn, s: _Build, name, got, out) -> Result:
    (ka, kb), dims = _PRODUCTS[name]
    a, b = got.get(ka), got.get(kb)
    ash, bsh = _shape(a), _shape(b)
    if ash is None or bsh is None:
        return "ptec rewrites tensor operands of known shapes"
    if name == "inner" and (not ash or not bsh):
        return "a 0-d operand: write a * b"
    ca, cb, batch = dims(len(ash), len(bsh))

    def product():
        return _product(s, a, ash, b, bsh, batch, ca, cb)
    if name.startswith("add") or name == "baddbmm":
        return _scaled_sum(s, got, product, out)
    s("reshape", [product()], target_shape=out)
    return s.done()


def _tensordot(fn, s: _Build, got, out) -> Result:
    """torch.tensordot(a, b, dims): dims an int (a's last dims with b's
    first) or two lists of dims, paired in order."""
    a, b, dims = got.get("a"), got.get("b"), got.get("dims", 2)
    ash, bsh = _shape(a), _shape(b)
    if ash is None or bsh is None:
        return "ptec rewrites tensor operands of known shapes"
    if isinstance(dims, int) and not isinstance(dims, bool):
        ca, cb = list(range(len(ash) - dims, len(ash))), list(range(dims))
    elif isinstance(dims, (tuple, list)) and len(dims) == 2 and _ints(dims[0]) is not None \
            and _ints(dims[1]) is not None:
        ca = [d % len(ash) for d in _ints(dims[0])]
        cb = [d % len(bsh) for d in _ints(dims[1])]
    else:
        return "ptec rewrites dims given as an int or two lists of ints (not a tensor)"
    s("reshape", [_product(s, a, ash, b, bsh, [], ca, cb)], target_shape=out)
    return s.done()


def _multi_dot(fn, s: _Build, out) -> Result:
    """torch.linalg.multi_dot([a, b, ...]) and torch.chain_matmul(a, b,
    ...): the matrices multiplied left to right, each product an int8
    matmul of [1, rows, K] @ [1, K, cols] (multi_dot's first operand may be
    a vector, a row, and its last one a column). torch picks the order with
    the fewest multiplies; any order is the same product."""
    ops = list(fn.args[0]) if fn.target is torch.linalg.multi_dot else list(fn.args)
    if set(fn.kwargs) - {"out"} or fn.kwargs.get("out") is not None or not ops \
            or not all(isinstance(o, torch.fx.Node) and _shape(o) is not None for o in ops):
        return "ptec rewrites a list of tensors"
    shapes = [_shape(o) for o in ops]
    if len(ops) == 1:
        s("identity", [ops[0].name])
        return s.done()
    first = shapes[0]
    rows = [1] + first if len(first) == 1 else first
    cur = s.arranged(ops[0], first, list(range(len(first))), [1] + rows)
    for o, sh in zip(ops[1:], shapes[1:]):
        mat = sh + [1] if len(sh) == 1 else sh
        cur = s("matmul", [cur, s.arranged(o, sh, list(range(len(sh))), [1] + mat)])
    s("reshape", [cur], target_shape=out)
    return s.done()


def _vecdot(fn, s: _Build, got, out) -> Result:
    """torch.linalg.vecdot(x, y, dim): both broadcast to one shape, dim
    moved last and every other dim one batch: [N, 1, K] @ [N, K, 1]."""
    x, y, dim = got.get("x"), got.get("y"), got.get("dim", -1)
    xs, ys = _shape(x), _shape(y)
    if xs is None or ys is None or not isinstance(dim, int) or isinstance(dim, bool):
        return "ptec rewrites tensor operands of known shapes and an int dim"
    full = list(torch.broadcast_shapes(torch.Size(xs), torch.Size(ys)))
    dim %= len(full)
    order = [d for d in range(len(full)) if d != dim] + [dim]
    n, k = _numel(out), full[dim]
    parts = [s.arranged(arg, sh, order, view, full) for arg, sh, view in ((x, xs, [n, 1, k]), (y, ys, [n, k, 1]))]
    s("reshape", [s("matmul", parts)], target_shape=out)
    return s.done()


def _cross(fn, s: _Build, got, out, linalg: bool) -> Result:
    """torch.cross / linalg.cross of 3-vectors along dim: c = a' * b'' -
    a'' * b', where ' and '' are the vectors rotated by one and two places
    (c0 = a1 b2 - a2 b1, ...): slices of the int8 bytes joined, two int8
    muls and a sub. torch.cross without dim takes the first dim of size 3,
    which torch 2.x moves to the last: ptec asks for dim unless they agree."""
    a, b = got.get("input"), got.get("other")
    ash, bsh = _shape(a), _shape(b)
    if ash is None or bsh is None:
        return "ptec rewrites tensor operands of known shapes"
    dim = got.get("dim", -1 if linalg else None)
    if dim is None:
        threes = [d for d, n in enumerate(out) if n == 3]
        if not threes or threes[0] != len(out) - 1:
            return "give dim= (torch's default dim is changing from the first of size 3 to the last)"
        dim = threes[0]
    if not isinstance(dim, int) or isinstance(dim, bool):
        return "ptec rewrites an int dim"
    dim %= len(out)

    def rotated(arg, shape, by):
        value = s.value(arg)
        if value is not None:
            return s.const(np.roll(np.broadcast_to(value.astype(np.float32), out), -by, axis=dim))
        wide = s.spread(arg, shape, out)
        parts = [s("slice", [wide], dim=dim, start=by, end=3), s("slice", [wide], dim=dim, start=0, end=by)]
        return s("cat", parts, dim=dim)
    ra1, ra2, rb1, rb2 = rotated(a, ash, 1), rotated(a, ash, 2), rotated(b, bsh, 1), rotated(b, bsh, 2)
    s("sub", [s("mul", [ra1, rb2]), s("mul", [ra2, rb1])])
    return s.done()


def _cdist(fn, s: _Build, got, out) -> Result:
    """torch.cdist(x1 [..., P, M], x2 [..., R, M], p): the rows of x1 each
    copied R times and x2's rows copied P times (joins of the int8 bytes,
    [B*P, R, M]), an int8 sub, then the p-norm over M: p = 2 each
    difference times itself in a batch matmul and the square root (a LUT);
    p = inf the maximum of |d| (a max pool); other p |d| (p = 1) or |d|^p
    summed (a mean times M) and the 1/p power, LUTs. Exact for every
    compute_mode (they only choose torch's float algorithm).
    """
    a, b, p = got.get("x1"), got.get("x2"), got.get("p", 2.0)
    ash, bsh = _shape(a), _shape(b)
    if ash is None or bsh is None or len(ash) < 2 or len(bsh) < 2:
        return "ptec rewrites tensor operands of known shapes"
    if not isinstance(p, (int, float)) or isinstance(p, bool) or not p > 0:
        return f"p={p}: ptec rewrites p > 0 (p=0 counts differing elements)"
    batch = list(out[:-2])
    n_b, rows, cols, m = _numel(batch), ash[-2], bsh[-2], ash[-1]

    def copied(arg, shape, per, view, wide):
        """arg broadcast to batch + per, viewed as view, copied along its
        dim of size 1 to wide and viewed as [B*P, R, M] (a constant's copies
        made now)."""
        value = s.value(arg)
        if value is not None:
            value = np.broadcast_to(value.astype(np.float32), batch + per).reshape(view)
            return s.const(np.broadcast_to(value, wide).reshape(n_b * rows, cols, m))
        cur = s.widen(s.arranged(arg, shape, list(range(len(batch) + 2)), view, batch + per), view, wide)
        return cur if wide == [n_b * rows, cols, m] else s("reshape", [cur], target_shape=[n_b * rows, cols, m])
    # x1's rows each copied cols times; x2's block of rows copied rows times
    left = copied(a, ash, [rows, m], [n_b * rows, 1, m], [n_b * rows, cols, m])
    right = copied(b, bsh, [cols, m], [n_b, 1, cols * m], [n_b, rows, cols * m])
    d = s("sub", [left, right])
    if p == 2:
        # each difference row times itself: [N, 1, M] @ [N, M, 1], squares
        # summed exactly in the matmul's int32 accumulator, one rounding
        pairs = n_b * rows * cols
        squares = s("matmul", [s("reshape", [d], target_shape=[pairs, 1, m]),
                               s("reshape", [d], target_shape=[pairs, m, 1])])
        s("reshape", [s("elementwise", [squares], fn="sqrt")], target_shape=out)
        return s.done()
    cur = s("elementwise", [d], fn="abs")
    if math.isinf(p):
        s.nodes.extend(_reduce_max_nodes(f"{s.name}__max", cur, [n_b * rows, cols, m], [2], False, False))
        s("reshape", [s.nodes[-1].name], target_shape=out)
        return s.done()
    if p != 1:
        cur = s("elementwise", [cur], fn="pow", exponent=float(p))
    cur = s("mul", [s("mean", [cur], dim=[2], keepdim=False), s.const(m)])
    if p != 1:
        cur = s("elementwise", [cur], fn="pow", exponent=1.0 / p)
    s("reshape", [cur], target_shape=out)
    return s.done()


def _rewrite(fn, by_name) -> Result:
    name = _call_name(fn)
    out = _meta_shape(fn)
    if name is None:
        return None
    if out is None:
        return "its traced shape is unknown"
    s = _Build(fn, by_name)
    if name == "multi_dot":
        return _multi_dot(fn, s, out)
    got = _bind(fn, _NAMES["cross" if name == "linalg.cross" else name])
    if got is None:
        return "ptec rewrites the call without out= and with torch's argument names"
    if name in _PRODUCTS:
        return _products(fn, s, name, got, out)
    if name == "tensordot":
        return _tensordot(fn, s, got, out)
    if name == "vecdot":
        return _vecdot(fn, s, got, out)
    if name in ("cross", "linalg.cross"):
        return _cross(fn, s, got, out, name == "linalg.cross")
    return _cdist(fn, s, got, out)


def linalg_nodes(fn, ins, by_name) -> Optional[List[Node]]:
    """The nodes of a linear-algebra call this module rewrites; for one of
    its calls in a form it does not, the unsupported node capture makes,
    with the reason (attrs["why"], said in the refusal's one line); else
    None."""
    if fn.op not in ("call_function", "call_method"):
        return None
    got = _rewrite(fn, by_name)
    if not isinstance(got, str):
        return got
    from .capture import _function_node       # capture imports this module
    refused = _function_node(fn, ins)
    refused.attrs["why"] = got
    return [refused]
