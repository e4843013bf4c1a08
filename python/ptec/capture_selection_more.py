"""More layers after a selection x[mask] (issue 15), beyond
capture_selection_rows' and capture_selection_mix': calls whose plain
rewrite (capture_reductions, capture_rewrites, capture_linalg) would read
the variable-length selection are replayed over x's table X [L, rest...]
(capture_selection_rows.table) with static shapes, and a few more readers
are rewritten in the graph.

At capture (`selection_call_nodes`) a call of the list below whose tensor
operands all come from selections (directly or through element-wise ops)
gets its plain rewrite, each node marked with the call; once
capture_masked_select has moved the element-wise ops before the
selections and the call's operands are selections by one mask (`_replay`),
the same rewrite is made again over a filled or compact table, in one of
three ways:

- a reduction whose result ignores rows of an identity e (norm, nansum,
  count_nonzero, dot / inner / a 1-D matmul of two selections, the sum of
  a bool selection: e = 0, False for a bool; prod: e = 1) takes
  where(M, X, e): the same value as over the selection, an empty
  selection giving torch's value over nothing;
- argmax / argmin without dim take the selection made compact (its rows
  gathered to the front in order: capture_selection_mix._compact), the
  rows after it filled with x's smallest (largest) value, which never wins
  before a selected one (ties: the first, as torch), so a flat position
  there is one in the selection;
- a call whose result's first rows depend only on as many first rows of
  its input (diff, logcumsumexp along dim 0, or row by row) takes the
  compact table and its result's rows are picked where the sorted mask,
  shifted by the rows the call drops, is 1: a selection again.

logsumexp along dim 0 (`_logsumexp`, as softmax's denominator in
capture_selection_mix) and quantile of a 1-D selection (`_quantile`: the
sorted rows around q (n - 1) for the run's count n) are built here.

Each way is checked on the call itself before it is used (`_kind`): torch
on random rows against the same rows with identity, smallest-value or
junk rows appended must give the same answer, so an argument form it
does not hold for (a norm with p = -inf, diff with append) is not replayed.

In the graph (`more_rows`, from capture_masked_select.through_selections):
a slice of a selection with a step or bounds of both signs (s[1:-1],
s[::2], s[-5:3]): the rows at constant positions of the compact table
(from the front when the start is >= 0, from the end when < 0, a step 1) picked by
the sorted mask shifted by the other bound; a .float() of its int64
positions moves before their pick; argmax / argmin within each row of a
row selection run over X's rows, picked; a flatten merging its first dims
(b[m].flatten(0, 1)) picks sub-rows by the mask repeated; mode's values
of a 1-D selection are chosen exactly over x's int8 codes (`_mode`), and its
unique values kept where they differ from the one before (`_unique`). 0/1
values of a bool (`(x[m] > 1).all()`) take the fill 1 for min and 0 for max
(`bool_fill`): an empty selection's all() is True and any() False, as
torch."""
from __future__ import annotations

import operator
import types
from typing import List, Optional

import numpy as np
import torch

from .capture_masked_select import Steps, _numel
from .ir import Graph, Node, origin

# calls replayed over a filled table, by how (see _kind)
_ZERO = {"norm", "vector_norm", "linalg_norm", "linalg_vector_norm", "nansum", "count_nonzero", "dot", "vdot", "inner",
         "matmul"}
_ONE = {"prod"}
_FIRST = {"argmax", "argmin"}
_PREFIX = {"diff", "logcumsumexp"}
# calls built here over the table (`_logsumexp`, `_quantile`)
_OWN = {"logsumexp", "quantile"}


def _call_name(fn) -> Optional[str]:
    t = fn.target
    if isinstance(t, str):
        return t
    name = getattr(t, "__name__", None)
    return "matmul" if t is operator.matmul else name


def _same(a, b) -> bool:
    return isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape \
        and a.dtype == b.dtype and torch.allclose(a.double(), b.double(), rtol=1e-5, atol=1e-6, equal_nan=True)


def _kind(call, name: str, shape) -> Optional[str]:
    """How the call is replayed over a table of this shape [L, rest...], checked
    on torch: "zero" / "one" (identity rows appended change nothing),
    "first" (rows of the smallest / largest value appended change nothing),
    "prefix" (junk rows appended leave the result's first rows and add as
    many rows); None when the call's form holds none of these."""
    g = torch.Generator().manual_seed(5)
    rest = list(shape[1:])
    try:
        for k in ((4, 6) if name in _PREFIX else (0, 1, 4)):
            vs = [torch.randn([k] + rest, generator=g) if d != torch.bool else torch.rand([k] + rest, generator=g) > 0.5
                  for d in call.dtypes]
            if k == 0 and name in _FIRST:
                continue            # torch raises: the fill's position 0 is documented
            if name in _ZERO or name in _ONE or name == "sum":
                fill = 1.0 if name in _ONE else 0.0
                padded = [torch.cat([v, torch.full([3] + rest, fill, dtype=v.dtype)]) for v in vs]
                if not _same(_apply(call, vs), _apply(call, padded)):
                    return None
            elif name in _FIRST:
                far = [float(v.min() if name == "argmax" else v.max()) for v in vs]
                padded = [torch.cat([v, torch.full([3] + rest, f)]) for v, f in zip(vs, far)]
                if not _same(_apply(call, vs), _apply(call, padded)):
                    return None
            elif name in _PREFIX:
                padded = [torch.cat([v, torch.randn([3] + rest, generator=g) * 3]) for v in vs]
                want, got = _apply(call, vs), _apply(call, padded)
                if want.dim() == 0 or got.shape[1:] != want.shape[1:] or got.shape[0] != want.shape[0] + 3 \
                        or not _same(want, got[:want.shape[0]]):
                    return None
            else:
                return None
    except (RuntimeError, IndexError, TypeError, ValueError):
        return None
    return "zero" if name in _ZERO | {"sum"} else "one" if name in _ONE else "first" if name in _FIRST else "prefix"


class _Call:
    """A call as capture saw it (fx op, target, args and kwargs, its tensor
    operands marked by _TENSOR), kept on the nodes of its plain rewrite
    (attrs "replay": a selection may reach them only after
    capture_masked_select moves element-wise ops before it)."""

    def __init__(self, fn):
        self.op, self.target, self.name = fn.op, fn.target, fn.name
        self.args = tuple(_TENSOR if isinstance(a, torch.fx.Node) else a for a in fn.args)
        self.kwargs = {k: _TENSOR if isinstance(v, torch.fx.Node) else v for k, v in fn.kwargs.items()}
        tensors = [a for a in list(fn.args) + list(fn.kwargs.values()) if isinstance(a, torch.fx.Node)]
        self.operands = [a.name for a in tensors]
        self.dtypes = [a.meta["tensor_meta"].dtype for a in tensors]

    def __eq__(self, other):
        return self is other

    __hash__ = object.__hash__


_TENSOR = "<tensor operand>"


def _apply(call: _Call, tensors):
    """The call with its tensor operands replaced, in order, by tensors."""
    it = iter(tensors)
    args = [next(it) if a is _TENSOR else a for a in call.args]
    kwargs = {k: next(it) if v is _TENSOR else v for k, v in call.kwargs.items()}
    if call.op == "call_method":
        return getattr(args[0], call.target)(*args[1:], **kwargs)
    return call.target(*args, **kwargs)


def _rewritten(call: _Call, inputs: List[str], shapes, by_name) -> Optional[List[Node]]:
    """The call's own rewrite (capture_reductions, capture_rewrites,
    capture_linalg) with its tensor operands the nodes `inputs` of these
    shapes: an fx node of a scratch graph standing for the call."""
    from .capture_linalg import linalg_nodes
    from .capture_reductions import reduction_nodes
    from .capture_rewrites import rewrite_nodes
    scratch = torch.fx.Graph()
    stand_ins = []
    for name, shape, dtype in zip(inputs, shapes, call.dtypes):
        p = scratch.placeholder(name)
        p.meta["tensor_meta"] = types.SimpleNamespace(shape=torch.Size(shape), dtype=dtype)
        stand_ins.append(p)
    it = iter(stand_ins)
    args = tuple(next(it) if a is _TENSOR else a for a in call.args)
    kwargs = {k: next(it) if v is _TENSOR else v for k, v in call.kwargs.items()}
    op, target = call.op, call.target
    if _call_name(call) == "matmul" and len(shapes[0]) == 1 and len(inputs) == 2:
        op, target = "call_function", torch.dot      # a 1-D @ 1-D is capture's matmul node: dot's rewrite
    node = scratch.create_node(op, target, args, kwargs, name=call.name)
    if node.name != call.name or len(set(inputs)) != len(inputs):
        return None
    try:
        out = _apply(call, [torch.zeros(shape, dtype=d) for shape, d in zip(shapes, call.dtypes)])
    except (RuntimeError, IndexError, TypeError, ValueError):
        return None
    node.meta["tensor_meta"] = types.SimpleNamespace(shape=out.shape, dtype=out.dtype)
    got = reduction_nodes(node, inputs, by_name)
    if isinstance(got, list):
        return got
    if got is not None:
        return None                                     # a tuple's elements: not replayed
    got = rewrite_nodes(node, inputs, by_name)
    if got is not None:
        return got[0] if not got[1] else None
    got = linalg_nodes(node, inputs, by_name)
    if got is not None and got[-1].op != "unsupported":
        return got
    return None


def _from_selection(name: str, by_name) -> bool:
    """The value is computed from a selection (a selection itself, ops
    capture_masked_select moves before it, or a layer over it that becomes
    a selection again, as a slice); `_replay` checks that the operands are
    selections when the graph's rewrites are done."""
    seen, todo = set(), [name]
    while todo and len(seen) < 4096:
        node = by_name.get(todo.pop())
        if node is None or node.name in seen:
            continue
        if node.op == "masked_select":
            return True
        seen.add(node.name)
        todo.extend(node.inputs)
    return False


def selection_call_nodes(fn, ins, by_name) -> Optional[List[Node]]:
    """A call of this module's list with an operand from a selection: its
    plain rewrite, each node marked with the call (attrs "replay") for
    `_replay`; None for any other call (capture's usual path)."""
    if fn.op not in ("call_function", "call_method"):
        return None
    operands = [a for a in list(fn.args) + list(fn.kwargs.values()) if isinstance(a, torch.fx.Node)]
    if not operands or not all(_from_selection(a.name, by_name) for a in operands) \
            or any(a.meta.get("tensor_meta") is None for a in operands):
        return None
    bools = all(a.meta["tensor_meta"].dtype == torch.bool for a in operands)
    if _call_name(fn) not in _ZERO | _ONE | _FIRST | _PREFIX | _OWN and not (_call_name(fn) == "sum" and bools):
        return None
    call = _Call(fn)
    nodes = _rewritten(call, [a.name for a in operands], [list(a.meta["tensor_meta"].shape) for a in operands],
                       by_name)
    if nodes is None:
        return None
    for n in nodes:
        n.attrs["replay"] = call
    return nodes


def _replay(g: Graph, user: Node, sel: Node) -> bool:
    """A marked call whose operands are now selections by one mask, made
    again by its rewrite over the filled or compact table (the module
    docstring); its old steps go."""
    from .capture_masked_select import _same_mask
    from .capture_selection_mix import _compact
    from .capture_selection_rows import _filled, _pick, _replace, far_end, flat, over_rows, table
    call = user.attrs.get("replay")
    if call is None or table(g, sel) is None:
        return False
    steps = [n for n in g.nodes if n.attrs.get("replay") is call]
    parts = [g.node(o) for o in call.operands]
    if any(p.op != "masked_select" or table(g, p) is None or p.attrs.get("rows") != sel.attrs.get("rows")
           or not _same_mask(g, p.inputs[1], sel.inputs[1]) or table(g, p)[1] != table(g, sel)[1] for p in parts):
        return False
    name = _call_name(call)
    X0, shape, M0, L = table(g, sel)
    if name in _OWN:
        return (_logsumexp if name == "logsumexp" else _quantile)(g, call, steps, sel)
    kind = _kind(call, name, shape)
    if kind not in (None, "zero") and torch.bool in call.dtypes:
        return False
    if kind is None:
        return False
    end = steps[-1].name
    s = Steps(end)
    tables = []
    for p in parts:
        X, _, M, _ = flat(s, g, p)
        if g.node(p.inputs[0]).op in ("compare", "logical"):       # a bool: False where not selected
            tables.append(s("logical", [over_rows(s, M, L, len(shape)), X], shape, kind="and"))
        elif kind in ("zero", "one"):
            tables.append(_filled(s, X, shape, M, L, s.const(0.0 if kind == "zero" else 1.0)))
        elif kind == "first":
            C, ones = _compact(s, X, shape, M, L)
            V = s("compare", [ones], [L], kind="gt", scalar=0.5)
            tables.append(_filled(s, C, shape, V, L, far_end(s, X, shape, highest=name == "argmin")))
        else:
            C, ones = _compact(s, X, shape, M, L)
            tables.append(C)
    body = _rewritten(call, tables, [shape] * len(tables), {n.name: n for n in g.nodes + s.nodes})
    if body is None:
        return False
    source = origin(g.node(end))
    if kind != "prefix":
        body[-1].name = end
        body[-1].attrs["source"] = source
        _replace(g, [n.name for n in steps], s.nodes + body)
        return True
    # the result's rows [L - c, ...]: row i is the selection's where the sorted mask is 1 at i + c
    out = list(_apply(call, [torch.zeros(shape) for _ in tables]).shape)
    c = L - out[0]
    if c >= L:
        return False
    whole = f"{end}__whole"
    for n in body:
        n.inputs = [whole if i == body[-1].name else i for i in n.inputs]
    body[-1].name, body[-1].shape = whole, out
    kept = s("compare", [s("slice", [ones], [out[0]], dim=0, start=c, end=L)], [out[0]], kind="gt", scalar=0.5)
    pick = Steps(end)
    _pick(pick, end, whole, out, kept, source)
    _replace(g, [n.name for n in steps], s.nodes + body + pick.nodes)
    return True


def _logsumexp(g: Graph, call: "_Call", steps: List[Node], sel: Node) -> bool:
    """logsumexp along dim 0: m the max of where(M, X, x's smallest), then
    m + log(sum(where(M, exp(X - m), 0))), the sum at least 1 (the max's
    own exp(0)) so an empty selection gives x's smallest value (torch:
    -inf, which int8 does not hold)."""
    from .capture_calls import _reduce_max_nodes
    from .capture_selection_mix import _widen
    from .capture_selection_rows import _filled, _replace, far_end, flat
    a = dict(zip(("input", "dim", "keepdim"), call.args))
    a.update(call.kwargs)
    dim, keepdim = a.get("dim"), a.get("keepdim", False)
    rank = len(sel.shape)
    dims = [dim] if isinstance(dim, int) and not isinstance(dim, bool) else dim
    if len(call.operands) != 1 or not isinstance(dims, (list, tuple)) or len(dims) != 1 \
            or not isinstance(dims[0], int) or not -rank <= dims[0] < rank or dims[0] % rank != 0 \
            or not isinstance(keepdim, bool):
        return False
    end = steps[-1]
    s = Steps(end.name)
    X, shape, M, L = flat(s, g, sel)
    kept = [1] + list(shape[1:])
    s.nodes.extend(_reduce_max_nodes(f"{s.prefix}__max", _filled(s, X, shape, M, L, far_end(s, X, shape, False)),
                                     shape, [0], True, False))
    top = s.nodes[-1].name
    e0 = _filled(s, s("elementwise", [s("sub", [X, _widen(s, top, 0, L)], shape)], shape, fn="exp"), shape, M, L,
                 s.const(0.0))
    R = _numel(shape[1:])
    lines = s("reshape", [e0], [1, L], target_shape=[1, L]) if R == 1 else \
        s("permute", [s("reshape", [e0], [L, R], target_shape=[L, R])], [R, L], dims=[1, 0])
    total = s("mul", [s("reshape", [s("mean", [lines], [R, 1], dim=[1], keepdim=True)], kept, target_shape=kept),
                      s.const(float(L))], kept)
    total = s("clamp", [total], kept, lo=1.0, hi=None)
    out = kept if keepdim else list(shape[1:])
    s("reshape", [s("add", [s("elementwise", [total], kept, fn="log"), top], kept)], out, target_shape=out)
    s.nodes[-1].name = end.name
    s.nodes[-1].attrs["source"] = origin(end)
    _replace(g, [n.name for n in steps], s.nodes)
    return True


def _square(s: Steps, src: str, L: int, across: bool) -> str:
    """src [L] copied into [L, L]: [i, j] = src_j (across) or src_i."""
    view = [1, L] if across else [L, 1]
    return s("cat", [s("reshape", [src], view, target_shape=view)] * L, [L, L], dim=0 if across else 1)


def _most_frequent(s: Steps, X: str, M: str, L: int) -> str:
    """best [L] bool: row i selected and its value's count (over the
    selected rows, equal int8 codes) the largest. E[i, j] = X_i == X_j
    where both rows are selected; each row of E sorted descending is 1 on
    its first c_i places (c_i the count of X_i); a column k of those holds
    a 1 somewhere iff the largest count exceeds k, so row i has the
    largest count iff its sorted row is 1 wherever some row's is."""
    from .capture_calls import _reduce_max_nodes
    Mf = s("bool_to", [M], [L], dtype="float32")           # (a join of bools is no bool value: of 0/1s)
    both = s("logical", [s("compare", [_square(s, Mf, L, across)], [L, L], kind="gt", scalar=0.5)
                         for across in (False, True)], [L, L], kind="and")
    equal = s("logical", [s("compare", [_square(s, X, L, False), _square(s, X, L, True)], [L, L], kind="eq"), both],
              [L, L], kind="and")
    ordered = s("sort", [s("bool_to", [equal], [L, L], dtype="float32")], [L, L], dim=1, descending=True, k=None,
                pick=None, keepdim=False, rule=None)
    s.nodes.extend(_reduce_max_nodes(f"{s.prefix}__colmax{len(s.nodes)}", ordered, [L, L], [0], True, False))
    reached = s("compare", [s("cat", [s.nodes[-1].name] * L, [L, L], dim=0)], [L, L], kind="gt", scalar=0.5)
    short = s("logical", [reached, s("compare", [ordered], [L, L], kind="lt", scalar=0.5)], [L, L], kind="and")
    return s("logical", [s("logical", [_any_along_1(s, short, L)], [L], kind="not"), M], [L], kind="and")


def _any_along_1(s: Steps, b: str, L: int) -> str:
    """[L] bool: row i of the [L, L] bool b holds a True (the max of its 0/1)."""
    from .capture_calls import _reduce_max_nodes
    s.nodes.extend(_reduce_max_nodes(f"{s.prefix}__any{len(s.nodes)}", s("bool_to", [b], [L, L], dtype="float32"),
                                     [L, L], [1], False, False))
    return s("compare", [s.nodes[-1].name], [L], kind="gt", scalar=0.5)


def _quantile(g: Graph, call: "_Call", steps: List[Node], sel: Node) -> bool:
    """torch.quantile(s, q) of a 1-D selection (dim None, 0 or -1) or
    along dim 0 of a row selection (each column), q a number: S =
    where(M, X, x's largest) sorted ascending holds the selection sorted
    first; for each count n the two positions around q * (n - 1) and the
    weight are constants (capture_reductions' rule per interpolation), and
    the count n is the one whose sorted mask is 1 at n - 1 and 0 at n
    (exact, as the median's row): the rows lo and hi are picked from S by a
    max (exact), the weight by one linear of the one-hot count (on its
    grid), lo (1 - w) + hi w (of a row selection lo + (hi - lo) w: a
    product never negative, whatever a column's signs). An empty selection is
    NaN as torch (0 / 0 in fp32)."""
    from .capture_calls import _reduce_max_nodes
    from .capture_reductions import INTERPOLATIONS
    from .capture_selection_mix import _ordered
    from .capture_selection_rows import _filled, _replace, far_end, flat
    a = dict(zip(("input", "q", "dim", "keepdim"), call.args))
    a.update(call.kwargs)
    q, dim, keepdim, rule = a.get("q"), a.get("dim"), a.get("keepdim", False), a.get("interpolation", "linear")
    rank = len(sel.shape)
    # a row selection along dim 0: each column's quantile, the same sorted rows picked for all
    if len(call.operands) != 1 or not isinstance(q, (int, float)) or isinstance(q, bool) \
            or not 0 <= q <= 1 or dim not in ((None, 0, -1) if rank == 1 else (0, -rank)) \
            or not isinstance(keepdim, bool) \
            or rule not in INTERPOLATIONS or set(a) - {"input", "q", "dim", "keepdim", "interpolation"}:
        return False
    end = steps[-1]
    s = Steps(end.name)
    X, shape, M, L = flat(s, g, sel)
    W = _numel(shape[1:])
    ordered = _ordered(s, "sort", _filled(s, X, shape, M, L, far_end(s, X, shape, highest=True)), shape, False)
    if W > 1 or len(shape) > 1:
        ordered = s("reshape", [ordered], [L, W], target_shape=[L, W])
    ones_first = _ordered(s, "sort", s("bool_to", [M], [L], dtype="float32"), [L], True)
    steps_down = np.eye(L, dtype=np.float32) - np.eye(L, k=1, dtype=np.float32)      # row n - 1: 1 at n - 1, -1 at n
    count_is = s("compare", [s("linear", [ones_first], [L], weight=steps_down, bias=None)], [L], kind="gt", scalar=0.5)
    at_lo, at_hi = np.zeros((L, L), np.float32), np.zeros((L, L), np.float32)
    weight = np.zeros((L, 1), np.float32)
    for n in range(1, L + 1):
        pos = float(np.float32(q) * np.float32(n - 1))          # torch's position, in float32
        lo, hi = int(np.floor(pos)), int(np.ceil(pos))
        if rule == "nearest":
            lo = hi = int(np.round(pos))                        # half to even, as torch
        elif rule == "lower":
            hi = lo
        elif rule == "higher":
            lo = hi
        at_lo[n - 1, lo] = at_hi[n - 1, hi] = 1.0
        weight[n - 1, 0] = 0.0 if hi == lo else 0.5 if rule == "midpoint" else pos - lo
    counts = s("bool_to", [count_is], [L], dtype="float32")

    def chosen(table, width):
        """the row of the constant table [L, width] at the count (zeros when none): one linear of the
        one-hot 0/1 count, as the median's row."""
        return s("linear", [counts], [width], weight=np.ascontiguousarray(table.T), bias=None)

    def value_at(table):
        at = s("compare", [chosen(table, L)], [L], kind="gt", scalar=0.5)
        low = far_end(s, X, shape, highest=False)
        if len(shape) > 1:      # [L, W]: the row at the count, per column
            s.nodes.extend(_reduce_max_nodes(f"{s.prefix}__pick{len(s.nodes)}",
                                             _filled(s, ordered, [L, W], at, L, low), [L, W], [0], False, False))
            return s.nodes[-1].name
        s.nodes.extend(_reduce_max_nodes(f"{s.prefix}__pick{len(s.nodes)}",
                                         s("reshape", [_filled(s, ordered, shape, at, L, low)],
                                           [1, L], target_shape=[1, L]), [1, L], [1], False, False))
        return s.nodes[-1].name
    value = value_at(at_lo)
    width = [W] if len(shape) > 1 else [1]
    if weight.any():            # (nearest, lower, higher: the one row; a weight per column: int8 muls)
        w = chosen(np.repeat(weight, width[0], axis=1), width[0])
        if len(shape) > 1:      # lo + (hi - lo) w: a product in [0, hi - lo], of any column's signs
            value = s("add", [value, s("mul", [s("sub", [value_at(at_hi), value], width), w], width)], width)
        else:
            value = s("add", [s("mul", [value, s("sub", [s.const(np.ones(1, np.float32)), w], [1])], [1]),
                              s("mul", [value_at(at_hi), w], [1])], [1])
    some = s("slice", [ones_first], [1], dim=0, start=0, end=1)
    value = s("div", [s("where", [s("compare", [some], [1], kind="gt", scalar=0.5), value, s.const(0.0)], width),
                      s("reshape", [some], [], target_shape=[])], width)
    out = ([1] if keepdim else []) + list(shape[1:])
    s("reshape", [value], out, target_shape=out)
    s.nodes[-1].name = end.name
    s.nodes[-1].attrs["source"] = origin(end)
    _replace(g, [n.name for n in steps], s.nodes)
    return True


def _mode(g: Graph, user: Node, sel: Node) -> bool:
    """torch.mode's values of a 1-D selection (capture_sort's sort node,
    rule "mode"), chosen exactly over int8 codes: the smallest of the most
    frequent values (torch's tie rule), x's largest value for an empty
    selection (torch raises). Its indices, and mode along a row
    selection, are capture_selection_positional's."""
    from .capture_calls import _reduce_max_nodes
    from .capture_selection_rows import _replace, far_end, flat, table
    a = user.attrs
    if user.op != "sort" or a.get("rule") != "mode" or user.inputs != [sel.name] or len(sel.shape) != 1 \
            or table(g, sel) is None or a.get("dim") not in (0, -1):
        return False
    s = Steps(user.name)
    X, shape, M, L = flat(s, g, sel)
    out = [1] if a.get("keepdim") else []
    best = _most_frequent(s, X, M, L)
    kept = s("where", [best, X, far_end(s, X, [L], highest=True)], [L])
    s.nodes.extend(_reduce_max_nodes(f"{s.prefix}__min", s("reshape", [kept], [1, L], target_shape=[1, L]),
                                     [1, L], [1], False, True))
    s("reshape", [s.nodes[-1].name], out, target_shape=out)
    s.nodes[-1].name = user.name
    s.nodes[-1].attrs["source"] = origin(user)
    _replace(g, [user.name], s.nodes)
    return True


def _unique(g: Graph, user: Node, sel: Node) -> bool:
    """torch.unique of a 1-D selection (capture_nonzero's chain: its view,
    sort, each value against its predecessor, the selection of the firsts):
    T = where(M, X, x's largest) sorted, kept where T differs from its
    predecessor (or is the first) and the sorted mask (1s first) is 1:
    a selection of T again, equal int8 codes one value."""
    from .capture_selection_mix import _ordered
    from .capture_selection_rows import _filled, _pick, _replace, far_end, flat, table
    if user.op != "reshape" or user.inputs != [sel.name] or not user.name.endswith("__unique0") \
            or len(sel.shape) != 1 or table(g, sel) is None:
        return False
    base = user.name[:-len("__unique0")]
    names = [f"{base}__unique{k}" for k in range(8)] + [base]
    found = {n.name: n for n in g.nodes if n.name in names}
    chain = ["reshape", "sort", "slice", "slice", "cat", "compare", "constant", "logical", "masked_select"]
    if len(found) != len(names) or [found[n].op for n in names] != chain:
        return False
    s = Steps(base)
    X, shape, M, L = flat(s, g, sel)
    T = _ordered(s, "sort", _filled(s, X, shape, M, L, far_end(s, X, shape, highest=True)), shape, False)
    ones_first = _ordered(s, "sort", s("bool_to", [M], [L], dtype="float32"), [L], True)
    if L == 1:
        new = s("compare", [ones_first], [L], kind="gt", scalar=0.5)
    else:
        before = s("cat", [s("slice", [T], [1], dim=0, start=0, end=1), s("slice", [T], [L - 1], dim=0, start=0,
                                                                              end=L - 1)], [L], dim=0)
        first = np.zeros(L, np.bool_)
        first[0] = True
        starts = s("logical", [s("compare", [T, before], [L], kind="ne"), s("constant", [], [L], value=first)], [L],
                   kind="or")
        new = s("logical", [starts, s("compare", [ones_first], [L], kind="gt", scalar=0.5)], [L], kind="and")
    _pick(s, base, T, [L], new, origin(found[base]))
    _replace(g, names, s.nodes)
    return True


def bool_fill(s: Steps, g: Graph, sel: Node, X: str, shape, highest: bool) -> str:
    """The fill of a max (highest False) or min of a selection: x's far end,
    or for 0/1 values of a bool (`.any()` / `.all()`) 0 or 1, so an empty
    selection gives torch's False / True."""
    from .capture_selection_rows import far_end
    if g.node(sel.inputs[0]).op == "bool_to":
        return s.const(1.0 if highest else 0.0)
    return far_end(s, X, shape, highest=highest)


def _float_positions(g: Graph, user: Node, sel: Node) -> bool:
    """x[m].argsort().float(): the int64 -> float32 cast (element-wise)
    before the pick."""
    from .capture_masked_select import _move_elementwise
    return user.op == "index_to_float" and user.inputs == [sel.name] and _move_elementwise(g, user, sel)


def _positions_in_rows(g: Graph, user: Node, sel: Node) -> bool:
    """argmax / argmin over a dim other than 0 of a row selection
    (`b[m].argmax(1)`): each row's own positions, over every row of X,
    the int64 rows picked (masked_select copies int64 as int8)."""
    from .capture_selection_rows import _pick, _replace, flat, table
    rank, a = len(sel.shape), user.attrs
    if user.op != "argmax" or user.inputs != [sel.name] or rank < 2 or not isinstance(a.get("dim"), int) \
            or a["dim"] % rank == 0 or table(g, sel) is None:
        return False
    s = Steps(user.name)
    X, shape, M, L = flat(s, g, sel)
    out = [L] + list(user.shape[1:])
    _pick(s, user.name, s("argmax", [X], out, **{k: v for k, v in a.items() if k != "source"}), out, M, origin(user))
    _replace(g, [user.name], s.nodes)
    return True


def _merge_first(g: Graph, user: Node, sel: Node) -> bool:
    """A flatten of dims 0..e of a row selection (e below the last dim:
    `b[m].flatten(0, 1)`): X viewed [L * j, ...] with j the merged dims'
    size, the mask repeated j times per row."""
    from .capture_selection_rows import _pick, _replace, flat, table
    a, rank = user.attrs, len(sel.shape)
    if user.op != "reshape" or user.inputs != [sel.name] or "flatten" not in a or table(g, sel) is None:
        return False
    start, end = (d % rank for d in a["flatten"])
    if start != 0 or not 0 < end < rank - 1:
        return False
    s = Steps(user.name)
    X, shape, M, L = flat(s, g, sel)
    j = _numel(shape[1:end + 1])
    out = [L * j] + list(shape[end + 1:])
    whole = s("reshape", [X], out, target_shape=out)
    # j copies of the 0/1 column joined (int8's mul broadcasts over channels only)
    column = s("reshape", [s("bool_to", [M], [L], dtype="float32")], [L, 1], target_shape=[L, 1])
    wide = s("cat", [column] * j, [L, j], dim=1)
    mask = s("reshape", [s("compare", [wide], [L, j], kind="gt", scalar=0.5)], [L * j], target_shape=[L * j])
    _pick(s, user.name, whole, out, mask, origin(user))
    _replace(g, [user.name], s.nodes)
    return True


def _stepped_slice(g: Graph, user: Node, sel: Node):
    """(nodes replaced, spelled (a, b, k), node named for the result) of a
    slice along dim 0 of sel as written: one slice node or view (spelled),
    or capture's one-wide slices every k joined (the join spelled)."""
    spelled = user.attrs.get("spelled")
    if user.inputs != [sel.name]:
        return None
    if isinstance(spelled, tuple) and (user.op == "slice" and user.attrs.get("dim") == 0 or user.op == "reshape"):
        return [user.name], spelled, user
    if user.op != "slice" or user.attrs.get("dim") != 0:
        return None
    users = g.users(user.name)
    if len(users) != 1 or users[0].op != "cat" or not isinstance(users[0].attrs.get("spelled"), tuple):
        return None
    join = users[0]
    parts = [g.node(p) for p in join.inputs]
    if any(p.op != "slice" or p.inputs != [sel.name] or p.attrs.get("dim") != 0 for p in parts):
        return None
    return [p.name for p in parts] + [join.name], join.attrs["spelled"], join


def _slice_by_bounds(g: Graph, user: Node, sel: Node) -> bool:
    """s[a:b:k] with a step or bounds of both signs (the module docstring).
    From the front (a >= 0 or None): row p of the compact table C is the
    selection's row p, kept where p is a, a + k, ... (constant), p < b for
    b >= 0, and the sorted mask (1s first) is 1 at p - b for b < 0 (p < n
    + b) or at p. From the end (a < 0, step 1: a step's phase would move
    with the count): C's selected rows last, row p the selection's p - (L -
    n), kept from L + a on, where the sorted mask (1s last) is 1 at p and,
    for b >= 0, 0 at p - b."""
    from .capture_selection_mix import _compact
    from .capture_selection_rows import _pick, _replace, flat, table
    found = _stepped_slice(g, user, sel)
    if found is None or table(g, sel) is None:
        return False
    names, (a, b, k), named = found
    k = 1 if k is None else k
    bounds = [v for v in (a, b) if v is not None]
    if not isinstance(k, int) or k < 1 or (k == 1 and len({v < 0 for v in bounds}) < 2):
        return False                # one sign, no step: capture_selection_mix._by_position's
    L = table(g, sel)[3]
    front = a is None or a >= 0
    if not front and k > 1:
        return False
    if front:
        first = 0 if a is None else a
        last = L if b is None or b < 0 else min(b, L)
    else:
        first = max(L + a, 0)
        last = L if b is None or b >= 0 else max(L + b, 0)
    positions = list(range(first, last, k))
    if not positions:
        return False
    s = Steps(named.name)
    X, shape, M, _ = flat(s, g, sel)
    C, ones = _compact(s, X, shape, M, L, front=front)
    # the test row per kept position (a constant shift), and whether the sorted mask must be 1 or 0 there
    tests = []
    if front:
        shift = -b if b is not None and b < 0 else 0
        tests.append((shift, True))
    else:
        tests.append((0, True))
        if b is not None and b >= 0:
            tests.append((-b, False))
    kept = None
    for shift, want in tests:
        at = [p + shift for p in positions]
        # past the table the sorted mask would be 0: past its end (front) no row is left, before its
        # start (end) the bound is not reached
        cols = [s("slice", [ones], [1], dim=0, start=q, end=q + 1) if 0 <= q < L
                else s.const(np.zeros(1, np.float32)) for q in at]
        vals = cols[0] if len(cols) == 1 else s("cat", cols, [len(cols)], dim=0)
        test = s("compare", [vals], [len(cols)], kind="gt" if want else "lt", scalar=0.5)
        kept = test if kept is None else s("logical", [kept, test], [len(cols)], kind="and")
    rows = [s("slice", [C], [1] + list(shape[1:]), dim=0, start=p, end=p + 1) for p in positions]
    out = [len(positions)] + list(shape[1:])
    taken = rows[0] if len(rows) == 1 else s("cat", rows, out, dim=0)
    _pick(s, named.name, taken, out, kept, origin(named))
    _replace(g, names, s.nodes)
    return True


def more_rows(g: Graph, user: Node, sel: Node) -> bool:
    """One of this module's graph rewrites of user, a reader of the
    selection sel; False when none applies."""
    return any(rewrite(g, user, sel) for rewrite in (_replay, _float_positions, _positions_in_rows, _merge_first,
                                                      _slice_by_bounds, _mode, _unique))
