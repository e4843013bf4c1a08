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
(torch's lower middle). mode, cummax and cummin of integers stay refused
(their kernels take float32 / int8 only)."""
from __future__ import annotations

from .capture_indices import int_dtype
from .capture_sort import eval_order
from .ir import Node

# orderings of an int value lowering runs (rules of their own kernels otherwise refused)
INT_RULES = (None, "median", "nanmedian")


def int_order(node: Node, by_name) -> Node:
    """node (a sort / sort_indices node of capture_sort) with attrs integer
    set to its input's integer dtype when that input is an int value; mode,
    cummax or cummin of an int value: an unsupported node whose reason
    lowering reports in one line (their kernels take float32 / int8)."""
    has = int_dtype(by_name.get(node.inputs[0])) if node.inputs else None
    if has is None:
        return node
    rule = node.attrs.get("rule")
    if rule not in INT_RULES:
        op, attrs = node.op, dict(node.attrs)
        return Node(node.name, "unsupported", list(node.inputs),
                    dict(fn=lambda x: eval_order(op, attrs, x), what=rule,
                         why=f"{rule} of {has} integers: its kernel takes float32 or int8 values only "
                             f"(sort the integers, or .float() them first)"))
    node.attrs["integer"] = has
    return node
