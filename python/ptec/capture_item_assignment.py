"""Item assignment in a forward (issue 15): y[..., 0:2] = expr,
y[:, 1] = 0.0, y[mask] = v, y[:, [1, 3]] = v.

Python's `y[idx] = v` writes y in place and binds nothing, so fx records no
node. The tracer's proxy records it as the out-of-place value the write
leaves in y, built from calls capture already lowers, and ends it with one
`assigned(y, new)` node marked as a write of y (capture_in_place,
capture_view_writes): y's later readers read the node (y a view: its base
is written back, the earlier views re-derived; the writes it cannot model
are refused); `drop_markers` then reads `new` in its place.

- an index known at trace time (ints, slices, Ellipsis, None, lists and
  constant index tensors): the flat positions it selects are a constant,
  and the value goes there by index_put on the flattened y (a number:
  masked_fill with the constant 0/1 mask of those positions);
- a bool mask of y's shape computed in the program: a number by
  masked_fill (a one-element tensor by torch.where(mask, v, y)), a tensor
  of the selection's length by y.masked_scatter(mask, v);
- a mask of the leading dims (whole rows), the mask's own selection as the
  value (y[m] = y[m] * 2) and integer positions computed in the program
  (y[0, i] = v): capture_item_assignment_computed."""
from __future__ import annotations

import numbers
import operator

import torch
import torch.fx

from .capture_in_place import _MARK

_SPELLING = "[...] ="
_WRITTEN = "ptec_written_positions"     # node.meta: (shape, flat positions) of a constant-index write
# node.meta: (the flat positions of a constant-index write, the tensors it reads element by element into them)
READS = "ptec_assignment_reads"


def assigned(y, new):
    """The value y holds after an item assignment: `new` (a marker node)."""
    return new


def _refuse(why: str):
    raise TypeError(f"x[idx] = v writes x in place, which ptec traces for an index known at trace time, one "
                    f"bool mask of x's shape or leading dims, or computed int positions, not {why}: write "
                    "x = x.index_put((i, j), v), x.masked_fill(mask, v) or torch.where(mask, v, x)")


def _constant(tracer, index):
    """index with its traced parts replaced by their fixed values, or None
    when one depends on the input."""
    def fixed(a):
        if isinstance(a, torch.fx.Proxy):
            if not tracer.fixed(a.node):
                raise LookupError
            return tracer.value(a.node)
        return a
    try:
        return torch.fx.node.map_aggregate(index, fixed)
    except LookupError:
        return None


def _read_here(piece, y: torch.fx.Node, index, augmented: torch.fx.Node) -> bool:
    """piece is y[index], read by the augmented write alone: `y[i] += v`,
    whose write into the view y[i] is this assignment (a view read
    elsewhere, or another index, stays a write capture_in_place judges)."""
    if not isinstance(piece, torch.fx.Node) or piece.target is not operator.getitem or piece.args[0] is not y:
        return False
    here = torch.fx.node.map_aggregate(index, lambda a: a.node if isinstance(a, torch.fx.Proxy) else a)
    try:
        same = bool(piece.args[1] == here)
    except (RuntimeError, TypeError, ValueError):      # a tensor in the index: not compared
        return False
    return same and set(piece.users) == {augmented}


def record(y: torch.fx.Proxy, index, value) -> None:
    """Records `y[index] = value` (see the module's docstring)."""
    tracer = y.tracer
    if not tracer.known(y.node):
        _refuse("a tensor whose value is unknown at trace time")
    shadow = tracer.value(y.node)
    if not isinstance(shadow, torch.Tensor):
        _refuse("a write into a non-tensor")
    number = isinstance(value, numbers.Number)
    if not number and not isinstance(value, (torch.fx.Proxy, torch.Tensor)):
        _refuse(f"a value of type {type(value).__name__}")
    augmented = value.node if isinstance(value, torch.fx.Proxy) else None
    reads = [augmented] if augmented is not None else []
    if augmented is not None and augmented.meta.get(_MARK) and _read_here(augmented.args[0], y.node, index, augmented):
        del augmented.meta[_MARK]       # y[i] += v: Python's y[i] = y[i] + v, the add written back here
        reads = [a for a in augmented.args[1:] if isinstance(a, torch.fx.Node)]     # torch: y[i].add_(v)
    fixed = _constant(tracer, index)
    if fixed is not None:
        positions = torch.arange(shadow.numel()).view(shadow.shape)[fixed]
        if number:
            mask = torch.zeros(shadow.numel(), dtype=torch.bool)
            mask[positions.reshape(-1)] = True
            new = y.masked_fill(mask.view(shadow.shape), value)
        else:
            values = value.expand(positions.shape).reshape(-1)
            if isinstance(value, torch.fx.Proxy) and tracer.known(value.node) and \
                    tracer.value(value.node).dtype != shadow.dtype:
                values = values.to(shadow.dtype)
            new = y.reshape(-1).index_put((positions.reshape(-1),), values).reshape(shadow.shape)
    elif _computed(tracer, y, shadow, index, value) is not None:
        new = _computed.last
    else:
        if not isinstance(index, torch.fx.Proxy) or not tracer.known(index.node) \
                or tracer.value(index.node).dtype != torch.bool:
            _refuse("an index computed in the program that is not a bool mask")
        if tuple(tracer.value(index.node).shape) != tuple(shadow.shape):
            _refuse(f"a bool mask of shape {list(tracer.value(index.node).shape)}, not the tensor's "
                    f"{list(shadow.shape)}")
        one = number or (isinstance(value, torch.Tensor) and value.numel() == 1) or \
            (isinstance(value, torch.fx.Proxy) and tracer.known(value.node) and tracer.value(value.node).numel() == 1)
        if number:
            new = y.masked_fill(index, value)
        elif one:
            new = torch.where(index, value.reshape(()), y)
        else:
            new = y.masked_scatter(index, value)
    node = tracer.create_proxy("call_function", assigned, (y, new), {})
    node.node.meta[_MARK] = _SPELLING
    if fixed is not None:       # the written positions, for the reads of others (drop_markers)
        node.node.meta[_WRITTEN] = (tuple(shadow.shape), frozenset(positions.reshape(-1).tolist()))
        node.node.meta[READS] = (positions, reads)
    _write_shadow(tracer, y, index, value)


def _computed(tracer, y, shadow, index, value):
    """capture_item_assignment_computed's write (a mask of the leading dims,
    the mask's own selection as the value, computed integer positions), or
    None; kept as _computed.last."""
    from .capture_item_assignment_computed import computed_position_write, masked_write
    _computed.last = masked_write(tracer, y, shadow, index, value) if isinstance(index, torch.fx.Proxy) else None
    if _computed.last is None:
        _computed.last = computed_position_write(tracer, y, shadow, index, value)
    return _computed.last


def _write_shadow(tracer, y, index, value) -> None:
    """y's shadow value written as torch writes y, for the later calls'
    shadow values (and its views', which share its bytes as in torch)."""
    def real(a):
        if isinstance(a, torch.fx.Proxy):
            if not tracer.known(a.node):
                raise LookupError
            return tracer.value(a.node)
        return a
    try:
        with torch.no_grad():
            tracer.value(y.node)[torch.fx.node.map_aggregate(index, real)] = real(value)
    except (LookupError, RuntimeError, IndexError, TypeError):
        pass


def drop_markers(gm: torch.fx.GraphModule) -> None:
    """Each assigned(y, new) node read as `new` (after capture_in_place)."""
    changed = False
    for fn in list(gm.graph.nodes):
        if fn.op == "call_function" and fn.target is operator.getitem:
            _read_before_writes(fn)
    for fn in list(gm.graph.nodes):
        if fn.op == "call_function" and fn.target is assigned:
            fn.replace_all_uses_with(fn.args[1])
            gm.graph.erase_node(fn)
            changed = True
    if changed:
        gm.recompile()


def _read_before_writes(fn: torch.fx.Node) -> None:
    """A constant selection y[idx] of a written y that reads none of the
    written positions reads the value before the write (the same numbers):
    YOLOv5's y[..., 2:4] after y[..., 0:2] = xy keeps its own range, which
    the written xy would widen for int8 (step 0.17 on sigmoids)."""
    source, idx = fn.args[0], fn.args[1]
    found = []
    torch.fx.node.map_aggregate(idx, lambda a: found.append(a) if isinstance(a, torch.fx.Node) else a)
    while not found and isinstance(source, torch.fx.Node) and source.target is assigned and _WRITTEN in source.meta:
        shape, written = source.meta[_WRITTEN]
        try:
            read = torch.arange(int(torch.tensor(shape).prod())).view(shape)[idx].reshape(-1).tolist()
        except (IndexError, RuntimeError, TypeError, ValueError):
            return
        if written.intersection(read):
            return
        source = source.args[0]
        fn.replace_input_with(fn.args[0], source)
