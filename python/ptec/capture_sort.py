"""Ordering along a dim (issue 15): torch.sort / Tensor.sort, torch.topk /
Tensor.topk, torch.kthvalue (their values and indices), torch.argsort /
Tensor.argsort and torch.msort; and the calls with a kernel of their own
(attr rule): torch.median / nanmedian (x, dim) and mode (values and
indices: aten::median.dim_values, nanmedian.dim_values, mode.values),
median(x) / nanmedian(x) without dim (a 0-d value: dim None), and cummax /
cummin (aten::cummax.out, cummin.out). Their rules are torch 1.13's where
torch's answer is deterministic (docs/aot.md).

A `sort` node is the values, attrs dim, descending and k (None: every
element, else the first k: topk, with descending = largest), pick (None,
or kthvalue's one position of the ascending order, whose dim
is then dropped unless keepdim); its int8 values are the input's own
bytes reordered, so it keeps the input's grid (quantize's PASS_THROUGH). A `sort_indices` node (same attrs) is their
int64 positions along dim, carried in the float graph as float32 like
argmax's (capture_indices): a program output as int64, or `.float()`'d.
Without a rule both lower to one aten::sort.values / topk.values call (a pick: the
topk of the pick + 1 smallest, sliced at its last), a stable sort, so
equal values keep their order as in torch's stable sort; torch leaves the
order of equal values in topk and kthvalue (and in an unstable
sort) unspecified."""
from __future__ import annotations

from typing import List, Optional

import torch

from .capture_calls import _meta_shape, _scalar_arg
from .ir import Node

SORT_TARGETS = ("sort", torch.sort)
TOPK_TARGETS = ("topk", torch.topk)
# one element of the ascending order: kthvalue's k-th smallest
PICK_TARGETS = ("kthvalue", torch.kthvalue)
# one element per row by a rule of its own kernel (aten::median.dim_values,
# nanmedian.dim_values, mode.values), and the running extremes (cummax.out, cummin.out)
RULE_TARGETS = {"median": "median", torch.median: "median", "nanmedian": "nanmedian", torch.nanmedian: "nanmedian",
                "mode": "mode", torch.mode: "mode", "cummax": "cummax", torch.cummax: "cummax",
                "cummin": "cummin", torch.cummin: "cummin"}
RUNNING = ("cummax", "cummin")


def _int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _call_args(fn: torch.fx.Node):
    """(kind, dim, descending, k, pick, keepdim) as the call spells them
    (kind a RULE_TARGETS rule for those calls), or None for a call that is
    none of these or has other arguments."""
    try:
        kind = ("sort" if fn.target in SORT_TARGETS else "topk" if fn.target in TOPK_TARGETS
                else "pick" if fn.target in PICK_TARGETS else RULE_TARGETS.get(fn.target))
    except TypeError:         # an unhashable target is none of them
        return None
    if kind is None:
        return None
    a = lambda i, key, default=None: _scalar_arg(fn, i, key, default)   # noqa: E731
    if kind in RUNNING:
        # cummax(x, dim): every element, its running extreme
        if set(fn.kwargs) - {"dim"} or len(fn.args) > 2 or a(1, "dim") is None:
            return None
        return kind, a(1, "dim"), False, None, None, False
    if kind in ("median", "nanmedian", "mode"):
        # median(x, dim[, keepdim]), mode(x[, dim=-1[, keepdim]]); median(x)
        # alone is one tensor (order_call_node)
        dim = a(1, "dim", -1 if kind == "mode" else None)
        if set(fn.kwargs) - {"dim", "keepdim"} or len(fn.args) > 3 or dim is None:
            return None
        return kind, dim, False, None, None, a(2, "keepdim", False)
    if kind == "sort":
        if set(fn.kwargs) - {"dim", "descending", "stable"} or len(fn.args) > 3:
            return None
        return kind, a(1, "dim", -1), a(2, "descending", False), None, None, False
    if kind == "topk":
        # sorted=False leaves the order to the implementation: ptec's is sorted
        if set(fn.kwargs) - {"k", "dim", "largest", "sorted"} or len(fn.args) > 5 \
                or not isinstance(a(4, "sorted", True), bool):
            return None
        return kind, a(2, "dim", -1), a(3, "largest", True), a(1, "k"), None, False
    # kthvalue(x, k[, dim[, keepdim]])
    if set(fn.kwargs) - {"k", "dim", "keepdim"} or len(fn.args) > 4 or not _int(a(1, "k")):
        return None
    return kind, a(2, "dim", -1), False, None, a(1, "k") - 1, a(3, "keepdim", False)


def order_of(fn: torch.fx.Node) -> Optional[dict]:
    """The attrs (dim, descending, k, pick, keepdim, rule) of a sort, topk,
    kthvalue, median(dim), nanmedian(dim), mode, cummax or cummin call whose
    values and indices ptec computes: k None for every element, pick None
    or the position in the ascending order of the one element kept
    (kthvalue); rule None (sort / topk) or the RULE_TARGETS rule of its
    own kernel. None for anything else (then the call and its elements stay
    refused by name)."""
    if not fn.args or not isinstance(fn.args[0], torch.fx.Node):
        return None
    spelled, shape = _call_args(fn), _meta_shape(fn.args[0])
    if spelled is None or shape is None:
        return None
    kind, dim, descending, k, pick, keepdim = spelled
    rule = kind if kind in RULE_TARGETS.values() else None
    if not _int(dim) or not isinstance(descending, bool) or not isinstance(keepdim, bool) \
            or (k is not None and not _int(k)):
        return None
    rank = max(len(shape), 1)
    if not -rank <= dim < rank:
        return None
    n = shape[dim % rank] if shape else 1
    if rule in ("median", "nanmedian", "mode") and n == 0:
        return None                   # torch refuses them over no elements
    if (k is not None and not 0 <= k <= n) or (pick is not None and not 0 <= pick < n):
        return None
    if pick is not None:
        k = pick + 1
    return dict(dim=dim % rank, descending=descending, k=k, pick=pick, keepdim=keepdim, rule=rule)


def order_node(name: str, src: str, attrs: dict, indices: bool) -> Node:
    """The values (sort) or indices (sort_indices) node of order_of's call."""
    return Node(name, "sort_indices" if indices else "sort", [src], dict(attrs))


def order_call_node(fn: torch.fx.Node, ins: List[str]) -> Optional[Node]:
    """torch.argsort(x, dim, descending) / x.argsort(...): the indices of a
    sort; torch.msort(x): the values of a sort along dim 0; torch.median(x)
    / x.median() / torch.nanmedian(x) / x.nanmedian() without dim: the
    whole tensor's lower middle, a 0-d value (dim None: the row is every
    element in row-major order). None for anything else."""
    try:
        argsort, msort = fn.target in ("argsort", torch.argsort), fn.target is torch.msort
        whole = RULE_TARGETS.get(fn.target) if len(fn.args) == 1 and not fn.kwargs else None
    except TypeError:
        return None
    if not (argsort or msort or whole in ("median", "nanmedian")) or not fn.args \
            or not isinstance(fn.args[0], torch.fx.Node):
        return None
    shape = _meta_shape(fn.args[0])
    if shape is None:
        return None
    if whole is not None:
        if 0 in shape:
            return None               # torch's median of nothing is NaN: no kernel computes it
        return order_node(fn.name, ins[0], dict(dim=None, descending=False, k=None, pick=None, keepdim=False,
                                                rule=whole), False)
    if msort:
        if len(fn.args) != 1 or fn.kwargs or not shape:
            return None
        return order_node(fn.name, ins[0], dict(dim=0, descending=False, k=None, pick=None, keepdim=False,
                                                rule=None), False)
    if set(fn.kwargs) - {"dim", "descending", "stable"} or len(fn.args) > 3:
        return None
    dim, descending = _scalar_arg(fn, 1, "dim", -1), _scalar_arg(fn, 2, "descending", False)
    rank = max(len(shape), 1)
    if not _int(dim) or not isinstance(descending, bool) or not -rank <= dim < rank:
        return None
    return order_node(fn.name, ins[0], dict(dim=dim % rank, descending=descending, k=None, pick=None,
                                            keepdim=False, rule=None), True)


def eval_order(op: str, attrs: dict, x: torch.Tensor) -> torch.Tensor:
    """The float graph's value of a sort / sort_indices node (indices as
    float32, as every value of the float graph). The stable sort is the one
    the kernel computes; topk's and kthvalue's are torch's own."""
    dim, k, pick, rule = attrs["dim"] if x.dim() else 0, attrs["k"], attrs.get("pick"), attrs.get("rule")
    if rule is not None and attrs["dim"] is None:
        return getattr(torch, rule)(x)              # median(x) / nanmedian(x): values only
    if rule is not None:
        values, indices = getattr(torch, rule)(x, dim, **({} if rule in RUNNING else dict(keepdim=attrs["keepdim"])))
    elif pick is not None:
        values, indices = torch.kthvalue(x, pick + 1, dim, attrs["keepdim"])
    elif k is None:
        values, indices = torch.sort(x, dim=dim, descending=attrs["descending"], stable=True)
    else:
        values, indices = torch.topk(x, k, dim, attrs["descending"], True)
    return indices.float() if op == "sort_indices" else values
