"""Ordering of integer values (issue 15): torch.sort / argsort / msort /
topk / kthvalue / median (with or without dim) / nanmedian of int64 /
int32 values of the program (capture_indices.int_dtype: `x.long()`, an
argmax, `(x > 0).sum(-1)`, integer arithmetic on them).

capture_sort makes the `sort` / `sort_indices` nodes as for a float value;
int_order marks a `sort` node whose input is an int value with attrs
integer (its dtype: torch's values keep the input's dtype), so the values
are an int value of the program too (int_dtype) and integer math may read
them. Lowering (backends/cortex_m/lowering.py _ordered) sorts the integer
tensor itself: aten::sort.values / topk.values of int64 / int32 (exact;
equal values keep their order, torch's stable sort); a median is the pick
at (n - 1) // 2 of the stable ascending order, as the median kernel's rule
(torch's lower middle). mode, cummax and cummin of integers run the
float32 rule kernels on each row's dense ranks, the values gathered at the
positions picked (backends/cortex_m/lowering_int_rules.py): torch's rules
exactly, for any integer."""
from __future__ import annotations

from .capture_indices import int_dtype
from .ir import Node


def int_order(node: Node, by_name) -> Node:
    """node (a sort / sort_indices node of capture_sort) with attrs integer
    set to its input's integer dtype when that input is an int value."""
    has = int_dtype(by_name.get(node.inputs[0])) if node.inputs else None
    if has is not None:
        node.attrs["integer"] = has
    return node
