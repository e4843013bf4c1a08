"""One element of a call that returns several views, as the call that
makes that element alone (issue 15): torch.hsplit / vsplit / dsplit /
tensor_split(x, ...)[k] as torch.narrow(x, dim, start, length) (a slice),
torch.meshgrid(a, b, ...)[k] as operand k viewed along its own dim and
expanded to the grid (copies), torch.broadcast_tensors(a, b, ...)[k] as
operand k expanded to the pieces' shape. capture then lowers those calls.

The fx graph is changed before capture reads it: each getitem of such a
call becomes the new nodes (with their traced shapes), and the call goes
once nothing reads it whole (the tracer gives a tuple of known length as
its getitems, so `torch.cat(t)` and a tuple returned whole read pieces).
An element of no length, or arguments other than numbers stay as they
are and are refused by name."""
from __future__ import annotations

import operator
from typing import List, Optional, Tuple

import torch
import torch.fx

_SPLIT_DIM = {"hsplit": None, "vsplit": 0, "dsplit": 2, "tensor_split": None}


def _name(fn: torch.fx.Node) -> Optional[str]:
    if fn.op == "call_method" and isinstance(fn.target, str):
        return fn.target
    name = getattr(fn.target, "__name__", None) if fn.op == "call_function" else None
    homes = (torch, torch._C._VariableFunctions)
    return name if name and any(getattr(h, name, None) is fn.target for h in homes) else None


def _shape(fn) -> Optional[List[int]]:
    meta = fn.meta.get("tensor_meta") if isinstance(fn, torch.fx.Node) else None
    return [int(s) for s in meta.shape] if meta is not None and hasattr(meta, "shape") else None


def _ints(v):
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    if isinstance(v, (list, tuple)) and all(isinstance(i, int) and not isinstance(i, bool) for i in v):
        return list(v)
    return None


def split_bounds(name: str, shape, args, kwargs) -> Optional[Tuple[int, List[Tuple[int, int]]]]:
    """(dim, [(start, end) of each piece]) of hsplit / vsplit / dsplit /
    tensor_split of a tensor of `shape`, by sections (an int) or indices."""
    rank = len(shape)
    if name == "tensor_split":
        if set(kwargs) - {"indices_or_sections", "sections", "indices", "tensor_indices_or_sections", "dim"}:
            return None
        how = args[0] if args else next((kwargs[k] for k in ("indices_or_sections", "sections", "indices",
                                                              "tensor_indices_or_sections") if k in kwargs), None)
        dim = args[1] if len(args) > 1 else kwargs.get("dim", 0)
    else:
        if kwargs or len(args) != 1:
            return None
        how, dim = args[0], _SPLIT_DIM[name]
        dim = (1 if rank > 1 else 0) if dim is None else dim
    how = _ints(how)
    if how is None or not isinstance(dim, int) or isinstance(dim, bool) or not rank:
        return None
    dim %= rank
    n = shape[dim]
    if isinstance(how, int):
        if how < 1:
            return None
        sizes = [n // how + (1 if k < n % how else 0) for k in range(how)]
        cuts, at = [], 0
        for size in sizes[:-1]:
            at += size
            cuts.append(at)
    else:
        cuts = how
    # python slicing of the indices: a negative one counts from the end, past the end clamps
    edges = [0] + [min(max(c + n if c < 0 else c, 0), n) for c in cuts] + [n]
    return dim, [(a, max(a, b)) for a, b in zip(edges, edges[1:])]


def _meta(shape):
    """fx meta of a float tensor of `shape`, as ShapeProp writes it."""
    from torch.fx.passes.shape_prop import _extract_tensor_metadata
    return {"tensor_meta": _extract_tensor_metadata(torch.empty(shape)), "type": torch.Tensor}


def _split_element(graph, call, item, dim, bounds):
    start, end = bounds[item.args[1]]
    if end <= start:
        from .ir import UnsupportedOperator
        home = "Tensor." if call.op == "call_method" else "torch."
        raise UnsupportedOperator(f"operator not supported: {call.name} ({home}{_name(call)})[{item.args[1]}]: "
                                  "an empty piece, a result ptec does not run")
    with graph.inserting_before(item):
        new = graph.call_function(torch.narrow, (call.args[0], dim, start, end - start))
    new.meta = dict(item.meta)
    return new


def _grid_element(graph, call, item, indexing):
    tensors = list(call.args[0]) if len(call.args) == 1 and isinstance(call.args[0], (list, tuple)) \
        else list(call.args)
    out, k = _shape(item), item.args[1]
    if not -len(tensors) <= k < len(tensors):
        return None
    k %= len(tensors)
    if out is None or not all(isinstance(t, torch.fx.Node) and _shape(t) is not None and len(_shape(t)) <= 1
                              for t in tensors):
        return None
    # indexing "xy": the grid's first two dims swapped
    at = {0: 1, 1: 0}.get(k, k) if indexing == "xy" and len(tensors) > 1 else k
    lay = [1] * len(out)
    lay[at] = out[at]
    with graph.inserting_before(item):
        view = graph.call_method("reshape", (tensors[k], tuple(lay)))
        new = graph.call_method("expand", (view, tuple(out)))
    view.meta, new.meta = _meta(lay), dict(item.meta)
    return new


def _broadcast_element(graph, call, item):
    """torch.broadcast_tensors(a, b, ...)[k]: operand k expanded to the
    traced shape of the pieces."""
    tensors, out, k = list(call.args), _shape(item), item.args[1]
    if call.kwargs or out is None or not -len(tensors) <= k < len(tensors) \
            or not isinstance(tensors[k % len(tensors)], torch.fx.Node):
        return None
    with graph.inserting_before(item):
        new = graph.call_method("expand", (tensors[k % len(tensors)], tuple(out)))
    new.meta = dict(item.meta)
    return new


def elements_alone(gm: torch.fx.GraphModule) -> None:
    """Each getitem of a split, meshgrid or broadcast_tensors call as the
    nodes that make its element alone; the call dropped once nothing else
    reads it."""
    graph, changed = gm.graph, False
    for call in list(graph.nodes):
        name = _name(call) if call.op in ("call_function", "call_method") else None
        if name not in (*_SPLIT_DIM, "meshgrid", "broadcast_tensors") or not call.args:
            continue
        items = [u for u in call.users if u.op == "call_function" and u.target is operator.getitem
                 and isinstance(u.args[1], int) and not isinstance(u.args[1], bool)]
        if name == "meshgrid":
            indexing = call.kwargs.get("indexing") or "ij"          # torch 1.13's default, with a warning
            if set(call.kwargs) - {"indexing"} or indexing not in ("ij", "xy"):
                continue
            make = lambda item: _grid_element(graph, call, item, indexing)     # noqa: E731
        elif name == "broadcast_tensors":
            make = lambda item: _broadcast_element(graph, call, item)      # noqa: E731
        else:
            shape = _shape(call.args[0])
            found = split_bounds(name, shape, call.args[1:], call.kwargs) if shape is not None else None
            if found is None:
                continue
            make = lambda item: _split_element(graph, call, item, *found)     # noqa: E731
        for item in items:
            try:
                new = make(item)
            except (IndexError, ImportError, RuntimeError):
                new = None                      # an index out of range: torch's own error
            if new is not None:
                item.replace_all_uses_with(new)
                graph.erase_node(item)
                changed = True
        if not call.users:
            graph.erase_node(call)
    if changed:
        gm.recompile()
