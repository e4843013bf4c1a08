"""Calls whose exact rewrite in ops ptec already lowers in int8 capture does
itself (issue 15), so that a model need not spell it: reductions of a whole
tensor to a 0-d value, x.var / x.std, torch.logsumexp, torch.cumsum over
any dim, x.prod / cumprod, torch.tril / triu, masked_fill and torch.where
on a constant condition, torch.gather with a constant index, F.pdist,
F.linear with a weight computed from the input, and torch.einsum. Each
returns None for a call it does not cover (which then stays an
unsupported node, refused by name); einsum_refusal says why an einsum
call is not rewritten.

ptec's int8 add, sub and mul take operands of one shape, so a value that
broadcasts along a dim (a mean kept over dim d) is first copied along d
to the other operand's shape (a join of copies, exact)."""
from __future__ import annotations

from typing import List, Optional

import numpy as np
import torch

from .capture_calls import _ints, _meta_shape, _reduce_max_nodes, _scalar_arg
from .capture_index_uses import index_use_nodes
from .capture_nonzero import value_length_nodes
from .capture_embedding_computed import computed_table_embedding_nodes
from .capture_scatter import scatter_nodes
from .capture_bag_of_values import bag_of_values_nodes
from .capture_ldexp import ldexp_nodes
from .ir import Node


class _Steps:
    """Nodes named name_0, name_1, ...; the last one takes `name` itself."""

    def __init__(self, name: str):
        self.name, self.nodes = name, []

    def __call__(self, op, inputs, **attrs) -> str:
        # "__": fx names a second call x_1, which a step suffix "_1" would repeat
        self.nodes.append(Node(f"{self.name}__{len(self.nodes)}", op, list(inputs), attrs))
        return self.nodes[-1].name

    def const(self, value) -> str:
        return self("constant", [], value=np.asarray(value, np.float32))

    def widen(self, src: str, kept, full) -> str:
        """src of shape `kept` (full with some dims 1) copied to `full`."""
        for d, (k, f) in enumerate(zip(kept, full)):
            if k == 1 and f > 1:
                src = self("cat", [src] * f, dim=d)
        return src

    def done(self) -> List[Node]:
        self.nodes[-1].name = self.name
        return self.nodes


class Fp32Steps(_Steps):
    """Steps whose arithmetic runs in fp32 (attrs["fp32"] = the subclass's
    `reason`, which the partitioners read); `int8` makes a step left to the
    usual int8 choice (a LUT, a comparison of fp32 values), and constants
    are such steps."""
    reason = ""

    def __call__(self, op, inputs, **attrs) -> str:
        return super().__call__(op, inputs, fp32=self.reason, **attrs)

    def int8(self, op, inputs, **attrs) -> str:
        return super().__call__(op, inputs, **attrs)

    def const(self, value) -> str:
        return self.int8("constant", [], value=np.array(value, np.float32))


def _whole(steps: _Steps, src: str, shape):
    """src viewed as [1, numel] to reduce over dim 1: (node, shape, dims)."""
    n = int(np.prod(shape)) if shape else 1
    return steps("reshape", [src], target_shape=[1, n]), [1, n], [1]


def _whole_reduction(fn, ins) -> Optional[List[Node]]:
    """x.max(), x.min(), x.amax() with no dims, x.mean(), x.sum(): the
    reduction of the tensor viewed as [1, numel] over dim 1, then viewed as
    the 0-d tensor torch returns (a 0-d program output is one value)."""
    t = fn.target
    kinds = {"max": "max", torch.max: "max", "min": "min", torch.min: "min", "mean": "mean", torch.mean: "mean",
             "sum": "sum", torch.sum: "sum"}
    try:
        kind = kinds.get(t)
    except TypeError:
        return None
    if kind is None or len(fn.args) != 1 or fn.kwargs or not isinstance(fn.args[0], torch.fx.Node):
        return None
    shape = _meta_shape(fn.args[0])
    if shape is None:
        return None
    s = _Steps(fn.name)
    flat, fshape, dims = _whole(s, ins[0], shape)
    if kind in ("max", "min"):
        s.nodes.extend(_reduce_max_nodes(f"{fn.name}__max", flat, fshape, dims, False, kind == "min"))
        cur = s.nodes[-1].name
    else:
        cur = s("mean", [flat], dim=dims, keepdim=False)
        if kind == "sum":
            cur = s("mul", [cur, s.const(fshape[1])])
    s("reshape", [cur], target_shape=[])
    nodes = s.done()
    # marks the steps as one whole reduction: of a selection x[mask], whose
    # length varies per run, capture_masked_select redoes them over x
    nodes[0].attrs["whole"] = (kind, [n.name for n in nodes])
    return nodes


def _var_args(fn):
    """(dims or None for all, correction, keepdim, std) of x.var / x.std /
    torch.var / torch.std in torch 1.13's and 2.x's spellings, else None."""
    if fn.target not in ("var", "std", torch.var, torch.std) or not isinstance(fn.args[0], torch.fx.Node):
        return None
    args, kw = list(fn.args[1:]), dict(fn.kwargs)
    if kw.get("out") is not None or set(kw) - {"dim", "unbiased", "keepdim", "correction", "out"}:
        return None
    if args and isinstance(args[0], bool):           # x.var(False): unbiased, every element
        kw["unbiased"] = args.pop(0)
    for key, v in zip(("dim", "unbiased", "keepdim"), args):
        kw[key] = v
    if len(args) > 3:
        return None
    dim = kw.get("dim")
    dims = None if dim is None else _ints(dim)
    if dim is not None and not dims:
        return None
    correction = kw.get("correction")
    if correction is None:
        correction = 1 if kw.get("unbiased", True) is not False else 0
    if not isinstance(correction, (int, float)) or isinstance(correction, bool) \
            or not isinstance(kw.get("keepdim", False), bool):
        return None
    return dims, float(correction), kw.get("keepdim", False), fn.target in ("std", torch.std)


def _lines(s: _Steps, src: str, shape, dims):
    """src as [K, n]: each row one group of the n values reduced over dims
    (None: every value, K = 1), the reduced dims permuted last first where
    they are not already (moves of the int8 bytes). Returns (node, K, n)."""
    rank = len(shape)
    dims = list(range(rank)) if dims is None else sorted({d % rank for d in dims})
    rest = [d for d in range(rank) if d not in dims]
    if rest + dims != list(range(rank)):
        src = s("permute", [src], dims=rest + dims)
    k, n = int(np.prod([shape[d] for d in rest])), int(np.prod([shape[d] for d in dims]))
    return s("reshape", [src], target_shape=[k, n]), k, n


def _var_nodes(fn, ins) -> Optional[List[Node]]:
    """x.var(dim) = mean((x - mean(x))^2) * n / (n - correction) over dim,
    the two-pass form (no cancellation of mean(x^2) - mean(x)^2), on x
    viewed as [K, n] (_lines): the mean of each row kept and copied along
    it, an int8 sub, the square a LUT, a mean, the factor a constant mul,
    then the view of torch's output shape; x.std: the square root, one
    more LUT."""
    parsed = _var_args(fn)
    shape, out = (_meta_shape(fn.args[0]), _meta_shape(fn)) if parsed else (None, None)
    if shape is None or out is None or not shape:
        return None
    dims, correction, _, std = parsed
    s = _Steps(fn.name)
    src, k, n = _lines(s, ins[0], shape, dims)
    if n - correction <= 0:
        return None                         # torch gives inf or nan: nothing int8 holds
    mean = s("mean", [src], dim=[1], keepdim=True)
    dev = s("sub", [src, s.widen(mean, [k, 1], [k, n])])
    cur = s("mean", [s("elementwise", [dev], fn="square")], dim=[1], keepdim=False)
    if correction:
        cur = s("mul", [cur, s.const(n / (n - correction))])
    if std:
        cur = s("elementwise", [cur], fn="sqrt")
    s("reshape", [cur], target_shape=out)
    return s.done()


def _logsumexp_nodes(fn, ins) -> Optional[List[Node]]:
    """torch.logsumexp(x, dim, keepdim) = m + log(sum(exp(x - m))) with m
    the maximum over dim (a max pool, on x's grid), on x viewed as [K, n]
    (_lines): x - m <= 0, so exp is a LUT onto (0, 1] and the sum is at
    least 1, which keeps every stage in a range int8 resolves whatever x's
    magnitude."""
    if fn.target not in (torch.logsumexp, "logsumexp") or set(fn.kwargs) - {"dim", "keepdim"} \
            or not isinstance(fn.args[0], torch.fx.Node):
        return None
    shape, dims, out = _meta_shape(fn.args[0]), _ints(_scalar_arg(fn, 1, "dim")), _meta_shape(fn)
    if shape is None or not shape or not dims or out is None:
        return None
    s = _Steps(fn.name)
    src, k, n = _lines(s, ins[0], shape, dims)
    s.nodes.extend(_reduce_max_nodes(f"{fn.name}__max", src, [k, n], [1], True, False))
    m = top = s.nodes[-1].name
    if fn.meta.get("ptec_fp32"):    # fp32: a row all -inf subtracts a finite max (exp 0, log -inf), not NaN
        top = s("clamp", [m], lo=float(np.finfo(np.float32).min), hi=None)
    e = s("elementwise", [s("sub", [src, s.widen(top, [k, 1], [k, n])])], fn="exp")
    total = s("mul", [s("mean", [e], dim=[1], keepdim=True), s.const(n)])
    s("reshape", [s("add", [s("elementwise", [total], fn="log"), m])], target_shape=out)
    return s.done()


def _cumsum_nodes(fn, ins) -> Optional[List[Node]]:
    """torch.cumsum(x, dim) over a dim other than the last: dim swapped to
    the end, the triangular linear of capture_calls._cumsum_node, swapped
    back (permutes move int8 bytes)."""
    if fn.target not in (torch.cumsum, "cumsum") or set(fn.kwargs) - {"dim", "dtype"} \
            or fn.kwargs.get("dtype") is not None or not isinstance(fn.args[0], torch.fx.Node):
        return None
    shape, dim = _meta_shape(fn.args[0]), _scalar_arg(fn, 1, "dim")
    if shape is None or not shape or not isinstance(dim, int) or isinstance(dim, bool):
        return None
    dim %= len(shape)
    if dim == len(shape) - 1:
        return None                     # capture_calls._cumsum_node's case
    perm = list(range(len(shape)))
    perm[dim], perm[-1] = perm[-1], perm[dim]
    n = shape[dim]
    s = _Steps(fn.name)
    cur = s("permute", [ins[0]], dims=perm)
    cur = s("linear", [cur], weight=np.tril(np.ones((n, n), np.float32)), bias=None)
    s("permute", [cur], dims=perm)
    return s.done()


def _triangle_nodes(fn, ins) -> Optional[List[Node]]:
    """torch.tril / triu (x, diagonal): x times the constant 0/1 triangle
    over its last two dims, spelled out to x's shape (an int8 mul)."""
    if fn.target not in (torch.tril, torch.triu, "tril", "triu") or set(fn.kwargs) - {"diagonal"} \
            or not isinstance(fn.args[0], torch.fx.Node):
        return None
    shape, k = _meta_shape(fn.args[0]), _scalar_arg(fn, 1, "diagonal", 0)
    if shape is None or len(shape) < 2 or not isinstance(k, int) or isinstance(k, bool):
        return None
    band = (np.tril if fn.target in (torch.tril, "tril") else np.triu)(np.ones(shape[-2:], np.float32), k)
    s = _Steps(fn.name)
    s("mul", [ins[0], s.const(np.broadcast_to(band, shape).copy())])
    return s.done()


def _constant_of(a, by_name):
    """The value of fx argument a when capture holds it as a constant node."""
    node = by_name.get(a.name) if isinstance(a, torch.fx.Node) else None
    return None if node is None or node.op != "constant" else np.asarray(node.attrs["value"])


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and np.isfinite(v)


def where_args(fn):
    """(cond, a, b) of torch.where(cond, a, b) or x.masked_fill(mask, v)
    (where the mask is set: the value, else x), or None for another call."""
    t = fn.target
    if t in ("masked_fill", torch.masked_fill) and len(fn.args) == 3 and not fn.kwargs:
        x, mask, value = fn.args
        return mask, value, x
    if t is torch.where and len(fn.args) == 3 and not fn.kwargs:
        return tuple(fn.args)
    return None


def _broadcasts(c: np.ndarray, out) -> bool:
    try:
        return np.broadcast_shapes(c.shape, tuple(out)) == tuple(out)
    except ValueError:
        return False


def _select_nodes(fn, ins, by_name) -> Optional[List[Node]]:
    """x.masked_fill(mask, v) and torch.where(cond, a, b) whose mask or
    condition is a constant (a buffer, or computed from constants while
    tracing): a * keep + b * (1 - keep), with each 0/1 factor a constant of
    the output's shape, a number operand a constant of that shape, and the
    products int8 muls. A condition computed from the input is a bool
    tensor: capture_bool's where."""
    out = _meta_shape(fn)
    if out is None or fn.kwargs.get("out") is not None or where_args(fn) is None:
        return None
    cond, a, b = where_args(fn)
    c = _constant_of(cond, by_name)
    if c is None or c.dtype != np.bool_:
        return None
    s = _Steps(fn.name)
    try:
        keep = np.broadcast_to(c, out).astype(np.float32)
    except ValueError:
        return None
    terms = []
    for operand, factor in ((a, keep), (b, 1.0 - keep)):
        if _number(operand):
            if operand and factor.any():
                terms.append(s.const(factor * float(operand)))
        elif _constant_of(operand, by_name) is not None and _constant_of(operand, by_name).dtype.kind == "f" \
                and _broadcasts(_constant_of(operand, by_name), out):
            # a constant made in forward (torch.zeros(1), torch.full((T, T), -1e9)): a number per position
            picked = np.where(factor != 0, np.broadcast_to(_constant_of(operand, by_name), out), 0.0)   # (no 0 * inf)
            if picked.any():
                terms.append(s.const(picked))
        elif isinstance(operand, torch.fx.Node) and _meta_shape(operand) == out:
            # select: a 0/1 factor, so a NaN / inf of the operand where it is 0 is dropped (0), as torch.where
            # drops it (ir's float evaluation; sin(t) / t where t == 0, SincNet's weights)
            terms.append(s("mul", [operand.name, s.const(factor)], select=True))
        else:
            return None
    if not any(n.op == "mul" for n in s.nodes):
        return None                          # no tensor operand: not a function of the input
    if len(terms) == 2:
        s("add", terms)
    return s.done()


def _gather_nodes(fn, ins, by_name) -> Optional[List[Node]]:
    """torch.gather(x, dim, index) with a constant index (index's other
    sizes may be smaller than x's: a slice first). Where it picks the same
    positions along dim in every row: index_select's one-wide slices
    joined, copies of the int8 bytes. Otherwise a batch matmul of each row
    of x (dim moved last) by its constant one-hot pick matrix."""
    if fn.target not in (torch.gather, "gather") or set(fn.kwargs) - {"sparse_grad"} \
            or fn.kwargs.get("sparse_grad") or len(fn.args) != 3 or not isinstance(fn.args[0], torch.fx.Node):
        return None
    shape, dim, idx = _meta_shape(fn.args[0]), fn.args[1], _constant_of(fn.args[2], by_name)
    if shape is None or not isinstance(dim, int) or idx is None or idx.ndim != len(shape) or idx.size == 0:
        return None
    s = _Steps(fn.name)
    return s.done() if gather_constant(s, ins[0], shape, dim, idx) is not None else None


def gather_constant(s: _Steps, src: str, shape, dim: int, idx) -> Optional[str]:
    """torch.gather(src, dim, idx) of src of shape `shape` by the constant
    idx as steps of s (_gather_nodes'), or None (an index out of range)."""
    dim %= len(shape)
    if any(idx.shape[d] > shape[d] for d in range(len(shape)) if d != dim) \
            or ((idx < 0) | (idx >= shape[dim])).any():                # torch takes no negative index
        return None
    cur = src
    for d in range(len(shape)):
        if d != dim and idx.shape[d] < shape[d]:
            cur = s("slice", [cur], dim=d, start=0, end=int(idx.shape[d]))
    line = np.moveaxis(idx, dim, -1).reshape(-1, idx.shape[dim])
    if not (line != line[:1]).any():
        parts = [s("slice", [cur], dim=dim, start=int(i), end=int(i) + 1) for i in line[0]]
    else:
        # each row's picks as a constant one-hot matrix: row r of x viewed as
        # [1, n] times onehot[r] [n, K], an int8 batch matmul whose only
        # rounding is its output's (the 0/1 operand is exact on its grid)
        n, k = shape[dim], int(idx.shape[dim])
        rank = len(shape)
        order = [d for d in range(rank) if d != dim] + [dim]
        rows = int(line.shape[0])
        if order != list(range(rank)):
            cur = s("permute", [cur], dims=order)
        onehot = np.zeros((rows, n, k), np.float32)
        onehot[np.arange(rows)[:, None], line, np.arange(k)[None, :]] = 1.0
        # pick: a one-hot product, evaluated as the pick itself (an -inf it does not pick is no NaN: ir)
        cur = s("matmul", [s("reshape", [cur], target_shape=[rows, 1, n]), s.const(onehot)], pick=True)
        moved = [int(idx.shape[d]) for d in order]
        cur = s("reshape", [cur], target_shape=moved)
        if order != list(range(rank)):
            cur = s("permute", [cur], dims=[order.index(d) for d in range(rank)])
        return cur
    return s("cat", parts, dim=dim) if len(parts) > 1 else parts[0]


def _einsum_parts(fn):
    """(input letter strings, output letters, operand nodes) of a
    torch.einsum call, or a string saying why ptec does not rewrite it."""
    if fn.target is not torch.einsum or fn.kwargs or not fn.args:
        return None
    if isinstance(fn.args[0], str):
        eq = fn.args[0].replace(" ", "")
        ops = list(fn.args[1]) if len(fn.args) == 2 and isinstance(fn.args[1], (tuple, list)) else list(fn.args[1:])
    else:
        # the sublist form einsum(x, [0, 1], y, [1, 2], [0, 2]): its equation
        def word(sub):
            return "".join("..." if i is Ellipsis else "abcdefghijklmnopqrstuvwxyz"[i] for i in sub)
        args = list(fn.args)
        if not all(isinstance(sub, (list, tuple)) and all(i is Ellipsis or (isinstance(i, int) and 0 <= i < 26)
                                                          for i in sub) for sub in args[1::2]):
            return "einsum: sublists of 0..25 and ..."
        ops = args[0::2][:len(args) // 2]
        eq = ",".join(word(sub) for sub in args[1::2][:len(ops)]) + ("->" + word(args[-1]) if len(args) % 2 else "")
    lhs, arrow, out = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ops) or not ops or not all(isinstance(o, torch.fx.Node) for o in ops):
        return f"einsum {eq!r}: ptec rewrites tensor operands, one per term"
    # "...": the dims it stands for as capital letters the equation does not
    # use, aligned from the right as torch aligns them
    spare = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in eq]
    ranks = [len(_meta_shape(o) or []) for o in ops]
    widest = max([r - len(t.replace("...", "")) for r, t in zip(ranks, terms) if "..." in t] or [0])
    ell = "".join(spare[:widest])
    terms = [t.replace("...", ell[len(ell) - (r - len(t.replace("...", ""))):] if r > len(t) - 3 else "")
             for r, t in zip(ranks, terms)]
    letters = "".join(terms)
    if not arrow and "..." in lhs:
        out = ell + "".join(sorted(c for c in set(letters) - set(ell) if letters.count(c) == 1))
    elif not arrow:
        out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    out = out.replace("...", ell)
    if not letters.isalpha() or not (out.isalpha() or out == ""):
        return f"einsum {eq!r}: ptec rewrites equations of letters and '...'"
    if len(set(out)) != len(out) or set(out) - set(letters):
        return f"einsum {eq!r}: an output letter repeated or in no operand"
    shapes = [_meta_shape(o) for o in ops]
    if any(sh is None or len(sh) != len(t) for sh, t in zip(shapes, terms)):
        return f"einsum {eq!r}: operand shapes unknown"
    size = {}
    for t, sh in zip(terms, shapes):
        for c, n in zip(t, sh):
            if size.setdefault(c, n) != n and 1 not in (size[c], n):
                return f"einsum {eq!r}: letter {c} has sizes {size[c]} and {n}"
            size[c] = max(size[c], n)           # a size 1 broadcasts, as in torch
    return terms, out, ops, shapes, size


def einsum_refusal(fn) -> Optional[str]:
    parts = _einsum_parts(fn)
    return parts if isinstance(parts, str) else None


def _einsum_diagonal(s: _Steps, src: str, shape, p: int, q: int) -> str:
    from .capture_views import _diagonal          # (capture_views imports this module)
    return _diagonal(s, src, list(shape), 0, p, q)


def _einsum_nodes(fn, ins) -> Optional[List[Node]]:
    """torch.einsum: a letter twice in one operand (a diagonal) a multiply
    by the identity and a sum, then letters in one operand alone and not in
    the output summed (a mean times the count); one operand is a permute,
    and operands are joined two at a time: sharing only the letters kept,
    an int8 mul, otherwise a batched matmul: operand A permuted to [batch,
    left, contracted] and viewed as [B, L, C], operand B to [batch,
    contracted, right] as [B, C, R], their product viewed as [batch, left,
    right] and permuted to the letters kept."""
    parts = _einsum_parts(fn)
    if parts is None or isinstance(parts, str):
        return None
    terms, out, ops, shapes, size = parts
    s = _Steps(fn.name)
    cur = [o.name for o in ops]
    for k, t in enumerate(terms):
        # a dim of size 1 where its letter has more: copies joined along it
        shape = [size[c] for c in t]
        cur[k] = s.widen(cur[k], shapes[k], shape)
        # a letter twice in one operand (dims p < q) takes a diagonal as
        # torch.diagonal(x, 0, p, q) does (capture_views: the entries picked,
        # exact), its letter moved last. (The operand times the identity, a
        # mean over q and times n put each entry / n on the input's grid:
        # 5 output steps off at n = 8, probe 8.)
        while len(set(t)) != len(t):
            c = next(c for c in t if t.count(c) > 1)
            p, q = t.index(c), t.index(c, t.index(c) + 1)
            cur[k] = _einsum_diagonal(s, cur[k], shape, p, q)
            t = "".join(l for d, l in enumerate(t) if d not in (p, q)) + c
            shape = [size[l] for l in t]
        terms[k] = t
    for k, t in enumerate(terms):
        others = "".join(terms[:k] + terms[k + 1:]) + out
        alone = [d for d, c in enumerate(t) if c not in others]
        if alone:
            count = int(np.prod([size[t[d]] for d in alone]))
            cur[k] = s("mul", [s("mean", [cur[k]], dim=alone, keepdim=False), s.const(count)])
            terms[k] = "".join(c for c in t if c in others)

    def arrange(src, have, want):
        """src with letters `have` permuted to `want`, viewed as `view`."""
        return src if have == want else s("permute", [src], dims=[have.index(c) for c in want])

    n = lambda cs: int(np.prod([size[c] for c in cs]))      # noqa: E731

    def pair(x, a, y, b, want):
        """operands x (letters a) and y (letters b) contracted to `want`."""
        batch = [c for c in want if c in a and c in b]
        left = [c for c in a if c not in b]
        right = [c for c in b if c not in a]
        contr = [c for c in a if c in b and c not in want]
        if not contr and not left and not right:
            return s("mul", [arrange(x, a, want), arrange(y, b, want)])
        va = s("reshape", [arrange(x, a, "".join(batch + left + contr))],
               target_shape=[n(batch), n(left), n(contr)])
        vb = s("reshape", [arrange(y, b, "".join(batch + contr + right))],
               target_shape=[n(batch), n(contr), n(right)])
        got = "".join(batch + left + right)
        prod = s("reshape", [s("matmul", [va, vb])], target_shape=[size[c] for c in got])
        return arrange(prod, got, want)

    # more than two operands: the first two joined into the letters still
    # needed (by a later operand or the output), in their order, and so on
    x, a = cur[0], terms[0]
    for k in range(1, len(terms)):
        later = "".join(terms[k + 1:]) + out
        want = out if k == len(terms) - 1 else "".join(dict.fromkeys(c for c in a + terms[k] if c in later))
        x, a = pair(x, a, cur[k], terms[k], want), want
    if len(terms) == 1:
        if set(a) != set(out):
            return None
        x = arrange(x, a, out)
    if x in cur:
        s("identity", [x])
    return s.done()


def rewrite_nodes(fn, ins, by_name):
    """(nodes, names of the constants now held in them) of a call this
    module rewrites, else None."""
    # (these modules build on _Steps: imported here, after this module)
    from .capture_bincount import bincount_nodes
    from .capture_elementwise_math import elementwise_math_nodes
    from .capture_isin import isin_nodes
    from .capture_random import random_nodes
    from .capture_views import view_nodes
    if fn.op not in ("call_function", "call_method") or not fn.args:
        return None
    for make in (_whole_reduction, _var_nodes, _logsumexp_nodes, _cumsum_nodes, _triangle_nodes, _einsum_nodes,
                 _pdist_nodes, _product_nodes):
        nodes = make(fn, ins)
        if nodes is not None:
            return nodes, []
    views = view_nodes(fn, ins, by_name)          # capture_views: views, copies, constructors
    if views is not None:
        return views
    for make in (_select_nodes, _gather_nodes, _computed_linear_nodes, elementwise_math_nodes, scatter_nodes,
                 index_use_nodes, value_length_nodes, ldexp_nodes, bag_of_values_nodes, random_nodes,
                 computed_table_embedding_nodes, bincount_nodes, isin_nodes):
        nodes = make(fn, ins, by_name)
        if nodes is not None:
            taken = [a.name for a in fn.args if _constant_of(a, by_name) is not None]
            return nodes, taken
    return None


def _pdist_nodes(fn, ins) -> Optional[List[Node]]:
    """F.pdist(x, p) of x [N, M]: for each pair i < j (torch's order) the
    p-norm of row i - row j: the rows picked by one-wide slices joined (the
    int8 bytes), an int8 sub, then |d|^p summed and the 1/p power as LUTs
    (p = 2: the square and the square root)."""
    if fn.target is not torch.pdist or set(fn.kwargs) - {"p"} or not isinstance(fn.args[0], torch.fx.Node):
        return None
    shape, p = _meta_shape(fn.args[0]), _scalar_arg(fn, 1, "p", 2.0)
    if shape is None or len(shape) != 2 or shape[0] < 2 or not _number(p) or p <= 0:
        return None
    pairs = [(i, j) for i in range(shape[0]) for j in range(i + 1, shape[0])]
    s = _Steps(fn.name)

    def rows(which):
        parts = [s("slice", [ins[0]], dim=0, start=r, end=r + 1) for r in which]
        return s("cat", parts, dim=0) if len(parts) > 1 else parts[0]
    d = s("sub", [rows([i for i, _ in pairs]), rows([j for _, j in pairs])])
    powers = s("elementwise", [d], fn="square") if p == 2 else \
        s("elementwise", [s("elementwise", [d], fn="abs")], fn="pow", exponent=float(p))
    total = s("mul", [s("mean", [powers], dim=[1], keepdim=False), s.const(shape[1])])
    if p == 2:
        s("elementwise", [total], fn="sqrt")
    else:
        s("elementwise", [total], fn="pow", exponent=1.0 / p)
    return s.done()


def _product_nodes(fn, ins) -> Optional[List[Node]]:
    """x.prod(dim) / torch.prod and x.cumprod(dim) / torch.cumprod: the
    one-wide slices along dim multiplied in order, one int8 mul each (the
    running products, joined along dim, are cumprod). Exact for any sign;
    each product is requantized to its calibrated range. A dim of more
    than MAX_PRODUCT_TERMS or a dtype: None."""
    t = fn.target
    cumulative = t in (torch.cumprod, "cumprod")
    if t not in (torch.prod, "prod") and not cumulative or not isinstance(fn.args[0], torch.fx.Node) \
            or set(fn.kwargs) - {"dim", "keepdim", "dtype"} or fn.kwargs.get("dtype") is not None:
        return None
    shape, dim, out = _meta_shape(fn.args[0]), _scalar_arg(fn, 1, "dim"), _meta_shape(fn)
    keepdim = _scalar_arg(fn, 2, "keepdim", False) if not cumulative else True
    if shape is None or not shape or out is None or not isinstance(dim, int) or isinstance(dim, bool) \
            or not isinstance(keepdim, bool):
        return None
    dim %= len(shape)
    if not 1 <= shape[dim] <= MAX_PRODUCT_TERMS:
        return None
    s = _Steps(fn.name)
    terms = [s("slice", [ins[0]], dim=dim, start=i, end=i + 1) for i in range(shape[dim])]
    running = [terms[0]]
    for term in terms[1:]:
        running.append(s("mul", [running[-1], term]))
    if cumulative and len(running) > 1:
        s("cat", running, dim=dim)
    elif cumulative:
        s("identity", running)
    else:
        s("reshape", [running[-1]], target_shape=out)
    return s.done()


# a product over a longer dim would be that many chained int8 muls
MAX_PRODUCT_TERMS = 64


def _computed_linear_nodes(fn, ins, by_name) -> Optional[List[Node]]:
    """F.linear(x, w, b) whose weight is computed from the input (no
    constant to quantize ahead of time): x @ w^T as an int8 batch matmul,
    x viewed as [1, rows, in] and w transposed as [1, in, out] (a 1-D w as
    [1, in, 1]), viewed back to torch's shape; a constant bias is added as
    a constant of that shape."""
    if fn.target is not torch.nn.functional.linear or set(fn.kwargs) - {"bias"} or len(fn.args) not in (2, 3):
        return None
    x, w = fn.args[0], fn.args[1]
    bias = _scalar_arg(fn, 2, "bias")
    if not isinstance(x, torch.fx.Node) or not isinstance(w, torch.fx.Node) or _constant_of(w, by_name) is not None:
        return None
    xs, ws, out = _meta_shape(x), _meta_shape(w), _meta_shape(fn)
    b = _constant_of(bias, by_name) if bias is not None else None
    if xs is None or ws is None or out is None or len(ws) not in (1, 2) or (bias is not None and b is None) \
            or not xs:
        return None
    rows = int(np.prod(xs[:-1]))
    s = _Steps(fn.name)
    lhs = s("reshape", [x.name], target_shape=[1, rows, xs[-1]])
    if len(ws) == 1:            # a 1-D weight: x @ w, one output per row
        rhs = s("reshape", [w.name], target_shape=[1, ws[0], 1])
    else:
        rhs = s("reshape", [s("permute", [w.name], dims=[1, 0])], target_shape=[1, ws[1], ws[0]])
    cur = s("reshape", [s("matmul", [lhs, rhs])], target_shape=out)
    if b is not None:
        s("add", [cur, s.const(np.broadcast_to(b.astype(np.float32), out).copy())])
    return s.done()


