"""Selection by a bool mask (issue 15): `x[mask]` with a computed bool mask
of x's shape, and torch.masked_select(x, mask) / x.masked_select(mask) (mask
broadcast with x). The result's length depends on the mask's values, so
the node `masked_select` (inputs x, mask) lowers to aten::masked_select.out
into a bound-dynamic tensor: planned at the broadcast numel, its real size
set by the kernel at run time. That only works for a program output (every
other kernel checks static shapes when the program loads), so a consumer
of the result is refused naming it (`refuse_consumers`)."""
from __future__ import annotations

from typing import List, Optional

import torch

from .ir import Graph, Node, origin


def _float_node(a, by_name) -> bool:
    meta = a.meta.get("tensor_meta") if isinstance(a, torch.fx.Node) else None
    return by_name.get(getattr(a, "name", None)) is not None and getattr(meta, "dtype", None) == torch.float32


def _bool_node(a, by_name) -> bool:
    meta = a.meta.get("tensor_meta") if isinstance(a, torch.fx.Node) else None
    return by_name.get(getattr(a, "name", None)) is not None and getattr(meta, "dtype", None) == torch.bool


def mask_index_nodes(fn: torch.fx.Node, mask, by_name) -> Optional[List[Node]]:
    """x[mask] for a bool mask of x's own shape (torch.masked_select of the
    two); None for any other mask (of fewer dims it selects rows, whose
    result is not one flat list)."""
    from .capture_calls import _meta_shape     # capture_calls imports this module's importer
    x = fn.args[0]
    if not (_float_node(x, by_name) and _bool_node(mask, by_name)):
        return None
    shape = _meta_shape(x)
    if shape is None or shape != _meta_shape(mask):
        return None
    return [Node(fn.name, "masked_select", [x.name, mask.name])]


def masked_select_nodes(fn: torch.fx.Node, by_name) -> Optional[List[Node]]:
    """torch.masked_select(x, mask) and x.masked_select(mask) of a float x
    and a bool mask; None for any other call."""
    if fn.op not in ("call_function", "call_method") or fn.target not in (torch.masked_select, "masked_select") \
            or len(fn.args) != 2 or fn.kwargs:
        return None
    x, mask = fn.args
    if not (_float_node(x, by_name) and _bool_node(mask, by_name)):
        return None
    return [Node(fn.name, "masked_select", [x.name, mask.name])]


def bound(x_shape, mask_shape) -> int:
    """The most elements the selection can give: the broadcast numel."""
    n = 1
    for d in torch.broadcast_shapes(torch.Size(x_shape), torch.Size(mask_shape)):
        n *= int(d)
    return n


def refuse_consumers(g: Graph, error) -> None:
    """Raises `error` naming the first node that takes a selection's
    variable-length result as an input."""
    for n in g.nodes:
        if n.op != "masked_select":
            continue
        users = g.users(n.name)
        if users:
            raise error(f"operator not supported: {origin(users[0])} takes {origin(n)}'s result, whose length "
                        "depends on the values: a bool-mask selection can only be a program output "
                        "(torch.where(mask, x, 0) keeps the shape and runs)")
