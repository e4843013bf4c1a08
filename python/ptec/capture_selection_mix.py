"""Layers that mix a selection's elements along its first dim (issue 15),
beyond the sorts, joins and sums of capture_selection_rows: running scans,
softmax, spreads, the positions of extremes and orders, the median, a
flip and elements by position of a selection x[mask], computed over x's
table X [L, rest...] and mask M [L] (capture_selection_rows.table) with
static shapes, the rows picked after, so no kernel reads the
variable-length value.

- cumsum / cumprod / cummax / cummin along dim 0 scan where(M, X, e) with
  e the scan's identity (0 for a sum, 1 for a product; x's smallest value
  for a running max, its largest for a running min): at a selected row
  the scan has seen the selected rows before it and identities, so
  picking the rows gives the selection's scan, exactly (`_scan`,
  `_cumprod`).
- softmax / log_softmax along dim 0: m the max of where(M, X, x's
  smallest), e = exp(X - m), e0 = where(M, e, 0), softmax e0 / sum(e0) and
  log_softmax X - m - log(sum(e0)), picked (`_softmax`).
- var / std over the whole selection or its dim 0 (any correction): the
  two-pass form over where(M, ...), the count from the mask's mean; where
  the count is at most the correction the quotient is 0 / 0, NaN as torch
  (`_spread`).
- a position in the selection (argmax / argmin along dim 0, the indices of
  sort / argsort / topk / kthvalue and of cummax / cummin): the selection
  made compact first, its rows moved to the front in order by a gather at
  the positions of the mask's 1s (the mask's 0/1 sorted descending by the
  stable sort: exact, no count arithmetic), so a position in the compact
  table is one in the selection; its first count rows are those whose
  sorted mask is 1 (`_compacted`, `_positions`).
- median (torch's lower median, the sorted selection's row (n - 1) // 2)
  along dim 0 or of a whole 1-D selection: where(M, X, x's largest) sorted
  ascending, then the row i with sorted mask 1 at 2i and 0 at 2i + 2
  (one linear of the sorted 0/1 mask, exact), taken by a max; its index
  the compact selection's ascending order at that row (`_median`).
- flip along dim 0: the table and the mask flipped, then picked (`_flip`).
- an element or a slice by position, s[i] and s[a:b] as written (capture
  keeps the spelling: its trace writes s[-1] as s[count - 1] of the
  example's count), bounds of one sign: the selection made compact at the
  front (>= 0) or at the end (< 0), then the row, or the slice picked by
  the sorted mask's slice (`_by_position`).

Where torch raises on an empty selection (argmax, a median over dim 0)
or a short one (topk's k above its length), the answer is the fill's:
position 0 for argmax / argmin, positions past the count for topk and
kthvalue, x's smallest value for a median over dim 0 or an element past
the selection; the median of an empty 1-D selection is NaN, as torch
(docs/aot.md). Slices with a step or bounds of both signs, mode, diff
and more are capture_selection_more's; what stays refused (the rank of
squeeze() depends on the count) capture_masked_select.refuse_consumers
names."""
from __future__ import annotations

from typing import List, Optional, Tuple

import numpy as np

from .capture_masked_select import Steps
from .capture_selection_rows import _filled, _pick, _replace, far_end, flat, over_rows, table
from .ir import Graph, Node, origin


def _widen(s: Steps, src: str, dim: int, times: int) -> str:
    """src copied `times` times along dim (int8 add, sub, mul and div take
    operands of one shape): a join of copies, exact."""
    return src if times == 1 else s("cat", [src] * times, dim=dim)


def _ordered(s: Steps, op: str, src: str, shape, descending: bool, **attrs) -> str:
    """A stable sort's values (op sort) or positions (sort_indices) along dim 0."""
    args = dict(dim=0, descending=descending, k=None, pick=None, keepdim=False, rule=None)
    args.update(attrs)
    return s(op, [src], shape, **args)


def _as_float(s: Steps, M: str, L: int) -> str:
    return s("bool_to", [M], [L], dtype="float32")


def _compact(s: Steps, X: str, shape, M: str, L: int, front: bool = True) -> Tuple[str, str]:
    """(C, ones): X's selected rows moved to the front in their order (a
    gather at the positions of the mask's 1s, the stable sort of the mask's
    0/1 descending along dim 0, for each of X's columns), then the others;
    ones [L] that 0/1 sorted, 1 on C's first count rows. front False: the
    selected rows moved to the end (sorted ascending), so s[-1] is C's last."""
    Mf = _as_float(s, M, L)
    mask = Mf
    if len(shape) > 1:          # the mask over every column, so each column's positions are the rows'
        mask = s("where", [over_rows(s, M, L, len(shape)), s.const(np.ones(shape[1:], np.float32)),
                           s.const(0.0)], shape)
    C = s("gather", [X, _ordered(s, "sort_indices", mask, shape, front)], shape, dim=0)
    return C, _ordered(s, "sort", Mf, [L], front)


def _compacted(s: Steps, X: str, shape, M: str, L: int) -> Tuple[str, str]:
    """(C, V): _compact's C and V [L] bool, set on C's first count rows."""
    C, ones = _compact(s, X, shape, M, L)
    return C, s("compare", [ones], [L], kind="gt", scalar=0.5)


def _along_first(user: Node, sel: Node) -> bool:
    dim = user.attrs.get("dim")
    return user.inputs == [sel.name] and isinstance(dim, int) and dim % len(sel.shape) == 0


def _scan(g: Graph, user: Node, sel: Node) -> bool:
    """cummax / cummin (values: sort nodes with that rule) and cumsum (a
    linear by the lower triangle of ones, between permutes moving dim 0
    last for a row selection) along dim 0."""
    rank = len(sel.shape)
    if user.op == "sort" and user.attrs.get("rule") in ("cummax", "cummin") and _along_first(user, sel):
        s = Steps(user.name)
        X, shape, M, L = flat(s, g, sel)
        filled = _filled(s, X, shape, M, L, far_end(s, X, shape, highest=user.attrs["rule"] == "cummin"))
        whole = s("sort", [filled], shape, **{k: v for k, v in user.attrs.items() if k != "source"})
        _pick(s, user.name, whole, shape, M, origin(user))
        _replace(g, [user.name], s.nodes)
        return True
    chain = _cumsum_chain(g, user, sel, rank)
    if chain is None:
        return False
    s = Steps(chain[-1].name)
    X, shape, M, L = flat(s, g, sel)
    cur = _filled(s, X, shape, M, L, s.const(0.0))
    perm = chain[0].attrs["dims"] if rank > 1 else None
    if perm is not None:
        cur = s("permute", [cur], [shape[p] for p in perm], dims=list(perm))
    rows_last = [shape[p] for p in perm] if perm is not None else shape
    cur = s("linear", [cur], rows_last, weight=np.tril(np.ones((L, L), np.float32)), bias=None)
    if perm is not None:
        cur = s("permute", [cur], shape, dims=list(perm))
    _pick(s, chain[-1].name, cur, shape, M, origin(chain[-1]))
    _replace(g, [n.name for n in chain], s.nodes)
    return True


def _cumprod_chain(g: Graph, user: Node, sel: Node) -> Optional[List[Node]]:
    """capture_rewrites._product_nodes' cumprod of a selection along dim 0
    (its one-wide slices, the running products, their join): the steps,
    the join last; None else."""
    if user.op != "slice" or user.inputs != [sel.name] or user.attrs.get("dim") != 0 \
            or user.attrs.get("start") != 0 or not user.name.endswith("__0"):
        return None
    base = user.name[:-3]
    try:
        join = g.node(base)
    except KeyError:
        return None
    n = len(join.inputs)
    steps = [g.node(f"{base}__{i}") if any(m.name == f"{base}__{i}" for m in g.nodes) else None
             for i in range(2 * n - 1)]
    if join.op != "cat" or join.attrs.get("dim") % len(sel.shape) != 0 or n < 2 or None in steps:
        return None
    terms, products = steps[:n], steps[n:]
    if any(m.op != "slice" or m.inputs != [sel.name] or m.attrs.get("dim") != 0 or m.attrs.get("start") != i
           or m.attrs.get("end") != i + 1 for i, m in enumerate(terms)):
        return None
    running = [terms[0].name] + [m.name for m in products]
    if any(m.op != "mul" or m.inputs != [running[i], terms[i + 1].name] for i, m in enumerate(products)) \
            or join.inputs != running:
        return None
    return steps + [join]


def _cumprod(g: Graph, user: Node, sel: Node) -> bool:
    """cumprod along dim 0: the running products of where(M, X, 1), one
    int8 mul per row of X (at most capture_rewrites.MAX_PRODUCT_TERMS),
    picked."""
    from .capture_rewrites import MAX_PRODUCT_TERMS
    chain = _cumprod_chain(g, user, sel)
    if chain is None or table(g, sel) is None or table(g, sel)[3] > MAX_PRODUCT_TERMS:
        return False
    join = chain[-1]
    s = Steps(join.name)
    X, shape, M, L = flat(s, g, sel)
    filled = _filled(s, X, shape, M, L, s.const(1.0))
    row = [1] + list(shape[1:])
    running = [s("slice", [filled], row, dim=0, start=0, end=1)]
    for i in range(1, L):
        running.append(s("mul", [running[-1], s("slice", [filled], row, dim=0, start=i, end=i + 1)], row))
    _pick(s, join.name, s("cat", running, shape, dim=0), shape, M, origin(join))
    _replace(g, [m.name for m in chain], s.nodes)
    return True


def _triangle(n: Node, length: int) -> bool:
    w = n.attrs.get("weight")
    return n.op == "linear" and n.attrs.get("bias") is None and isinstance(w, np.ndarray) \
        and w.shape == (length, length) and np.array_equal(w, np.tril(np.ones((length, length), w.dtype)))


def _cumsum_chain(g: Graph, user: Node, sel: Node, rank: int) -> Optional[List[Node]]:
    """capture's cumsum of a selection along dim 0: [linear] (1-D) or
    [permute, linear, permute] swapping dim 0 and the last; None else."""
    if table(g, sel) is None or user.inputs != [sel.name]:
        return None
    if rank == 1:
        return [user] if user.shape and _triangle(user, user.shape[-1]) else None
    swap = list(range(rank))
    swap[0], swap[-1] = swap[-1], swap[0]
    if user.op != "permute" or list(user.attrs.get("dims", [])) != swap:
        return None
    return permuted_cumsum(g, user, swap)


def permuted_cumsum(g: Graph, user: Node, dims: List[int]) -> Optional[List[Node]]:
    """[user, linear, back] when user, a permute by dims, is read only by a
    cumsum's triangle linear over its last dim, read only by the same permute
    back (how capture writes a cumsum along another dim); None else."""
    chain = [user]
    for _ in range(2):
        users = g.users(chain[-1].name)
        if len(users) != 1:
            return None
        chain.append(users[0])
    linear, back = chain[1], chain[2]
    if not _triangle(linear, user.shape[-1] if user.shape else -1) or back.op != "permute" \
            or list(back.attrs.get("dims", [])) != dims:
        return None
    return chain


def _softmax(g: Graph, user: Node, sel: Node) -> bool:
    """softmax / log_softmax along dim 0 (the module docstring)."""
    if user.op not in ("softmax", "log_softmax") or not _along_first(user, sel) or table(g, sel) is None:
        return False
    from .capture_calls import _reduce_max_nodes
    s = Steps(user.name)
    X, shape, M, L = flat(s, g, sel)
    kept = [1] + list(shape[1:])
    filled = _filled(s, X, shape, M, L, far_end(s, X, shape, highest=False))
    s.nodes.extend(_reduce_max_nodes(f"{s.prefix}__max", filled, shape, [0], True, False))
    top = s.nodes[-1].name
    shifted = s("sub", [X, _widen(s, top, 0, L)], shape)         # <= 0 at the selected rows
    e0 = _filled(s, s("elementwise", [shifted], shape, fn="exp"), shape, M, L, s.const(0.0))
    # int8's mean reduces the last dim: the rows' columns [R, L], the rows last
    R = int(np.prod(shape[1:]))
    lines = s("reshape", [e0], [1, L], target_shape=[1, L]) if R == 1 else \
        s("permute", [e0 if len(shape) == 2 else s("reshape", [e0], [L, R], target_shape=[L, R])], [R, L],
          dims=[1, 0])
    mean = s("reshape", [s("mean", [lines], [R, 1], dim=[1], keepdim=True)], kept, target_shape=kept)
    total = s("mul", [mean, s.const(float(L))], kept)
    # at least 1 (the max's own exp(0)) wherever a row is selected: no log(0) from an empty selection
    total = s("clamp", [total], kept, lo=1.0, hi=None)
    if user.op == "softmax":
        whole = s("div", [e0, _widen(s, total, 0, L)], shape)
    else:
        whole = s("sub", [shifted, _widen(s, s("elementwise", [total], kept, fn="log"), 0, L)], shape)
    _pick(s, user.name, whole, shape, M, origin(user))
    _replace(g, [user.name], s.nodes)
    return True


def _var_chain(g: Graph, user: Node, sel: Node):
    """capture_rewrites._var_nodes' steps on a selection: (steps, whole,
    correction, std, out shape), whole False for dim 0 of a row selection
    (its first step the permute moving dim 0 last) and True for every
    element; None for any other node or dims."""
    if not user.name.endswith("__0") or user.inputs != [sel.name] or table(g, sel) is None:
        return None
    base = user.name[:-3]
    steps = [n for n in g.nodes if n.name == base or (n.name.startswith(base + "__")
                                                       and n.name[len(base) + 2:].isdigit())]
    ops = [n.op for n in steps]
    rank = len(sel.shape)
    whole = ops[0] == "reshape"
    if not whole and not (ops[0] == "permute" and list(steps[0].attrs["dims"]) == list(range(1, rank)) + [0]):
        return None
    body = ops[0 if whole else 1:]
    squares = [n for n in steps if n.op == "elementwise" and n.attrs.get("fn") == "square"]
    if body[:4] != ["reshape", "mean", "cat", "sub"] and body[:4] != ["reshape", "mean", "sub", "elementwise"] \
            or len(squares) != 1 or steps[-1].name != base or steps[-1].op != "reshape":
        return None
    tail = body[body.index("elementwise") + 1:]
    if tail not in (["mean", "reshape"], ["mean", "constant", "mul", "reshape"],
                    ["mean", "elementwise", "reshape"], ["mean", "constant", "mul", "elementwise", "reshape"]):
        return None
    std = tail[-2] == "elementwise"
    if std and steps[-2].attrs.get("fn") != "sqrt":
        return None
    n = int(steps[0 if whole else 1].attrs["target_shape"][1])
    correction = 0.0
    factor = [x for x in steps if x.op == "constant"]
    if factor:
        v = float(np.asarray(factor[0].attrs["value"]).reshape(-1)[0])
        correction = round(n - n / v, 4)
    return steps, whole, correction, std, list(steps[-1].attrs["target_shape"])


def _spread(g: Graph, user: Node, sel: Node) -> bool:
    """var / std over a selection (the module docstring): T the filled table
    viewed [K, N] (N the reduced rows or every element), its mean over the
    mask's share, the deviations where the mask is set, the mean of their
    squares over (share - correction / N), its square root for std. Where
    the count is at most the correction (the sorted mask 0 at that row:
    exact) that is 0, and a last division (fp32: its divisor one value) by
    1 where it is above, 0 / 0 = NaN where not, as torch."""
    found = _var_chain(g, user, sel)
    if found is None:
        return False
    steps, whole, correction, std, out = found
    end = steps[-1]
    s = Steps(end.name)
    X, shape, M, L = flat(s, g, sel)
    rank = len(shape)
    mask = M
    per_row = int(np.prod(shape[1:])) if whole else 1          # elements each selected row adds to the count
    first_short = int(np.floor(correction / per_row))         # the count exceeds the correction iff row this is kept
    if first_short >= L:
        return False
    if rank > 1 and whole:          # the mask over every element
        mask = s("compare", [_filled(s, s.const(np.ones(shape[1:], np.float32)), shape, M, L, s.const(0.0))],
                 shape, kind="gt", scalar=0.5)
    if whole:
        N, K = int(np.prod(shape)), 1
        T = s("reshape", [X], [1, N], target_shape=[1, N])
        Mb = s("reshape", [mask], [1, N], target_shape=[1, N])
    else:
        N, K = L, int(np.prod(shape[1:]))
        moved = s("permute", [X], list(shape[1:]) + [L], dims=list(range(1, rank)) + [0])
        T = s("reshape", [moved], [K, N], target_shape=[K, N])
        Mb = s("reshape", [M], [1, N], target_shape=[1, N])
    share = s("mean", [s("bool_to", [Mb], [1, N], dtype="float32")], [1, 1], dim=[1], keepdim=True)
    total = s("mean", [s("where", [Mb, T, s.const(0.0)], [K, N])], [K, 1], dim=[1], keepdim=True)
    mean = s("div", [total, _widen(s, share, 0, K)], [K, 1])
    dev = s("where", [Mb, s("sub", [T, _widen(s, mean, 1, N)], [K, N]), s.const(0.0)], [K, N])
    squares = s("mean", [s("elementwise", [dev], [K, N], fn="square")], [K], dim=[1], keepdim=False)
    ones_first = _ordered(s, "sort", _as_float(s, M, L), [L], True)
    enough = s("compare", [s("slice", [ones_first], [1], dim=0, start=first_short, end=first_short + 1)], [1],
               kind="gt", scalar=0.5)
    room = s("clamp", [s("sub", [s("reshape", [share], [1], target_shape=[1]), s.const(correction / N)], [1])],
             [1], lo=0.0, hi=None)
    # the quotient on its own grid before the square root (the squares' mean is n / N of its size)
    cur = s("where", [enough, s("div", [squares, _widen(s, room, 0, K)], [K]), s.const(0.0)], [K])
    if std:
        cur = s("elementwise", [cur], [K], fn="sqrt")
    # divided by 1, or 0 / 0 where the count is at most the correction (fp32: the divisor is one value)
    cur = s("div", [cur, s("reshape", [s("bool_to", [enough], [1], dtype="float32")], [], target_shape=[])], [K])
    s("reshape", [cur], out, target_shape=out)
    s.nodes[-1].name = end.name
    s.nodes[-1].attrs["source"] = origin(end)
    _replace(g, [n.name for n in steps], s.nodes)
    return True


def _positions(g: Graph, user: Node, sel: Node) -> bool:
    """argmax / argmin along dim 0, the indices of sort / topk / kthvalue
    and of cummax / cummin along dim 0: the node over where(V, C, fill)
    (the fill x's far end, after every selected value in the order asked:
    the stable kernels keep the compact rows before it on ties), a whole
    sort's or scan's positions picked by V."""
    a = user.attrs
    rule = a.get("rule")
    if user.op == "argmax":
        if not _along_first(user, sel):
            return False
        highest = bool(a["smallest"])
    elif user.op == "sort_indices" and rule in (None, "cummax", "cummin") and _along_first(user, sel):
        highest = rule == "cummin" or (rule is None and (a.get("pick") is not None or not a["descending"]))
    else:
        return False
    if table(g, sel) is None:
        return False
    s = Steps(user.name)
    X, shape, M, L = flat(s, g, sel)
    C, V = _compacted(s, X, shape, M, L)
    filled = _filled(s, C, shape, V, L, far_end(s, X, shape, highest=highest))
    attrs = {k: v for k, v in a.items() if k != "source"}
    if user.op == "argmax" or a.get("k") is not None or a.get("pick") is not None:
        s.nodes.append(Node(user.name, user.op, [filled], dict(attrs, source=origin(user))))
    else:
        _pick(s, user.name, s(user.op, [filled], shape, **attrs), shape, V, origin(user))
    _replace(g, [user.name], s.nodes)
    return True


def _median_row(s: Steps, M: str, L: int) -> Tuple[str, str]:
    """(at, ones_first): at [L] bool set on row (n - 1) // 2 alone (none
    when n = 0), from the mask's 0/1 sorted descending (ones_first): row i
    is the median where that is 1 at 2i (n > 2i) and 0 at 2i + 2 (n <= 2i +
    2), so n is 2i + 1 or 2i + 2. One linear of the 0/1 values, compared:
    exact."""
    ones_first = _ordered(s, "sort", _as_float(s, M, L), [L], True)
    w = np.zeros((L, L), np.float32)
    for i in range(L):
        if 2 * i < L:
            w[i, 2 * i] = 1.0
        if 2 * i + 2 < L:
            w[i, 2 * i + 2] = -1.0
    return s("compare", [s("linear", [ones_first], [L], weight=w, bias=None)], [L], kind="gt", scalar=0.5), \
        ones_first


def _median(g: Graph, user: Node, sel: Node) -> bool:
    """torch.median's values along dim 0 or of a whole 1-D selection, and
    its indices along dim 0."""
    a = user.attrs
    rank = len(sel.shape)
    if user.op not in ("sort", "sort_indices") or a.get("rule") != "median" or user.inputs != [sel.name] \
            or table(g, sel) is None or not (_along_first(user, sel) or (a["dim"] is None and rank == 1)):
        return False
    if user.op == "sort_indices":
        return _median_position(g, user, sel)
    from .capture_calls import _reduce_max_nodes
    s = Steps(user.name)
    X, shape, M, L = flat(s, g, sel)
    ordered = _ordered(s, "sort", _filled(s, X, shape, M, L, far_end(s, X, shape, highest=True)), shape, False)
    at, ones_first = _median_row(s, M, L)
    taken = _filled(s, ordered, shape, at, L, far_end(s, X, shape, highest=False))
    whole = a["dim"] is None
    nodes = _reduce_max_nodes(f"{user.name}__med" if whole else user.name, taken, shape, [0],
                              bool(a.get("keepdim")) and not whole, False)
    s.nodes.extend(nodes)
    if whole:   # torch's median of no value is NaN: 0 / 0 there, the value / 1 elsewhere (fp32: a [1] divisor)
        some = s("slice", [ones_first], [1], dim=0, start=0, end=1)
        value = s("where", [s("compare", [some], [1], kind="gt", scalar=0.5), nodes[-1].name, s.const(0.0)], [1])
        s("reshape", [s("div", [s("reshape", [value], [], target_shape=[]), some], [1])], [], target_shape=[])
        s.nodes[-1].name = user.name
    s.nodes[-1].attrs["source"] = origin(user)
    _replace(g, [user.name], s.nodes)
    return True


def _median_position(g: Graph, user: Node, sel: Node) -> bool:
    """torch.median's indices along dim 0: the compact selection's stable
    ascending order (its fill, x's largest value, after it), and its entry
    at the median row (that row's position an argmax of the row mask, the
    entry a gather of the int64 order: exact). No row (torch raises): the
    order's first entry, 0."""
    a = user.attrs
    s = Steps(user.name)
    X, shape, M, L = flat(s, g, sel)
    C, V = _compacted(s, X, shape, M, L)
    order = _ordered(s, "sort_indices", _filled(s, C, shape, V, L, far_end(s, X, shape, highest=True)), shape,
                     False)
    at, _ = _median_row(s, M, L)
    row = _filled(s, s.const(np.ones(shape[1:], np.float32)), shape, at, L, s.const(0.0))
    kept = [1] + list(shape[1:])
    where = s("argmax", [row], kept, dim=0, keepdim=True, smallest=False)
    picked = s("gather", [order, where], kept, dim=0)
    out = kept if a.get("keepdim") else list(shape[1:])
    s.nodes.append(Node(user.name, "int_math", [picked], dict(kind="view", dtype="int64", shape=out,
                                                               source=origin(user)), shape=out))
    _replace(g, [user.name], s.nodes)
    return True


def _flip_chain(g: Graph, user: Node, sel: Node) -> Optional[Node]:
    """capture's flip of a selection along dim 0 (one-wide slices from the
    last row to the first, joined along dim 0): the join; None else."""
    if user.op != "slice" or user.inputs != [sel.name] or user.attrs.get("dim") != 0:
        return None
    users = g.users(user.name)
    if len(users) != 1 or users[0].op != "cat" or users[0].attrs.get("dim") % len(sel.shape) != 0:
        return None
    join = users[0]
    n = len(join.inputs)
    for i, name in enumerate(join.inputs):
        part = g.node(name)
        if part.op != "slice" or part.inputs != [sel.name] or part.attrs.get("dim") != 0 \
                or part.attrs.get("start") != n - 1 - i or part.attrs.get("end") != n - i \
                or [u.name for u in g.users(name)] != [join.name]:
            return None
    return join if n > 1 else None


def _flip(g: Graph, user: Node, sel: Node) -> bool:
    join = _flip_chain(g, user, sel)
    if join is None or table(g, sel) is None:
        return False
    s = Steps(join.name)
    X, shape, M, L = flat(s, g, sel)
    Mf = _as_float(s, M, L)

    def flipped(src, size):
        return s("cat", [s("slice", [src], [1] + list(size[1:]), dim=0, start=L - 1 - i, end=L - i)
                         for i in range(L)], size, dim=0)
    mask = s("compare", [flipped(Mf, [L])], [L], kind="gt", scalar=0.5)
    _pick(s, join.name, flipped(X, shape), shape, mask, origin(join))
    _replace(g, list(join.inputs) + [join.name], s.nodes)
    return True


def _by_position(g: Graph, user: Node, sel: Node) -> bool:
    """s[i] and s[a:b] along dim 0 as written (capture's attrs spelled:
    the trace itself writes s[-1] as s[count - 1] of the example's count):
    bounds of one sign, taken in the selection made compact at the front
    (>= 0) or at the end (< 0). A slice is a selection again, C[a:b] by
    V[a:b]; an element past the selection (torch raises) is x's smallest
    value."""
    spelled = user.attrs.get("spelled")
    if spelled is None or user.inputs != [sel.name] or table(g, sel) is None:
        return False
    rest = list(sel.shape[1:])
    # a reshape: capture's view for an index that left the example's rows whole (s[:3] of 3 or fewer, s[0] of 1)
    view = user.op == "reshape" and list(user.attrs.get("target_shape", [None]))[1 if isinstance(spelled, tuple)
                                                                                  else 0:] == rest
    if not view and (user.op != "slice" or user.attrs.get("dim") != 0):
        return False
    L = table(g, sel)[3]
    if isinstance(spelled, tuple):
        a, b, step = spelled
        bounds = [v for v in (a, b) if v is not None]
        if step not in (None, 1) or not bounds or len({v < 0 for v in bounds}) != 1:
            return False
        from_end = bounds[0] < 0
        start = 0 if a is None else min(max(a + L if from_end else a, 0), L)
        end = L if b is None else min(max(b + L if from_end else b, 0), L)
        if end <= start:
            return False
    else:
        if not -L <= spelled < L:
            return False
        from_end = spelled < 0
        start = spelled + L if from_end else spelled
        end = start + 1
    s = Steps(user.name)
    X, shape, M, L = flat(s, g, sel)
    C, ones = _compact(s, X, shape, M, L, front=not from_end)
    part = [end - start] + list(shape[1:])
    if isinstance(spelled, tuple):
        kept = s("compare", [s("slice", [ones], [end - start], dim=0, start=start, end=end)], [end - start],
                 kind="gt", scalar=0.5)
        _pick(s, user.name, s("slice", [C], part, dim=0, start=start, end=end), part, kept, origin(user))
    else:
        # the fill over the whole compact table, whose grid holds every selected value, then the row
        filled = _filled(s, C, shape, s("compare", [ones], [L], kind="gt", scalar=0.5), L,
                         far_end(s, X, shape, highest=False))
        s.nodes.append(Node(user.name, "slice", [filled], dict(dim=0, start=start, end=end, source=origin(user)),
                            shape=part))
        if view:            # the int's dim dropped
            s.nodes[-1].name = f"{user.name}__row"
            s.nodes.append(Node(user.name, "reshape", [s.nodes[-1].name], dict(target_shape=rest,
                                                                               source=origin(user)), shape=rest))
    _replace(g, [user.name], s.nodes)
    return True


def mix_rows(g: Graph, user: Node, sel: Node) -> bool:
    """One of this module's rewrites of user, a reader of the selection sel;
    False when none applies."""
    return any(rewrite(g, user, sel) for rewrite in (_scan, _cumprod, _softmax, _spread, _positions, _median, _flip,
                                                      _by_position))
