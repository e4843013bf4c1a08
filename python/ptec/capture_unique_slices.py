"""Readers of torch.unique's slices behind a dim above 1 beyond element-wise
ops (issue 15): reductions and layers over their dim, and layers acting on
each slice over another dim.

The slices are a selection along dim `at` of the sorted tensor xs
(capture_unique_counts `_behind`: a masked_select node with attrs rows and
at, mask F [L] the first row of each run, L = xs's size along at), so
u = xs[:, ..., F] is [..., k, ...] with the count inside. F is never empty
(the first row always starts a run: k >= 1), so no reduction below meets an
empty selection. Each reader is rewritten over xs, with F viewed
[1, ..., L, ..., 1] (`_over`) to broadcast along at:

- a sum over dims holding at is the sum of where(F, xs, 0) (the int8 mean
  of it times the fixed numel reduced); a mean that mean over F's share
  (k / L, a mean of its 0/1): the mean over the k kept;
- amax / amin / max(dim).values over dims holding at, and the whole
  tensor's sum / mean / max / min, the same with the fill xs's opposite
  end, which never wins;
- softmax / log_softmax along at: m the max of where(F, xs, xs's smallest),
  e0 = where(F, exp(xs - m), 0), softmax e0 / sum(e0), log_softmax
  xs - m - log(sum(e0)), computed over all L and then selected along at;
- a layer acting on each slice alone (a mean / sum / amax / amin over dims
  without at, softmax / log_softmax / a sort's values along another dim) is
  computed over xs and then selected: f(xs)[..., F] with at moved down by
  the dims reduced before it (at 0 the rows selection of
  capture_selection_rows, with every reader of it).

- scans: cumsum (capture's linear by the lower triangle of ones, between
  permutes swapping the dim and the last) and cummax / cummin (values)
  along at scan where(F, xs, e), e the scan's identity (0; xs's smallest
  value for a running max, its largest for a running min), so a kept slice
  has seen the kept slices before it and identities: picking them gives
  the slices' scan exactly (capture_selection_mix's `_scan`, along at);
  along another dim each slice's own scan, over xs then selected (`_scan`);
- a flip (capture's one-wide slices from the last to the first, joined):
  along at, xs and F both flipped, then picked; along another dim xs
  flipped, then picked by F (`_flip`);
- a view keeping the count a dim of its own (`u.view(2, -1)`,
  `u.flatten(0, 1)`, `u.reshape(1, 2, -1, 1)`: the dims before it and after
  it each regrouped, the count spelled -1): the same view of xs with L in
  the count's place, then picked along the count's new dim (`_view`).

Other readers (a view spelling the count as the example's number or
merging it with another dim, cumprod and slices over another dim: their
steps hold the count) stay refused by
capture_masked_select.refuse_consumers."""
from __future__ import annotations

from typing import List, Optional, Tuple

import numpy as np

from .capture_masked_select import Steps, _numel
from .ir import Graph, Node, origin


def _over(s: Steps, mask: str, L: int, rank: int, at: int) -> str:
    """F [L] viewed [1, ..., L, ..., 1] (L at `at`) to broadcast along at."""
    shape = [1] * rank
    shape[at] = L
    return s("reshape", [mask], shape, target_shape=shape)


def _far(s: Steps, xs: str, shape, highest: bool) -> str:
    from .capture_selection_rows import far_end
    return far_end(s, xs, shape, highest=highest)


def _reselect(s: Steps, name: str, whole: str, shape, mask: str, at: int, source: str) -> None:
    """whole (of `shape`, L along at) selected along at by F, named name: a
    1-D selection, a rows selection (at 0) or one behind whole dims."""
    attrs = dict(source=source)
    if len(shape) > 1:
        attrs["rows"] = True
        if at:
            attrs["at"] = at
    s.nodes.append(Node(name, "masked_select", [whole, mask], attrs, shape=list(shape)))


def _after(shape, dims, keepdim: bool, at: int):
    """(shape after reducing dims, at's place in it)."""
    if keepdim:
        return [1 if i in dims else n for i, n in enumerate(shape)], at
    return [n for i, n in enumerate(shape) if i not in dims], at - sum(1 for d in dims if d < at)


def _replace(g: Graph, names, nodes: List[Node]) -> None:
    from .capture_selection_rows import _replace as replace
    replace(g, names, nodes)


def _share(s: Steps, mask: str, L: int) -> str:
    """k / L, the mean of F's 0/1, shape []."""
    flat = s("reshape", [s("bool_to", [mask], [L], dtype="float32")], [1, L], target_shape=[1, L])
    return s("reshape", [s("mean", [flat], [1], dim=[1], keepdim=False)], [], target_shape=[])


def _mean(g: Graph, user: Node, xs: str, shape, mask: str, L: int, at: int) -> bool:
    from .capture_selection_rows import _sum_tail
    rank = len(shape)
    dims = sorted({d % rank for d in user.attrs["dim"]})
    keepdim = bool(user.attrs.get("keepdim"))
    s = Steps(user.name)
    if at not in dims:                                      # each slice's own: computed over xs, then selected
        out, place = _after(shape, dims, keepdim, at)
        whole = s("mean", [xs], out, dim=dims, keepdim=keepdim)
        _reselect(s, user.name, whole, out, mask, place, origin(user))
        _replace(g, [user.name], s.nodes)
        return True
    filled = s("where", [_over(s, mask, L, rank, at), xs, s.const(0.0)], shape)
    out = _after(shape, dims, keepdim, at)[0]
    kept = s("mean", [filled], out, dim=dims, keepdim=keepdim)
    tail = _sum_tail(g, user)
    if tail is not None:                                    # the sum: the filled mean times its fixed count
        count, mul = tail
        s.nodes.append(Node(mul.name, "mul", [kept, s.const(float(_numel([shape[d] for d in dims])))],
                            dict(mul.attrs)))
        _replace(g, [user.name, count.name, mul.name], s.nodes)
        return True
    s.nodes.append(Node(user.name, "div", [kept, _share(s, mask, L)], dict(source=origin(user))))
    _replace(g, [user.name], s.nodes)
    return True


def _extreme(g: Graph, user: Node, xs: str, shape, mask: str, L: int, at: int) -> bool:
    from .capture_calls import _reduce_max_nodes
    dims, keepdim, negate, steps = user.attrs["reduce_max"]
    rank = len(shape)
    dims = sorted({d % rank for d in dims})
    end = steps[-1]
    s = Steps(end)
    if at in dims:
        filled = s("where", [_over(s, mask, L, rank, at), xs, _far(s, xs, shape, highest=negate)], shape)
        nodes = _reduce_max_nodes(end, filled, shape, dims, keepdim, negate)
        nodes[-1].attrs["source"] = origin(g.node(end))
        s.nodes.extend(nodes)
    else:
        nodes = _reduce_max_nodes(f"{end}__whole", xs, shape, dims, keepdim, negate)
        s.nodes.extend(nodes)
        out, place = _after(shape, dims, keepdim, at)
        nodes[-1].shape = list(out)             # (read by the selection's next readers before infer_shapes)
        _reselect(s, end, nodes[-1].name, out, mask, place, origin(g.node(end)))
    _replace(g, steps, s.nodes)
    return True


def _whole(g: Graph, user: Node, xs: str, shape, mask: str, L: int, at: int) -> bool:
    """sum() / mean() / max() / min() of the slices (capture_rewrites' whole
    reduction, its steps marked on the first)."""
    from .capture_calls import _reduce_max_nodes
    kind, steps = user.attrs["whole"]
    if kind not in ("sum", "mean", "max", "min"):
        return False
    n, end = _numel(shape), steps[-1]
    s = Steps(end)
    if kind in ("sum", "mean"):
        fill = s.const(0.0)
    else:
        fill = _far(s, xs, shape, highest=kind == "min")
    filled = s("reshape", [s("where", [_over(s, mask, L, len(shape), at), xs, fill], shape)], [1, n],
               target_shape=[1, n])
    if kind in ("sum", "mean"):
        total = s("mean", [filled], [1], dim=[1], keepdim=False)
        total = s("mul", [total, s.const(float(n))], [1]) if kind == "sum" else \
            s("div", [total, _share(s, mask, L)], [1])
    else:
        s.nodes.extend(_reduce_max_nodes(f"{end}__ext", filled, [1, n], [1], False, kind == "min"))
        total = s.nodes[-1].name
    s("reshape", [total], [], target_shape=[])
    s.nodes[-1].name = end
    s.nodes[-1].attrs["source"] = origin(g.node(end))
    _replace(g, steps, s.nodes)
    return True


def _softmax(g: Graph, user: Node, xs: str, shape, mask: str, L: int, at: int) -> bool:
    """softmax / log_softmax along at (the module docstring)."""
    from .capture_calls import _reduce_max_nodes
    rank = len(shape)
    s = Steps(user.name)
    F = _over(s, mask, L, rank, at)
    kept = [1 if i == at else n for i, n in enumerate(shape)]
    filled = s("where", [F, xs, _far(s, xs, shape, highest=False)], shape)
    s.nodes.extend(_reduce_max_nodes(f"{s.prefix}__max", filled, shape, [at], True, False))
    shifted = s("sub", [xs, s.nodes[-1].name], shape)                 # <= 0 at the kept slices
    e0 = s("where", [F, s("elementwise", [shifted], shape, fn="exp"), s.const(0.0)], shape)
    total = s("mul", [s("mean", [e0], kept, dim=[at], keepdim=True), s.const(float(L))], kept)
    total = s("clamp", [total], kept, lo=1.0, hi=None)                # the max's own exp(0) at least
    if user.op == "softmax":
        whole = s("div", [e0, total], shape)
    else:
        whole = s("sub", [shifted, s("elementwise", [total], kept, fn="log")], shape)
    _reselect(s, user.name, whole, shape, mask, at, origin(user))
    _replace(g, [user.name], s.nodes)
    return True


def _per_slice(g: Graph, user: Node, xs: str, shape, mask: str, at: int) -> bool:
    """softmax / log_softmax / a sort's values along another dim: over xs, then selected."""
    a = user.attrs
    if user.op == "sort" and (a.get("k") is not None or a.get("pick") is not None or a.get("rule") is not None
                              or a.get("dim") is None):
        return False
    s = Steps(user.name)
    whole = s(user.op, [xs], shape, **{k: v for k, v in a.items() if k != "source"})
    _reselect(s, user.name, whole, shape, mask, at, origin(user))
    _replace(g, [user.name], s.nodes)
    return True


def _scan_chain(g: Graph, user: Node, rank: int) -> Optional[Tuple[int, List[Node]]]:
    """capture's cumsum of the slices along dim d: (d, [linear]) for the
    last dim, (d, [permute, linear, permute]) swapping d and the last;
    None else."""
    from .capture_selection_mix import _triangle, permuted_cumsum
    if user.op == "linear":
        return (rank - 1, [user]) if user.shape and _triangle(user, user.shape[-1]) else None
    dims = list(user.attrs.get("dims", [])) if user.op == "permute" else []
    moved = [i for i, p in enumerate(dims) if p != i]
    if len(moved) != 2 or moved[1] != rank - 1 or dims[moved[0]] != rank - 1 or dims[rank - 1] != moved[0]:
        return None
    chain = permuted_cumsum(g, user, dims)
    return (moved[0], chain) if chain else None


def _scan(g: Graph, user: Node, xs: str, shape, mask: str, L: int, at: int) -> bool:
    """cumsum / cummax / cummin of the slices (the module docstring)."""
    rank = len(shape)
    rule = user.attrs.get("rule") if user.op == "sort" else None
    if rule in ("cummax", "cummin") and isinstance(user.attrs.get("dim"), int):
        s = Steps(user.name)
        src = xs
        if user.attrs["dim"] % rank == at:
            src = s("where", [_over(s, mask, L, rank, at), xs, _far(s, xs, shape, highest=rule == "cummin")], shape)
        whole = s("sort", [src], shape, **{k: v for k, v in user.attrs.items() if k != "source"})
        _reselect(s, user.name, whole, shape, mask, at, origin(user))
        _replace(g, [user.name], s.nodes)
        return True
    found = _scan_chain(g, user, rank)
    if found is None:
        return False
    d, chain = found
    s = Steps(chain[-1].name)
    cur = s("where", [_over(s, mask, L, rank, at), xs, s.const(0.0)], shape) if d == at else xs
    perm = list(chain[0].attrs["dims"]) if len(chain) == 3 else None
    moved = [shape[p] for p in perm] if perm else list(shape)
    if perm:
        cur = s("permute", [cur], moved, dims=perm)
    n = shape[d]
    cur = s("linear", [cur], moved, weight=np.tril(np.ones((n, n), np.float32)), bias=None)
    if perm:
        cur = s("permute", [cur], list(shape), dims=perm)
    _reselect(s, chain[-1].name, cur, shape, mask, at, origin(chain[-1]))
    _replace(g, [c.name for c in chain], s.nodes)
    return True


def _flip_join(g: Graph, user: Node, sel: Node, rank: int) -> Optional[Node]:
    """capture's flip of the slices along one dim (one-wide slices of sel
    from the last to the first, joined along that dim): the join; None
    else."""
    d = user.attrs.get("dim")
    users = g.users(user.name)
    if user.op != "slice" or not isinstance(d, int) or len(users) != 1 or users[0].op != "cat" \
            or users[0].attrs.get("dim") % rank != d % rank:
        return None
    join = users[0]
    n = len(join.inputs)
    for i, name in enumerate(join.inputs):
        part = g.node(name)
        if part.op != "slice" or part.inputs != [sel.name] or part.attrs.get("dim") != d \
                or part.attrs.get("start") != n - 1 - i or part.attrs.get("end") != n - i \
                or [u.name for u in g.users(name)] != [join.name]:
            return None
    return join if n > 1 else None


def _flip(g: Graph, user: Node, sel: Node, xs: str, shape, mask: str, L: int, at: int) -> bool:
    """flip of the slices along at or another dim (the module docstring)."""
    rank = len(shape)
    join = _flip_join(g, user, sel, rank)
    if join is None:
        return False
    d = user.attrs["dim"] % rank
    s = Steps(join.name)

    def flipped(src, size, dim):
        part = [1 if i == dim else n for i, n in enumerate(size)]
        return s("cat", [s("slice", [src], part, dim=dim, start=size[dim] - 1 - i, end=size[dim] - i)
                         for i in range(size[dim])], list(size), dim=dim)
    if d == at:
        keep = s("compare", [flipped(s("bool_to", [mask], [L], dtype="float32"), [L], 0)], [L], kind="gt",
                 scalar=0.5)
    else:
        keep = mask
    _reselect(s, join.name, flipped(xs, shape, d), shape, keep, at, origin(join))
    _replace(g, list(join.inputs) + [join.name], s.nodes)
    return True


def _view(g: Graph, user: Node, xs: str, shape, mask: str, L: int, at: int) -> bool:
    """A view keeping the count a dim of its own, spelled -1 (the module
    docstring): the view of xs with L there, picked along that dim."""
    target = user.attrs.get("target_shape")
    if user.op != "reshape" or user.attrs.get("squeeze", False) is not False or not isinstance(target, (list, tuple)) \
            or list(target).count(-1) != 1:
        return False
    j = list(target).index(-1)
    before, after = list(target[:j]), list(target[j + 1:])
    if _numel(before) != _numel(shape[:at]) or _numel(after) != _numel(shape[at + 1:]):
        return False
    out = before + [L] + after
    s = Steps(user.name)
    whole = s("reshape", [xs], out, target_shape=out)
    _reselect(s, user.name, whole, out, mask, j, origin(user))
    _replace(g, [user.name], s.nodes)
    return True


def slices_readers(g: Graph, user: Node, sel: Node) -> bool:
    """Rewrites user, a reader of unique's slices behind a dim above 1 (sel:
    a masked_select with attrs at), over the sorted tensor; False when it is
    none of the module docstring's."""
    at = sel.attrs.get("at")
    xs, mask = sel.inputs
    shape, mask_shape = g.node(xs).shape, g.node(mask).shape
    if at is None or user.inputs != [sel.name] or shape is None or mask_shape is None or len(mask_shape) != 1:
        return False
    L, rank = int(mask_shape[0]), len(shape)
    if shape[at] != L:
        return False
    if "whole" in user.attrs:
        return _whole(g, user, xs, shape, mask, L, at)
    if "reduce_max" in user.attrs:
        return _extreme(g, user, xs, shape, mask, L, at)
    if user.op == "mean" and isinstance(user.attrs.get("dim"), (list, tuple)) and user.attrs["dim"]:
        return _mean(g, user, xs, shape, mask, L, at)
    dim = user.attrs.get("dim")
    if user.op in ("softmax", "log_softmax") and isinstance(dim, int):
        return _softmax(g, user, xs, shape, mask, L, at) if dim % rank == at else \
            _per_slice(g, user, xs, shape, mask, at)
    if user.op == "sort" and user.attrs.get("rule") is None and isinstance(dim, int) and dim % rank != at:
        return _per_slice(g, user, xs, shape, mask, at)
    return _scan(g, user, xs, shape, mask, L, at) or _flip(g, user, sel, xs, shape, mask, L, at) \
        or _view(g, user, xs, shape, mask, L, at)
