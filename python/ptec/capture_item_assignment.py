"""Item assignment in a forward (issue 15): y[..., 0:2] = expr,
y[:, 1] = 0.0, y[mask] = v, y[:, [1, 3]] = v.

Python's `y[idx] = v` writes y in place and binds nothing, so fx records no
node. The tracer's proxy records it as the out-of-place value the write
leaves in y, built from calls capture already lowers, and ends it with one
`assigned(y, new)` node marked as a write of y (capture_in_place): that
analysis refuses the writes it cannot model (a view of y read later, a
buffer) and makes y's later readers read the node; `drop_markers` then
reads `new` in its place.

- an index known at trace time (ints, slices, Ellipsis, None, lists and
  constant index tensors): the flat positions it selects are a constant,
  and the value goes there by index_put on the flattened y (a number:
  torch.where with the constant 0/1 mask of those positions);
- a bool mask computed in the program: a number (or one-element tensor)
  by torch.where(mask, v, y), a tensor of the selection's length by
  y.masked_scatter(mask, v) (a mask of y's shape)."""
from __future__ import annotations

import numbers

import torch
import torch.fx

_SPELLING = "[...] ="


def assigned(y, new):
    """The value y holds after an item assignment: `new` (a marker node)."""
    return new


def _refuse(why: str):
    from .capture_scatter import SETITEM_REFUSAL
    raise TypeError(f"{SETITEM_REFUSAL} ({why})")


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


def record(y: torch.fx.Proxy, index, value) -> None:
    """Records `y[index] = value` (see the module's docstring)."""
    tracer = y.tracer
    if not tracer.known(y.node):
        _refuse("the written tensor's value is unknown at trace time")
    shadow = tracer.value(y.node)
    if not isinstance(shadow, torch.Tensor):
        _refuse("the written value is not a tensor")
    number = isinstance(value, numbers.Number)
    if not number and not isinstance(value, (torch.fx.Proxy, torch.Tensor)):
        _refuse(f"a value of type {type(value).__name__}")
    fixed = _constant(tracer, index)
    if fixed is not None:
        positions = torch.arange(shadow.numel()).view(shadow.shape)[fixed]
        if number:
            mask = torch.zeros(shadow.numel(), dtype=torch.bool)
            mask[positions.reshape(-1)] = True
            new = torch.where(mask.view(shadow.shape), torch.tensor(value, dtype=shadow.dtype), y)
        else:
            values = value.expand(positions.shape).reshape(-1)
            if isinstance(value, torch.fx.Proxy) and tracer.known(value.node) and \
                    tracer.value(value.node).dtype != shadow.dtype:
                values = values.to(shadow.dtype)
            new = y.reshape(-1).index_put((positions.reshape(-1),), values).reshape(shadow.shape)
    else:
        if not isinstance(index, torch.fx.Proxy) or not tracer.known(index.node) \
                or tracer.value(index.node).dtype != torch.bool:
            _refuse("an index computed in the program that is not one bool mask")
        mask_shape = tuple(tracer.value(index.node).shape)
        if mask_shape != tuple(shadow.shape[:len(mask_shape)]):
            _refuse(f"a mask of shape {list(mask_shape)} for a tensor of shape {list(shadow.shape)}")
        mask = index.reshape(mask_shape + (1,) * (shadow.dim() - len(mask_shape)))
        one = number or (isinstance(value, torch.Tensor) and value.numel() == 1) or \
            (isinstance(value, torch.fx.Proxy) and tracer.known(value.node) and tracer.value(value.node).numel() == 1)
        if one:
            v = torch.tensor(value, dtype=shadow.dtype) if number else value.reshape(())
            new = torch.where(mask, v, y)
        elif mask_shape == tuple(shadow.shape):
            new = y.masked_scatter(mask, value)
        else:
            _refuse("a tensor value with a mask of fewer dims than the tensor")
    node = tracer.create_proxy("call_function", assigned, (y, new), {})
    from .capture_in_place import _MARK
    node.node.meta[_MARK] = _SPELLING
    _write_shadow(tracer, y, index, value)


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
        if fn.op == "call_function" and fn.target is assigned:
            fn.replace_all_uses_with(fn.args[1])
            gm.graph.erase_node(fn)
            changed = True
    if changed:
        gm.recompile()
