"""Item assignments whose index is computed in the program, beyond one bool
mask of the tensor's shape (issue 15; capture_item_assignment records the
rest): each becomes a torch.where / masked_fill over the whole tensor, which
ptec lowers with a computed bool:

* a bool mask of the leading dims (`y[y[..., 0] > 0.5] = 0.0`: whole rows):
  the mask as 0/1 floats viewed with trailing dims of 1, compared with
  0.5, broadcast over the rest; the value a number, one element, or a
  tensor broadcasting to one row (the trailing dims);
* the same selection read and written (`y[m] = y[m] * 2`, also
  `y[m] = torch.sigmoid(z[m]) + 1`): the value's element-wise ops replayed
  on the whole tensors the selection read (their shape y's), so the write
  is torch.where(m, f(y), y) (the mask spelled again counts as the same:
  the same ops on the same values);
* integer positions computed in the program (`y[0, i] = 9.0`, i an
  argmax): the mask of the positions is a constant table of the indexed
  dim's coordinates (-1 where the constant part of the index does not
  select) equal to i mod the dim's size; the value a number, one element,
  or a tensor of the selection's shape when the other indexed dims are
  whole (`:` or ...).

Anything else stays capture_item_assignment's one-line refusal."""
from __future__ import annotations

import numbers
import operator
from typing import Optional

import torch
import torch.fx
import torch.nn.functional as F

from .capture_in_place import _MARK

# element-wise calls a selection's value may go through (their other operands numbers or one-element values)
_ELEMENTWISE_FUNCTIONS = {operator.add, operator.sub, operator.mul, operator.truediv, operator.neg, operator.pow,
                          torch.add, torch.sub, torch.mul, torch.div, torch.neg, torch.abs, torch.exp, torch.log,
                          torch.sigmoid, torch.tanh, torch.relu, torch.sqrt, torch.clamp, torch.square, torch.pow,
                          torch.sin, torch.cos, F.relu}
_ELEMENTWISE_METHODS = {"add", "sub", "mul", "div", "neg", "abs", "exp", "log", "sigmoid", "tanh", "relu", "sqrt",
                        "clamp", "clip", "square", "pow", "sin", "cos"}


def _value(tracer, a):
    return tracer.value(a.node) if isinstance(a, torch.fx.Proxy) and tracer.known(a.node) else None


def _one(tracer, value) -> bool:
    if isinstance(value, numbers.Number):
        return True
    v = value if isinstance(value, torch.Tensor) else _value(tracer, value)
    return isinstance(v, torch.Tensor) and v.numel() == 1


def _where(tracer, mask, value, y):
    """y with value where mask (broadcast); a number by masked_fill."""
    if isinstance(value, numbers.Number):
        return y.masked_fill(mask, value)
    if _one(tracer, value):
        value = value.reshape(())
    return torch.where(mask, value, y)


def _writes_between(a: torch.fx.Node, b: torch.fx.Node) -> bool:
    """Some node between a and b (graph order) may write a tensor in place
    (an item assignment, y.add_(...), y += ...): the same call spelled
    before and after it may read different values."""
    first, last = (a, b) if any(n is b for n in _after(a)) else (b, a)
    for n in _after(first):
        if n is last:
            return False
        if n.meta.get(_MARK) or (n.op in ("call_method", "call_function") and
                                 str(getattr(n.target, "__name__", n.target)).endswith("_")):
            return True
    return True


def _after(node: torch.fx.Node):
    n = node.next
    while n.op != "root":
        yield n
        n = n.next


def _same(a, b) -> bool:
    """a and b are one value: the same node, or the same call of the same
    values with no write between them."""
    if isinstance(a, torch.fx.Node) or isinstance(b, torch.fx.Node):
        if a is b:
            return True
        if not (isinstance(a, torch.fx.Node) and isinstance(b, torch.fx.Node)) or a.op != b.op \
                or a.op not in ("call_function", "call_method") or a.target != b.target \
                or len(a.args) != len(b.args) or set(a.kwargs) != set(b.kwargs) or _writes_between(a, b):
            return False
        return all(_same(x, z) for x, z in zip(a.args, b.args)) and all(_same(a.kwargs[k], b.kwargs[k])
                                                                         for k in a.kwargs)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, z) for x, z in zip(a, b))
    if type(a) is not type(b) or isinstance(a, torch.Tensor):
        return False
    try:
        return bool(a == b)
    except (RuntimeError, TypeError, ValueError):
        return False


def _replayed(tracer, node: torch.fx.Node, mask: torch.fx.Node, shape):
    """node's value computed on the whole tensors its selections by `mask`
    read (a proxy), or None where it is not element-wise in them."""
    if node.op == "call_function" and node.target is operator.getitem and len(node.args) == 2 \
            and isinstance(node.args[0], torch.fx.Node) and _same(node.args[1], mask):
        whole = node.args[0]
        if not tracer.known(whole) or tuple(tracer.value(whole).shape) != tuple(shape):
            return None
        return torch.fx.Proxy(whole, tracer)
    elementwise = (node.op == "call_function" and node.target in _ELEMENTWISE_FUNCTIONS) or \
        (node.op == "call_method" and node.target in _ELEMENTWISE_METHODS)
    if not elementwise:
        return None
    found = []

    def operand(a):
        if not isinstance(a, torch.fx.Node):
            return a
        got = _replayed(tracer, a, mask, shape)
        if got is not None:
            found.append(a)
            return got
        if tracer.known(a) and isinstance(tracer.value(a), torch.Tensor) and tracer.value(a).numel() == 1:
            return torch.fx.Proxy(a, tracer)          # one element: broadcasts alike over a selection or y
        raise LookupError
    try:
        args = tuple(operand(a) for a in node.args)
        kwargs = {k: operand(v) for k, v in node.kwargs.items()}
    except LookupError:
        return None
    if not found:
        return None
    return tracer.create_proxy(node.op, node.target, args, kwargs)


def _drop_unused(graph: torch.fx.Graph, node) -> None:
    """The value's own nodes, read by nothing once replayed (the selection's
    variable length would reach no layer): dropped."""
    if isinstance(node, torch.fx.Node) and not node.users and node.op in ("call_function", "call_method"):
        inputs = list(node.all_input_nodes)
        graph.erase_node(node)
        for a in inputs:
            _drop_unused(graph, a)


def masked_write(tracer, y, shadow, index, value) -> Optional[torch.fx.Proxy]:
    """y[mask] = value for a computed bool mask (see the docstring), or None."""
    mask_value = _value(tracer, index)
    if mask_value is None or mask_value.dtype != torch.bool:
        return None
    mshape, shape = tuple(mask_value.shape), tuple(shadow.shape)
    k = len(mshape)
    if k == 0 or k > len(shape) or shape[:k] != mshape:
        return None
    whole = None
    if isinstance(value, torch.fx.Proxy) and not _one(tracer, value):
        whole = _replayed(tracer, value.node, index.node, shape)
    if k == len(shape):
        if whole is None:
            return None                                # capture_item_assignment's own forms
        new = torch.where(index, whole, y)
        _drop_unused(tracer.graph, value.node)
        return new
    rows = index.float().reshape(list(mshape) + [1] * (len(shape) - k)) > 0.5
    if whole is not None:
        new = torch.where(rows, whole, y)
        _drop_unused(tracer.graph, value.node)
        return new
    if isinstance(value, torch.fx.Proxy) and not _one(tracer, value):
        v = _value(tracer, value)
        if v is not None and v.dim() <= len(shape) - k and tuple(torch.broadcast_shapes(v.shape, shape[k:])) == \
                tuple(shape[k:]):
            return torch.where(rows, value, y)         # one row's value, broadcast over the selected rows
        return None
    if isinstance(value, torch.Tensor) and not _one(tracer, value):
        if value.dim() > len(shape) - k or tuple(torch.broadcast_shapes(value.shape, shape[k:])) != tuple(shape[k:]):
            return None
        return torch.where(rows, value, y)
    return _where(tracer, rows, value, y)


def computed_position_write(tracer, y, shadow, index, value) -> Optional[torch.fx.Proxy]:
    """y[..., i, ...] = value with i a computed integer (see the docstring), or None."""
    parts = list(index) if isinstance(index, tuple) else [index]
    computed = [p for p in parts if isinstance(p, torch.fx.Proxy)]
    if not computed:
        return None
    for p in computed:
        v = _value(tracer, p)
        if v is None or v.dim() != 0 or v.dtype not in (torch.int64, torch.int32, torch.int16, torch.int8,
                                                        torch.uint8):
            return None
    if any(p is not Ellipsis and p is not None and not isinstance(p, (int, slice, torch.fx.Proxy)) or
           isinstance(p, bool) for p in parts):
        return None
    shape = list(shadow.shape)
    dots = [k for k, p in enumerate(parts) if p is Ellipsis]      # by identity: == of a proxy is a traced call
    if len(dots) > 1 or any(p is None for p in parts):
        return None                                    # new dims: not written here
    if dots:
        parts[dots[0]:dots[0] + 1] = [slice(None)] * (len(shape) - len(parts) + 1)
    if len(parts) > len(shape):
        return None
    parts += [slice(None)] * (len(shape) - len(parts))
    template = tuple(slice(None) if isinstance(p, torch.fx.Proxy) else p for p in parts)
    try:
        selected = torch.zeros(shape, dtype=torch.bool)
        selected[template] = True
    except (IndexError, TypeError):
        return None
    mask = None
    for d, p in enumerate(parts):
        if not isinstance(p, torch.fx.Proxy):
            continue
        view = [1] * len(shape)
        view[d] = shape[d]
        coords = torch.arange(shape[d]).reshape(view).expand(shape)
        # i or i - n (torch's negative position from the end); -(n + 1), which no position is, where not selected
        away = torch.full(shape, -(shape[d] + 1), dtype=torch.long)
        hit = (torch.where(selected, coords, away) == p) | (torch.where(selected, coords - shape[d], away) == p)
        mask = hit if mask is None else mask & hit
    if isinstance(value, numbers.Number) or _one(tracer, value):
        return _where(tracer, mask, value, y)
    # a tensor of the selection's shape: the indexed dims as 1 (the others whole)
    if any(isinstance(p, slice) and p != slice(None) for p in parts):
        return None
    v = value if isinstance(value, torch.Tensor) else _value(tracer, value)
    kept = [shape[d] for d, p in enumerate(parts) if isinstance(p, slice)]
    if v is None or v.dim() > len(kept) or tuple(torch.broadcast_shapes(v.shape, kept)) != tuple(kept):
        return None
    full = value.expand(kept).reshape([shape[d] if isinstance(p, slice) else 1 for d, p in enumerate(parts)])
    return torch.where(mask, full, y)
