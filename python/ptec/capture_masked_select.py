"""Selection by a bool mask (issue 15): `x[mask]` with a computed bool mask
of x's shape, and torch.masked_select(x, mask) / x.masked_select(mask) (mask
broadcast with x). The result's length depends on the mask's values, so
the node `masked_select` (inputs x, mask) lowers to aten::masked_select.out
into a bound-dynamic tensor: planned at the broadcast numel, its real size
set by the kernel at run time. Every other kernel checks static shapes when
the program loads, so no kernel may read the selection: `through_selections`
rewrites what can follow one into the same math over x, before the
selection or without it:

- an element-wise op moves before the selection, f(x[m]) = f(x)[m] (its
  other operands one-element values or selections by the same mask of
  tensors of x's shape: x[m] + y[m] = (x + y)[m]);
- a whole-tensor sum is the sum of where(m, x, 0); a mean that sum over the
  mask's count (0 / 0 for an empty selection: NaN, as torch);
- a whole-tensor max is the max of where(m, x, min(x)), min likewise (an
  empty selection gives x's min (max), where torch raises an error);
- views, layers acting on each row, sort / topk / kthvalue, cat and
  reductions over dims: capture_selection_rows;
- scans, softmax, var / std, positions, the median and flip along the
  first dim: capture_selection_mix;
- whole norms, sums, products and positions, diff, logcumsumexp, slices
  with a step or bounds of both signs, a flatten merging rows:
  capture_selection_more.

What is left reading a selection is refused naming it (`refuse_consumers`)."""
from __future__ import annotations

from typing import List, Optional

import numpy as np
import torch

from .ir import Graph, Node, origin, written


def _float_node(a, by_name) -> bool:
    meta = a.meta.get("tensor_meta") if isinstance(a, torch.fx.Node) else None
    return by_name.get(getattr(a, "name", None)) is not None and getattr(meta, "dtype", None) == torch.float32


def _selectable_node(a, by_name) -> bool:
    """A float32 value, or an int64 / int32 one (an input, an argmax, integer
    arithmetic): the kernel copies its bytes, exact."""
    meta = a.meta.get("tensor_meta") if isinstance(a, torch.fx.Node) else None
    return _float_node(a, by_name) or (by_name.get(getattr(a, "name", None)) is not None
                                       and getattr(meta, "dtype", None) in (torch.int64, torch.int32))


def _integer_readers(fn: torch.fx.Node, x) -> bool:
    """An int64 / int32 selection runs as a program output; its readers are
    refused naming the selection (no kernel after it may see its varying
    length, and the rewrites over x are float math: `a.float()[m]` runs).
    False (not this module's) for unique's marked int64 selections
    (capture_unique_counts) and a selection unique reads (which refuses or
    runs it, capture_nonzero / capture_unique_selection)."""
    if _float_node(x, {x.name: x}):
        return True
    from .capture_calls import refuse_call
    from .capture_unique_counts import _FLAG
    if fn.meta.get(_FLAG) or any(u.target in (torch.unique, torch.unique_consecutive, "unique",
                                              "unique_consecutive") for u in fn.users):
        return False
    if any(u.op != "output" for u in fn.users):
        from .capture_nms import refuse_readers
        refuse_readers(fn)                      # torchvision's nms result: named as the user's call
        refuse_call(fn, "a selection of integer values (its length depends on the values) runs as a program "
                    "output only, of int64 / int32 values (a narrow dtype's is cast after it); return it and "
                    "compute on it outside the program, or select a.float()")
    return True


def _bool_node(a, by_name) -> bool:
    meta = a.meta.get("tensor_meta") if isinstance(a, torch.fx.Node) else None
    return by_name.get(getattr(a, "name", None)) is not None and getattr(meta, "dtype", None) == torch.bool


def mask_index_nodes(fn: torch.fx.Node, mask, by_name, at: int = 0) -> Optional[List[Node]]:
    """x[mask] for a bool mask of x's own shape (torch.masked_select of the
    two) or of x's leading dims (attrs rows: the rows where it is set, each
    of x's other dims whole); x[:, mask] (at whole dims before the mask, at
    > 0) the rows form over the dims after them; None for any other mask."""
    from .capture_calls import _meta_shape     # capture_calls imports this module's importer
    x = fn.args[0]
    if not (_selectable_node(x, by_name) and _bool_node(mask, by_name)):
        return None
    shape, mask_shape = _meta_shape(x), _meta_shape(mask)
    if shape is None or mask_shape is None or not mask_shape \
            or list(shape[at:at + len(mask_shape)]) != list(mask_shape):
        return None
    if not _integer_readers(fn, x):
        return None
    if at:
        return [Node(fn.name, "masked_select", [x.name, mask.name], dict(rows=True, at=at))]
    rows = len(mask_shape) < len(shape)
    return [Node(fn.name, "masked_select", [x.name, mask.name], dict(rows=True) if rows else {})]


def masked_select_nodes(fn: torch.fx.Node, by_name) -> Optional[List[Node]]:
    """torch.masked_select(x, mask) and x.masked_select(mask) of a float x
    and a bool mask; None for any other call."""
    if fn.op not in ("call_function", "call_method") or fn.target not in (torch.masked_select, "masked_select") \
            or len(fn.args) != 2 or fn.kwargs:
        return None
    x, mask = fn.args
    if not (_selectable_node(x, by_name) and _bool_node(mask, by_name)):
        return None
    if not _integer_readers(fn, x):
        return None
    return [Node(fn.name, "masked_select", [x.name, mask.name])]


def bound(x_shape, mask_shape, rows: bool = False) -> List[int]:
    """The selection's planned sizes, the most it can give: the broadcast
    numel, or with rows every row of x [numel of the mask, x's other dims]."""
    if rows:
        return [_numel(mask_shape)] + list(x_shape[len(mask_shape):])
    return [_numel(torch.broadcast_shapes(torch.Size(x_shape), torch.Size(mask_shape)))]


# element-wise ops of the float graph (ir.eval_node): each output element a
# function of the operands' elements at the same (broadcast) position
_ELEMENTWISE_OPS = {"clamp", "add", "sub", "mul", "div", "minimum", "maximum", "binary_math", "identity",
                    "elementwise", "where", "bool_to",
                    # a bool selection (x[m] > 1) is only a mask of another selection by m
                    # (capture_selection_rows.select_within); refuse_consumers refuses the rest
                    "compare", "logical"}


def _elementwise(n: Node) -> bool:
    from .ir import UNARY
    return n.op in _ELEMENTWISE_OPS or n.op in UNARY


def _numel(shape) -> int:
    return int(np.prod(shape)) if shape else 1


# ops whose value is not a function of their inputs and attributes alone
_NOT_PURE = {"input", "state", "state_write", "unsupported", "random_dropout", "random_fractional_pick"}


def _same_attr(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype == b.dtype \
            and np.array_equal(a, b)
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def _same_mask(g: Graph, a: str, b: str, depth: int = 0) -> bool:
    """The same bool value: one node, or two nodes of one op and attributes
    computing it from the same values (x[x > 0] + y[x > 0] traces x > 0
    twice; `b[b[:, 0] > 0]` written twice traces the view, the slice and
    the comparison twice)."""
    if a == b:
        return True
    na, nb = g.node(a), g.node(b)
    if depth > 16 or na.op != nb.op or na.op in _NOT_PURE or len(na.inputs) != len(nb.inputs):
        return False
    attrs = [{k: v for k, v in n.attrs.items() if k != "source"} for n in (na, nb)]
    return attrs[0].keys() == attrs[1].keys() and all(_same_attr(v, attrs[1][k]) for k, v in attrs[0].items()) \
        and all(_same_mask(g, x, y, depth + 1) for x, y in zip(na.inputs, nb.inputs))


def _same_before_and_after(shape, sel: Node) -> bool:
    """An operand of this shape broadcasts with the selection as with x: one
    element, or (a rows selection [R, rest...]) a shape over rest only."""
    if _numel(shape) == 1:
        return True
    rest = list(sel.shape[1:])
    if not (len(shape) <= len(rest) or (len(shape) == len(rest) + 1 and shape[0] == 1)):
        return False
    try:
        return list(torch.broadcast_shapes(torch.Size(shape), torch.Size(sel.shape))) == list(sel.shape)
    except RuntimeError:
        return False


def _one_along_at(shape, sel: Node) -> bool:
    """An operand of a selection behind whole dims (attrs at) broadcasts the
    same before and after it when its size along `at` is 1 (its other dims
    are x's, kept whole)."""
    at = sel.attrs.get("at")
    if at is None or _numel(shape) == 1:
        return True
    padded = [1] * (len(sel.shape) - len(shape)) + list(shape)
    return len(padded) == len(sel.shape) and padded[at] == 1


def _same_rows(a, b, mask_shape, rows: bool) -> bool:
    """Two tensors selected by one mask give rows that pair up: equal
    shapes, or (rows) the mask's dims first in both and the other dims
    broadcasting (x[m] - x[m].mean(1, keepdim=True))."""
    if list(a) == list(b):
        return True
    k = len(mask_shape)
    if not rows or len(a) != len(b) or list(a[:k]) != list(mask_shape) or list(b[:k]) != list(mask_shape):
        return False
    try:
        torch.broadcast_shapes(torch.Size(a[k:]), torch.Size(b[k:]))
        return True
    except RuntimeError:
        return False


def _moved_inputs(g: Graph, user: Node, sel: Node) -> Optional[List[str]]:
    """user's inputs with each selection by sel's mask replaced by the
    selected tensor; None when an operand is neither such a selection nor
    one that broadcasts the same before and after."""
    x_shape = g.node(sel.inputs[0]).shape
    moved = []
    for name in user.inputs:
        other = g.node(name)
        if other.op == "masked_select" and _same_mask(g, other.inputs[1], sel.inputs[1]) \
                and other.attrs.get("rows") == sel.attrs.get("rows") and other.attrs.get("at") == sel.attrs.get("at") \
                and _same_rows(g.node(other.inputs[0]).shape, x_shape, g.node(sel.inputs[1]).shape,
                               bool(sel.attrs.get("rows"))):
            moved.append(other.inputs[0])
        elif other.op != "masked_select" and other.shape is not None and _same_before_and_after(other.shape, sel) \
                and _one_along_at(other.shape, sel):
            moved.append(name)
        else:
            return None
    return moved


def _move_elementwise(g: Graph, user: Node, sel: Node) -> bool:
    """f(x[m]) -> f(x)[m]: user computed over the selected tensors, then
    selected under user's name (its users and outputs stay)."""
    moved = _moved_inputs(g, user, sel)
    if moved is None:
        return False
    # shapes for the rest of this pass (infer_shapes redoes them after it)
    shape = list(torch.broadcast_shapes(*(torch.Size(g.node(i).shape) for i in moved)))
    whole = Node(f"{user.name}__whole", user.op, moved, dict(user.attrs), shape=shape)
    select = Node(user.name, "masked_select", [whole.name, sel.inputs[1]],
                  dict(source=origin(user), **({"rows": True} if sel.attrs.get("rows") else {}),
                       **({"at": sel.attrs["at"]} if sel.attrs.get("at") is not None else {})),
                  shape=list(sel.shape))
    at = g.nodes.index(user)
    g.nodes[at:at + 1] = [whole, select]
    return True


class Steps:
    """New nodes named after the node they stand for, in order (with their
    shape when known: capture_selection_rows reads shapes before
    infer_shapes redoes them)."""

    def __init__(self, prefix: str):
        self.prefix, self.nodes = prefix, []

    def __call__(self, op, inputs, shape=None, **attrs) -> str:
        self.nodes.append(Node(f"{self.prefix}__sel{len(self.nodes)}", op, list(inputs), attrs,
                               shape=list(shape) if shape is not None else None))
        return self.nodes[-1].name

    def const(self, value) -> str:
        value = np.asarray(value, np.float32)
        return self("constant", [], shape=value.shape, value=value)


def _reduce_whole(g: Graph, first: Node, sel: Node, error) -> bool:
    """A whole-tensor reduction (capture_rewrites._whole_reduction's steps,
    marked on its first node) of a selection, redone over the selected
    tensor; False for any other node."""
    from .capture_calls import _reduce_max_nodes
    from .capture_selection_more import bool_fill
    from .capture_selection_rows import flat, over_rows
    kind, steps = first.attrs.get("whole", (None, None))
    if kind is None or first.inputs != [sel.name]:
        return False
    x, mask = sel.inputs
    n = sel.shape[0]
    end = steps[-1]
    s = Steps(end)
    x_numel, mask_numel = _numel(g.node(x).shape), _numel(g.node(mask).shape)
    if sel.attrs.get("rows"):   # x viewed as its rows [L, rest...], the mask [L, 1...] to broadcast over them
        x, shape, M, rows = flat(s, g, sel)
        mask = over_rows(s, M, rows, len(shape))
        n = x_numel
    elif kind == "mean" and mask_numel != n:
        raise error(f"operator not supported: {origin(first)} averages {origin(sel)}'s result with a mask "
                    "broadcast to x: the count needs the mask of x's own shape (mask.expand_as(x))")
    if kind in ("sum", "mean"):
        total = s("mean", [s("reshape", [s("where", [mask, x, s.const(0.0)])], target_shape=[1, n])],
                  dim=[1], keepdim=False)
        if kind == "mean":     # mean over the selected = mean(where(m, x, 0)) / mean(m)
            share = s("mean", [s("reshape", [s("bool_to", [mask], dtype="float32")], target_shape=[1, mask_numel])],
                      dim=[1], keepdim=False)
            total = s("div", [total, share])
        else:
            total = s("mul", [total, s.const(float(n))])
        s("reshape", [total], target_shape=[])
    else:
        # the unselected take x's opposite extreme, which never wins
        kept = s("reshape", [s("where", [mask, x, bool_fill(s, g, sel, x, [x_numel], highest=kind == "min")])],
                 target_shape=[1, n])
        s.nodes.extend(_reduce_max_nodes(f"{end}__selext", kept, [1, n], [1], False, kind == "min"))
        s("reshape", [s.nodes[-1].name], target_shape=[])
    s.nodes[-1].name = end
    s.nodes[-1].attrs["source"] = origin(g.node(end))
    at = g.nodes.index(first)
    g.nodes = g.nodes[:at] + s.nodes + [m for m in g.nodes[at:] if m.name not in steps]
    return True


def through_selections(g: Graph, error) -> bool:
    """Rewrites the nodes reading a selection (the module docstring, and
    capture_selection_rows'); True when any changed, after which the
    graph's shapes need inferring again."""
    from . import capture_selection_rows as rows
    from .capture_selection_mix import mix_rows
    from .capture_selection_more import more_rows
    from .capture_selection_positional import positional_rows
    from .capture_selection_row_output import row_output
    from .capture_unique_slices import slices_readers
    changed = False
    progress = True
    while progress:
        progress = False
        for sel in [n for n in g.nodes if n.op == "masked_select"]:
            for user in g.users(sel.name):
                if sel.attrs.get("at") is not None:
                    # unique's slices behind a dim above 1 (capture_unique_counts): element-wise readers, and
                    # reductions / layers over their dim or acting per slice (capture_unique_slices)
                    if slices_readers(g, user, sel) or (_elementwise(user) and _move_elementwise(g, user, sel)):
                        progress = changed = True
                        break
                    continue
                if more_rows(g, user, sel) or _reduce_whole(g, user, sel, error) or rows.reduce_rows(g, user, sel) \
                        or (_elementwise(user) and _move_elementwise(g, user, sel)) \
                        or any(rewrite(g, user, sel) for rewrite in (row_output, rows.select_within,
                                                                      rows.move_rowwise, rows.split_rows,
                                                                      rows.join_rows, rows.order_rows, mix_rows,
                                                                      positional_rows)):
                    progress = changed = True
                    break
            if progress:
                break
    if changed:
        used = {i for n in g.nodes for i in n.inputs} | set(g.outputs)
        g.nodes = [n for n in g.nodes if n.op != "masked_select" or n.name in used]
    return changed


def _integer_picks(g: Graph, n) -> bool:
    """A comparison of integers picked (unique's `counts > 1`,
    capture_counts_readers): exact, a bool output."""
    made = g.node(n.inputs[0])
    return made.op == "compare" and bool(made.attrs.get("integer"))


def refuse_consumers(g: Graph, error) -> None:
    """Raises `error` naming the first node that takes a selection's
    variable-length result as an input (through_selections moved or
    rewrote those it can)."""
    for n in g.nodes:
        if n.op != "masked_select":
            continue
        if n.attrs.get("at") is not None and g.users(n.name):
            raise error(f"operator not supported: {origin(g.users(n.name)[0])}: it reads unique's slices along a "
                        "dim behind a dim above 1 (or x[:, mask]'s selection, alike), whose count follows the "
                        "values inside the result ([..., k, "
                        "...]): they run as a program output, through element-wise ops (with numbers or "
                        "values of size 1 along that dim), sum / mean / amax / amin / max / min and softmax / "
                        "log_softmax over any dims, a sort's values along another dim, cumsum / cummax / cummin "
                        "and flip along any dim, and views keeping the count a dim of its own, spelled -1 "
                        "(docs/aot.md)")
        if g.node(n.inputs[0]).op in ("compare", "logical") and not _integer_picks(g, n):
            raise error(f"operator not supported: {origin(n)} selects bool values (a comparison of a selection), "
                        "which ptec runs only as the mask of a selection by the same mask "
                        "(x[m][x[m] > 1]); return the float selection and compare outside the program")
        users = g.users(n.name)
        if users and users[0].op == "reshape" and "squeeze" in users[0].attrs and users[0].attrs["squeeze"] is None:
            raise error(f"operator not supported: {origin(users[0])} of {origin(n)}'s result, whose length "
                        "depends on the values: its rank would too (one element gives a 0-d tensor), and a "
                        "program's outputs have a fixed rank; squeeze a dim other than 0 or return the selection")
        if users and users[0].op == "reshape" and len(users[0].shape or []) == len(n.shape) + 1 \
                and (users[0].shape or [0])[0] == 1:
            raise error(f"operator not supported: {origin(users[0])} of {origin(n)}'s result, whose length "
                        "depends on the values, gives it a bound-dynamic dim other than the first: ptec runs "
                        "that for a 1-D selection viewed [1, ..., 1, n] or a row selection viewed [1, n, C] as a "
                        "program output, and for the readers of that view which are readers of the selection "
                        "(element-wise ops, reductions and layers along it, giving one varying dim after ones "
                        "only: docs/aot.md); return the selection and reshape outside the program")
        if users:
            raise error(f"operator not supported: {origin(users[0])} takes {written(n)}'s result, whose length "
                        "depends on the values, in a way ptec cannot compute over x: a bool-mask selection can "
                        "be a program output or go into element-wise ops, layers acting on each of its rows, "
                        "views keeping or splitting its rows, sort / topk / kthvalue, cat, sum / mean / max / "
                        "min, and along its first dim cumsum / cumprod / cummax / cummin, softmax / "
                        "log_softmax, var / std, argmax / argmin, sort / topk / kthvalue / cummax / median "
                        "indices, median, flip, diff, logcumsumexp, slices (with a step or bounds of both signs "
                        "too), views into groups, logsumexp, quantile, mode, unique, and whole norm / nansum / "
                        "prod / count_nonzero / dot / argmax / argmin, and unsqueeze(0) of a 1-D selection "
                        "as a program output (docs/aot.md); "
                        "torch.where(mask, x, 0) keeps the shape and runs")
