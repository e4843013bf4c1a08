"""x.index_put((i, j, ...), v, accumulate=True) with several index tensors,
some computed in the program (or program inputs): the indexed leading dims
viewed as one, the position the int64 linear index
((i mod s0) * s1 + (j mod s1)) * ... (exact in int64; torch's negative
positions from the end wrapped first), so the single-index form runs it
(capture_scatter.computed_copy: index_add's sum by any int64 index, an
embedding of the identity's rows). An index outside -s..s-1, where torch
raises, makes the linear index the flat size, which that lookup fails the
run on (no made-up position). A plain write (accumulate False) by several
computed indices is refused in one line, as the single-index path refuses
one whose positions could repeat: torch leaves a position written twice
unspecified, and nothing here shows the pairs distinct."""
from __future__ import annotations

import operator
from typing import Callable

import torch
import torch.fx

from .capture_calls import refuse_call

_INTS = (torch.int64, torch.int32)


def _meta(node):
    meta = node.meta.get("tensor_meta") if isinstance(node, torch.fx.Node) else None
    return meta if meta is not None and hasattr(meta, "shape") else None


def _from_input(node: torch.fx.Node) -> bool:
    """node depends on a program input (a constant index is capture_scatter's table of pairs)."""
    seen, todo = set(), [node]
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        if n.op == "placeholder":
            return True
        todo.extend(n.all_input_nodes)
    return False


def _parts(fn: torch.fx.Node):
    """(self, indices, values, accumulate) of an index_put call, else None."""
    if fn.op == "call_method" and fn.target == "index_put":
        pass
    elif fn.op == "call_function" and fn.target in (torch.index_put, torch.Tensor.index_put):
        pass
    else:
        return None
    names = ("self", "indices", "values", "accumulate")
    if len(fn.args) > len(names) or set(fn.kwargs) - set(names[1:]):
        return None
    got = dict(zip(names, fn.args))
    got.update(fn.kwargs)
    return got.get("self"), got.get("indices"), got.get("values"), got.get("accumulate", False)


def _rewrite(gm: torch.fx.GraphModule, fn: torch.fx.Node) -> bool:
    parts = _parts(fn)
    if parts is None:
        return False
    x, indices, values, accumulate = parts
    if not isinstance(indices, (tuple, list)) or len(indices) < 2 or not isinstance(x, torch.fx.Node) \
            or not all(isinstance(i, torch.fx.Node) for i in indices) \
            or not any(_from_input(i) for i in indices):
        return False
    metas = [_meta(i) for i in indices]
    xm, vm = _meta(x), _meta(values)
    if xm is None or any(m is None or m.dtype not in _INTS for m in metas) or len(indices) > len(xm.shape):
        return False
    if not isinstance(accumulate, bool):
        return False
    if not accumulate:
        refuse_call(fn, "its index tensors are computed in the program, so two of their positions may be one "
                        "element, which torch writes in an unspecified order; ptec runs several computed "
                        "index tensors with accumulate=True (their sum)")
    if vm is None:
        return False                    # a number: capture_scatter's own refusal names it
    shape = [int(s) for s in xm.shape]
    lead, rest = shape[:len(indices)], shape[len(indices):]
    try:
        picked = list(torch.broadcast_shapes(*[m.shape for m in metas]))
        torch.broadcast_shapes(tuple(vm.shape), tuple(picked + rest))
    except RuntimeError:
        return False                    # torch raises: the call stays, refused as it is
    total = 1
    for s in lead:
        total *= s
    e = 1
    for s in picked:
        e *= s
    g = gm.graph
    with g.inserting_before(fn):
        def call(target, *args):
            return g.call_function(target, args)

        def method(name, *args):
            return g.call_method(name, args)
        lin, ok = None, None
        for i, s in zip(indices, lead):
            # torch's position from the end (-s..-1) wrapped; anything outside -s..s-1 flagged
            wrapped = call(operator.add, i, call(operator.mul, method("long", call(operator.lt, i, 0)), s))
            inside = call(operator.eq, wrapped, call(torch.clamp, wrapped, 0, s - 1))
            ok = inside if ok is None else call(operator.and_, ok, inside)
            lin = wrapped if lin is None else call(operator.add, call(operator.mul, lin, s), wrapped)
        good = method("long", ok)
        # an index torch raises on: the flat size, a position the one-hot lookup fails the run on
        lin = call(operator.add, call(operator.mul, lin, good), call(operator.mul, call(operator.sub, 1, good), total))
        lin = method("reshape", lin, [e])
        if list(vm.shape) != picked + rest:
            values = method("expand", values, picked + rest)
        flat_values = method("reshape", values, [e] + rest)
        flat = method("reshape", x, [total] + rest)
        put = g.call_method("index_put", (flat, (lin,), flat_values), {"accumulate": True})
        put.meta["stack_trace"] = fn.meta.get("stack_trace")
        out = method("reshape", put, shape)
    fn.replace_all_uses_with(out)
    g.erase_node(fn)
    return True


def flatten_index_puts(gm: torch.fx.GraphModule, propagate: Callable[[], None]) -> None:
    """Rewrite index_put by several computed index tensors in gm's graph;
    propagate() records the new nodes' shapes when any was made."""
    changed = False
    for fn in list(gm.graph.nodes):
        changed |= _rewrite(gm, fn)
    if changed:
        gm.graph.lint()
        gm.recompile()
        propagate()
