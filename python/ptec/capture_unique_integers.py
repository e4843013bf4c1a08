"""torch.unique / unique_consecutive (and the Tensor methods) of int64 /
int32 values (issue 15: `x.round().long().unique()`, ids from argmax),
with any of return_inverse and return_counts, without dim: a stand-in
(capture_unique_counts' STAND_INS call it for an integer input) in integer
ops ptec lowers exactly (capture_int_sort's sort of integers,
capture_int_math, capture_bool's integer comparisons, int64 sums), never
quantized.

x flattened, v [n] (any n >= 1). unique sorts v (torch.sort of the
integers, stable: aten::sort.values of int64 / int32, O(n log n), exact for
any value); unique_consecutive keeps v's order. Then as
capture_unique_counts for float values: the values are the sorted ones
where each differs from the one before (a marked masked_select of int64 /
int32, its length following the values, copied as it is); the counts the
run lengths; the inverse the running count of run starts less one, taken
back to x's order through the inverse of the sort's permutation (the
positions of a sort of the sort's positions: element i's place in the
order, an int64 take), reshaped to x's shape. Values keep x's dtype,
counts and inverse are int64, as torch.

unique of a selection x[m]: capture_unique_selection. Left refused
(capture_nonzero, one line): dim=, sorted=False, bool. int16 / uint8 / int8: capture_unique_narrow."""
from __future__ import annotations

import torch


def integer_unique(input, ordered: bool, return_inverse: bool, return_counts: bool, dtype=None):
    """dtype (capture_unique_narrow): the values' narrow dtype, input their
    int64 copy; the sorted values are cast into it before they are picked."""
    from .capture_unique_counts import COMPACT, _VALUES, _counts, _edges, _numel, _select, _shape
    shape = _shape(input)
    if shape is None or _numel(shape) < 1:
        return None
    n = _numel(shape)
    flat = input.reshape(-1)
    order = None
    if ordered and n > 1:
        v, order = torch.sort(flat, stable=True)                 # order[r]: the element at place r
    else:
        v = flat
    first, last = _edges(v)
    if dtype is not None:
        v = v.to(dtype)                                          # exact: the input's own values
    values = _select(v, first)
    out = [values]
    if return_inverse:
        group = first.long().cumsum(0) - 1                      # the sorted element's unique value
        if order is not None:
            place = torch.sort(order, stable=True)[1]           # element i's place in the order
            group = group[place]
        out.append(group.reshape(shape))
    if return_counts:
        counts, starts = _counts(first, last, with_starts=True)
        if all(isinstance(p, torch.fx.Proxy) for p in (values, v, starts, counts)):
            values.node.meta[COMPACT] = (v.node, starts.node, counts.node.args[1])
            values.node.meta[_VALUES] = True
        out.append(counts)
    return tuple(out) if len(out) > 1 else values
