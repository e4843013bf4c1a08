"""What follows a selection x[mask] beyond element-wise ops (issue 15):
layers that act on each of its rows, and the few that mix its rows (sort,
topk, kthvalue, cat, a sum / mean / max / min over its first dim).

A selection is seen as rows of a table: x viewed as X [L, rest...] and the
mask as M [L] (for x[x > 0] rest is empty and L is x's numel; for
boxes[scores > t] L is the mask's numel and rest boxes' other dims), the
selection X[M] of bound [L, rest...] (`table`). Its length is known only at
run time, and every kernel but the selection's checks static shapes at load,
so each layer reading a selection is rewritten over X, and the rows picked
after it:

- a layer that treats each row alone (a view keeping the rows,
  `x[m].view(-1, 1)`, a permute keeping dim 0, a mean, softmax, slice, sort
  or cat over other dims, layer_norm, linear, a matmul by a fixed right
  side, 4-D convolutions and pools) computes over every row of X, then
  picks the rows: f(X[M]) = f(X)[M] (`move_rowwise`);
- a view that splits each row (`boxes[m].view(-1, 2)`) or flattens them
  picks sub-rows by the mask repeated per sub-row (`split_rows`);
- cat along dim 0 joins the tables and their masks, a part with no mask
  wholly taken (`join_rows`);
- sort / topk / kthvalue along dim 0 sort where(M, X, fill), the fill x's
  far end so the unselected sort after every selected value; a whole sort
  then keeps its first count rows, picked by the mask sorted descending
  (1s first: exact, no arithmetic on the count) (`order_rows`);
- a sum / mean / max / min over dims with dim 0 reduce where(M, X, 0) (the
  sum; the mean over the mask's share) or where(M, X, x's opposite end)
  (`reduce_rows`), as capture_masked_select's whole-tensor reductions;
- a selection of a selection by a comparison of it (moved before the first
  as an element-wise op: a bool selection by the same mask) is one
  selection of X by both masks (`select_within`).

Where torch raises on a short selection (topk's k or kthvalue's k above its
length, max / min of no rows) ptec gives the fill, x's far end; an empty
mean is 0 (docs/aot.md). Scans, softmax, var / std, positions, the
median and flip along dim 0 are capture_selection_mix's, more readers
capture_selection_more's, positional layers (views into groups, a
negative start with a step, mode) capture_selection_positional's,
unsqueeze(0) of a 1-D selection as a program output
capture_selection_row_output's; a layer mixing rows in any other way is
left, and capture_masked_select.refuse_consumers names it."""
from __future__ import annotations

from typing import List, Optional, Tuple

import numpy as np

from .capture_masked_select import Steps, _numel, _same_mask
from .ir import Graph, Node, origin

# layers whose dim 0 is a batch: every 4-D row is computed alone
_BATCHED_4D = {"conv2d", "conv_transpose2d", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "batch_norm",
               "group_norm", "upsample_nearest", "upsample_bilinear", "upsample_bicubic", "pixel_shuffle",
               "channel_shuffle"}


def table(g: Graph, sel: Node) -> Optional[Tuple[str, List[int], str, int]]:
    """(x, X's shape [L, rest...], mask, L) of a selection, or None when its
    mask is broadcast to x (a view of x as rows would not match it)."""
    x, mask = g.node(sel.inputs[0]), g.node(sel.inputs[1])
    if x.shape is None or mask.shape is None:
        return None
    if sel.attrs.get("rows"):
        L = _numel(mask.shape)
        return x.name, [L] + list(x.shape[len(mask.shape):]), mask.name, L
    if list(mask.shape) != list(x.shape):
        return None
    L = _numel(x.shape)
    return x.name, [L], mask.name, L


def flat(s: Steps, g: Graph, sel: Node):
    """X and M as nodes (views of x and the mask when their shapes differ)."""
    x, shape, mask, L = table(g, sel)
    X = x if list(g.node(x).shape) == shape else s("reshape", [x], shape, target_shape=shape)
    M = mask if list(g.node(mask).shape) == [L] else s("reshape", [mask], [L], target_shape=[L])
    return X, shape, M, L


def _pick(s: Steps, name: str, whole: str, shape, mask: str, source: str) -> None:
    """whole [L, ...] with the rows where mask [L] is set, named name."""
    attrs = dict(source=source, **({"rows": True} if len(shape) > 1 else {}))
    s.nodes.append(Node(name, "masked_select", [whole, mask], attrs, shape=list(shape)))


def _same_selection(g: Graph, a: Node, b: Node) -> bool:
    """Rows picked by one mask: the same rows of tables of one length."""
    ta, tb = table(g, a), table(g, b)
    return ta is not None and tb is not None and ta[3] == tb[3] and _same_mask(g, a.inputs[1], b.inputs[1])


def _keeps_rows(g: Graph, user: Node, sel: Node) -> bool:
    """user treats each row of its selection input alone (dim 0 passes
    through untouched) and its attributes hold nothing of the length."""
    a, op, rank = user.attrs, user.op, len(sel.shape)
    if user.inputs[0] != sel.name and op not in ("cat",):
        return False
    if op == "reshape":
        if "flatten" in a:          # (a view [-1, ...] is split_rows')
            return a["flatten"][0] % rank >= 1
        if "unsqueeze" in a:
            return a["unsqueeze"] % (rank + 1) >= 1
        if "squeeze" in a:
            return a["squeeze"] is not None and a["squeeze"] % rank >= 1
        return False
    if op == "permute":
        from .ir import permutation
        return rank >= 2 and permutation(user, rank)[0] == 0
    if op in ("softmax", "log_softmax", "slice", "cat"):
        return rank >= 2 and a["dim"] % rank != 0
    if op == "sort":
        return rank >= 2 and a["dim"] is not None and a["dim"] % rank != 0
    if op == "mean":
        return rank >= 2 and all(d % rank != 0 for d in a["dim"])
    if op == "layer_norm":
        return len(a["normalized_shape"]) < rank
    if op == "linear":
        return rank >= 2
    if op == "matmul":
        other = g.node(user.inputs[1])
        return rank >= 2 and other.op != "masked_select" and other.shape is not None and len(other.shape) <= 2
    if op == "pad":
        return len(a["pad"]) <= 2 * (rank - 1)
    return op in _BATCHED_4D and rank == 4


def move_rowwise(g: Graph, user: Node, sel: Node) -> bool:
    """f(X[M]) -> f(X)[M] for a layer that keeps the rows (the module
    docstring); cat's other parts must be selections by the same mask."""
    if table(g, sel) is None or not _keeps_rows(g, user, sel):
        return False
    parts = user.inputs if user.op == "cat" else [user.inputs[0]]
    if any(g.node(p).op != "masked_select" or not _same_selection(g, g.node(p), sel) for p in parts):
        return False
    s = Steps(user.name)
    flats = {p: flat(s, g, g.node(p)) for p in dict.fromkeys(parts)}
    X, shape, M, L = flats[sel.name]
    inputs = [flats[i][0] if i in flats else i for i in user.inputs]
    out_shape = [L] + list(user.shape[1:])
    whole = s(user.op, inputs, out_shape, **{k: v for k, v in user.attrs.items() if k != "source"})
    _pick(s, user.name, whole, out_shape, M, origin(user))
    _replace(g, [user.name], s.nodes)
    return True


def split_rows(g: Graph, user: Node, sel: Node) -> bool:
    """A view [-1, t...] of a selection whose rows hold a whole number j of
    t's, or a flatten of it to 1-D: X viewed as [L * j, t...], each mask
    entry repeated j times (a 0/1 float times ones, compared) when j > 1."""
    a, rest = user.attrs, _numel(sel.shape[1:])
    # (spelled: an index of dim 0 that left the example's rows whole, capture_selection_mix's)
    if user.op != "reshape" or user.inputs != [sel.name] or table(g, sel) is None or "spelled" in a:
        return False
    if "target_shape" in a:
        t = [int(v) for v in a["target_shape"]]
        if not t or -1 in t[1:] or _numel(t[1:]) == 0 or rest % _numel(t[1:]):
            return False
        # a size the trace wrote from the example (x[m][:, 1]'s view), of at
        # least 2 rows (1 row [1, n] may be unsqueeze(0)'s), stands for -1
        if t[0] != -1 and (t[0] % (rest // _numel(t[1:])) or t[0] // (rest // _numel(t[1:])) < 2):
            return False
        t = t[1:]
    elif "flatten" in a and a["flatten"][0] % len(sel.shape) == 0 and a["flatten"][1] % len(sel.shape) == \
            len(sel.shape) - 1:
        t = []
    else:
        return False
    j = rest // _numel(t)
    s = Steps(user.name)
    X, shape, M, L = flat(s, g, sel)
    whole = X if shape == [L * j] + t else s("reshape", [X], [L * j] + t, target_shape=[L * j] + t)
    mask = M
    if j > 1:
        ones = s.const(np.ones((1, j), np.float32))
        wide = s("mul", [s("reshape", [s("bool_to", [M], [L], dtype="float32")], [L, 1], target_shape=[L, 1]),
                         ones], [L, j])
        mask = s("reshape", [s("compare", [wide], [L, j], kind="gt", scalar=0.5)], [L * j], target_shape=[L * j])
    _pick(s, user.name, whole, [L * j] + t, mask, origin(user))
    _replace(g, [user.name], s.nodes)
    return True


def select_within(g: Graph, user: Node, sel: Node) -> bool:
    """A selection of a selection by a bool selection by the same mask
    (`s = x[m]; s[s > 1]`, `b = boxes[m]; b[b[:, 1] > 0]`): one selection
    of X by M and the inner mask's table both set."""
    if user.op != "masked_select" or user.inputs[0] != sel.name:
        return False
    inner = g.node(user.inputs[1])
    if inner.op != "masked_select" or not _same_selection(g, inner, sel):
        return False
    s = Steps(user.name)
    X, shape, M, L = flat(s, g, sel)
    C, cshape, _, _ = flat(s, g, inner)
    lead = cshape[1:]
    if list(shape[1:len(cshape)]) != list(lead):
        return False
    both = s("logical", [over_rows(s, M, L, len(cshape)), C], cshape, kind="and")
    n = _numel(cshape)
    out = [n] + list(shape[len(cshape):])
    whole = X if len(cshape) == 1 else s("reshape", [X], out, target_shape=out)
    mask = both if len(cshape) == 1 else s("reshape", [both], [n], target_shape=[n])
    _pick(s, user.name, whole, out, mask, origin(user))
    _replace(g, [user.name], s.nodes)
    return True


def _as_float_mask(s: Steps, part: Node, g: Graph):
    """(table, 0/1 float mask) of a part of cat: a selection's, or a plain
    value wholly taken."""
    if part.op == "masked_select":
        X, shape, M, L = flat(s, g, part)
        return X, s("bool_to", [M], [L], dtype="float32")
    return part.name, s.const(np.ones(part.shape[0], np.float32))


def join_rows(g: Graph, user: Node, sel: Node) -> bool:
    """cat([... x[m] ...], 0): the parts' tables joined, their masks joined
    (a part that is no selection wholly kept), then one selection."""
    if user.op != "cat" or user.attrs["dim"] % len(sel.shape) != 0:
        return False
    parts = [g.node(p) for p in user.inputs]
    if any(p.shape is None or (p.op == "masked_select" and table(g, p) is None) for p in parts) or \
            any(len(p.shape) != len(sel.shape) for p in parts):
        return False
    s = Steps(user.name)
    tables, masks = zip(*[_as_float_mask(s, p, g) for p in parts])
    rows = sum(g.node(p).shape[0] if g.node(p).op != "masked_select" else table(g, g.node(p))[3] for p in user.inputs)
    shape = [rows] + list(sel.shape[1:])
    whole = s("cat", list(tables), shape, dim=0)
    mask = s("compare", [s("cat", list(masks), [rows], dim=0)], [rows], kind="gt", scalar=0.5)
    _pick(s, user.name, whole, shape, mask, origin(user))
    _replace(g, [user.name], s.nodes)
    return True


def far_end(s: Steps, X: str, shape, highest: bool) -> str:
    """x's largest (highest) or smallest value, shape [1]: a fill that sorts
    after (or reduces below) every selected value."""
    from .capture_calls import _reduce_max_nodes
    flat = s("reshape", [X], [1, _numel(shape)], target_shape=[1, _numel(shape)])
    nodes = _reduce_max_nodes(f"{s.prefix}__far{len(s.nodes)}", flat, [1, _numel(shape)], [1], False, not highest)
    s.nodes.extend(nodes)
    return nodes[-1].name


def over_rows(s: Steps, M: str, L: int, rank: int) -> str:
    """M [L] viewed [L, 1...] to broadcast over a table of `rank` dims."""
    return M if rank == 1 else s("reshape", [M], [L] + [1] * (rank - 1), target_shape=[L] + [1] * (rank - 1))


def _filled(s: Steps, X: str, shape, M: str, L: int, fill: str) -> str:
    """where(M, X, fill) with M viewed to broadcast over X's rows."""
    return s("where", [over_rows(s, M, L, len(shape)), X, fill], shape)


def order_rows(g: Graph, user: Node, sel: Node) -> bool:
    """sort / topk / kthvalue (values) along dim 0 of a selection."""
    a = user.attrs
    if user.op != "sort" or user.inputs != [sel.name] or a.get("rule") is not None or a["dim"] is None \
            or a["dim"] % len(sel.shape) != 0 or table(g, sel) is None:
        return False
    s = Steps(user.name)
    X, shape, M, L = flat(s, g, sel)
    ascending = a.get("pick") is not None or not a["descending"]
    filled = _filled(s, X, shape, M, L, far_end(s, X, shape, highest=ascending))
    attrs = {k: v for k, v in a.items() if k != "source"}
    if a.get("k") is not None or a.get("pick") is not None:
        s.nodes.append(Node(user.name, "sort", [filled], dict(attrs, source=origin(user)), shape=list(user.shape)))
    else:
        whole = s("sort", [filled], shape, **attrs)
        # the count's rows first: the mask's 0/1 sorted descending, compared (exact, no count arithmetic)
        ones_first = s("sort", [s("bool_to", [M], [L], dtype="float32")], [L], dim=0, descending=True, k=None,
                       pick=None, keepdim=False, rule=None)
        _pick(s, user.name, whole, shape, s("compare", [ones_first], [L], kind="gt", scalar=0.5), origin(user))
    _replace(g, [user.name], s.nodes)
    return True


def _sum_tail(g: Graph, mean: Node) -> Optional[Tuple[Node, Node]]:
    """(count constant, mul) when mean is capture's sum (a mean times the
    count of the values summed: capture_calls._sum_nodes)."""
    if not mean.name.endswith("_mean"):
        return None
    base = mean.name[:-len("_mean")]
    users = g.users(mean.name)
    if len(users) != 1 or users[0].op != "mul" or users[0].inputs != [mean.name, f"{base}_count"]:
        return None
    return g.node(f"{base}_count"), users[0]


def reduce_rows(g: Graph, user: Node, sel: Node) -> bool:
    """A mean (sum) or max / min (capture_calls._reduce_max_nodes' chain,
    marked on its first node) over dims that hold dim 0 of a selection; a
    max / min over other dims is rebuilt over X (its steps' views hold the
    length), then picked."""
    rank = len(sel.shape)
    if user.inputs != [sel.name] or table(g, sel) is None:
        return False
    s = Steps(user.name)
    if user.op == "mean" and any(d % rank == 0 for d in user.attrs["dim"]):
        X, shape, M, L = flat(s, g, sel)
        kept = s("mean", [_filled(s, X, shape, M, L, s.const(0.0))], None, **{k: v for k, v in user.attrs.items()
                                                                               if k != "source"})
        tail = _sum_tail(g, user)
        if tail is not None:        # the sum: the mean of the filled table times its count
            count, mul = tail
            dims = {d % rank for d in user.attrs["dim"]}
            total = _numel([n for i, n in enumerate(shape) if i in dims])
            s.nodes.append(Node(mul.name, "mul", [kept, s.const(float(total))], dict(mul.attrs)))
            _replace(g, [user.name, count.name, mul.name], s.nodes)
            return True
        share = s("reshape", [s("mean", [s("reshape", [s("bool_to", [M], [L], dtype="float32")], [1, L],
                                              target_shape=[1, L])], [1], dim=[1], keepdim=False)], [],
                  target_shape=[])
        s.nodes.append(Node(user.name, "div", [kept, share], dict(source=origin(user))))
        _replace(g, [user.name], s.nodes)
        return True
    marker = user.attrs.get("reduce_max")
    if marker is None:
        return False
    dims, keepdim, negate, steps = marker
    from .capture_calls import _reduce_max_nodes
    X, shape, M, L = flat(s, g, sel)
    end = steps[-1]
    if any(d % rank == 0 for d in dims):
        from .capture_selection_more import bool_fill
        filled = _filled(s, X, shape, M, L, bool_fill(s, g, sel, X, shape, highest=negate))
        nodes = _reduce_max_nodes(end, filled, shape, dims, keepdim, negate)
        nodes[-1].attrs["source"] = origin(g.node(end))
        s.nodes.extend(nodes)
    else:
        nodes = _reduce_max_nodes(f"{end}__whole", X, shape, dims, keepdim, negate)
        s.nodes.extend(nodes)
        out_shape = [L] + list(g.node(end).shape[1:])
        _pick(s, end, nodes[-1].name, out_shape, M, origin(g.node(end)))
    _replace(g, steps, s.nodes)
    return True


def _replace(g: Graph, names, nodes: List[Node]) -> None:
    """The nodes named go; the new ones stand where the first of them stood."""
    names = set(names)
    at = min(i for i, n in enumerate(g.nodes) if n.name in names)
    kept = [n for n in g.nodes if n.name not in names]
    at -= sum(1 for n in g.nodes[:at] if n.name in names)
    g.nodes = kept[:at] + nodes + kept[at:]
