"""Ordering along a dim (issue 15): torch.sort / Tensor.sort, torch.topk /
Tensor.topk (their values and indices), torch.argsort / Tensor.argsort and
torch.msort.

A `sort` node is the values, attrs dim, descending and k (None: every
element, else the first k: topk, with descending = largest); its int8
values are the input's own bytes reordered, so it keeps the input's grid
(quantize's PASS_THROUGH). A `sort_indices` node (same attrs) is their
int64 positions along dim, carried in the float graph as float32 like
argmax's (capture_indices): a program output as int64, or `.float()`'d.
Both lower to one aten::sort.values / topk.values call, a stable sort, so
equal values keep their order as in torch's stable sort; torch leaves the
order of equal values in topk (and in an unstable sort) unspecified."""
from __future__ import annotations

from typing import List, Optional

import torch

from .capture_calls import _meta_shape, _scalar_arg
from .ir import Node

SORT_TARGETS = ("sort", torch.sort)
TOPK_TARGETS = ("topk", torch.topk)
ORDER_OPS = ("sort", "sort_indices")


def _int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def order_of(fn: torch.fx.Node):
    """(dim, descending, k, shape) of a sort or topk call whose values and
    indices ptec computes, k None for a sort; None for anything else (then
    the call and its elements stay refused by name)."""
    try:
        is_sort, is_topk = fn.target in SORT_TARGETS, fn.target in TOPK_TARGETS
    except TypeError:         # an unhashable target is neither
        return None
    if not (is_sort or is_topk) or not fn.args or not isinstance(fn.args[0], torch.fx.Node):
        return None
    shape = _meta_shape(fn.args[0])
    if shape is None:
        return None
    if is_sort:
        if set(fn.kwargs) - {"dim", "descending", "stable"} or len(fn.args) > 3:
            return None
        dim, descending, k = _scalar_arg(fn, 1, "dim", -1), _scalar_arg(fn, 2, "descending", False), None
    else:
        # sorted=False leaves the order to the implementation: ptec's is sorted
        if set(fn.kwargs) - {"k", "dim", "largest", "sorted"} or len(fn.args) > 5 \
                or not isinstance(_scalar_arg(fn, 4, "sorted", True), bool):
            return None
        k, dim, descending = _scalar_arg(fn, 1, "k"), _scalar_arg(fn, 2, "dim", -1), _scalar_arg(fn, 3, "largest", True)
    if not _int(dim) or not isinstance(descending, bool) or (k is not None and not _int(k)):
        return None
    rank = max(len(shape), 1)
    if not -rank <= dim < rank:
        return None
    n = shape[dim % rank] if shape else 1
    if k is not None and not 0 <= k <= n:
        return None
    return dim % rank, descending, k, tuple(shape)


def order_node(name: str, src: str, order, indices: bool) -> Node:
    """The values (sort) or indices (sort_indices) node of order_of's call."""
    dim, descending, k, _ = order
    return Node(name, "sort_indices" if indices else "sort", [src], dict(dim=dim, descending=descending, k=k))


def order_call_node(fn: torch.fx.Node, ins: List[str]) -> Optional[Node]:
    """torch.argsort(x, dim, descending) / x.argsort(...): the indices of a
    sort; torch.msort(x): the values of a sort along dim 0. None for
    anything else."""
    try:
        argsort, msort = fn.target in ("argsort", torch.argsort), fn.target is torch.msort
    except TypeError:
        return None
    if not (argsort or msort) or not fn.args or not isinstance(fn.args[0], torch.fx.Node):
        return None
    shape = _meta_shape(fn.args[0])
    if shape is None:
        return None
    if msort:
        if len(fn.args) != 1 or fn.kwargs or not shape:
            return None
        return order_node(fn.name, ins[0], (0, False, None, tuple(shape)), False)
    if set(fn.kwargs) - {"dim", "descending", "stable"} or len(fn.args) > 3:
        return None
    dim, descending = _scalar_arg(fn, 1, "dim", -1), _scalar_arg(fn, 2, "descending", False)
    rank = max(len(shape), 1)
    if not _int(dim) or not isinstance(descending, bool) or not -rank <= dim < rank:
        return None
    return order_node(fn.name, ins[0], (dim % rank, descending, None, tuple(shape)), True)


def eval_order(op: str, attrs: dict, x: torch.Tensor) -> torch.Tensor:
    """The float graph's value of a sort / sort_indices node (indices as
    float32, as every value of the float graph). The stable sort is the one
    the kernel computes; topk's is torch's own."""
    dim, k = attrs["dim"] if x.dim() else 0, attrs["k"]
    if k is None:
        values, indices = torch.sort(x, dim=dim, descending=attrs["descending"], stable=True)
    else:
        values, indices = torch.topk(x, k, dim, attrs["descending"], True)
    return indices.float() if op == "sort_indices" else values
