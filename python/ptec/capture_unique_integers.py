"""torch.unique / unique_consecutive (and the Tensor methods) of int64 /
int32 values (issue 15: `x.round().long().unique()`, ids from argmax),
with any of return_inverse and return_counts, without dim: a stand-in
(capture_unique_counts' STAND_INS call it for an integer input) in integer
ops ptec lowers exactly (capture_int_math, capture_bool's integer
comparisons, int64 sums), never quantized.

x flattened, v [n] (n <= 256 elements: the [n, n] tables below are int64).
unique sorts v without a sort kernel (ptec's sorts take float values): an
element's place in the stable ascending order is how many elements are
below it plus how many equal ones come before it (an [n, n] comparison
summed: every place 0..n-1 once); the sorted values are the one-hot of
the places times v, summed (exact int64 products and sums of one term;
int32 values are widened, then cast back). unique_consecutive keeps v's
order. Then as capture_unique_counts for float values: the values are the
sorted ones where each differs from the one before (a marked masked_select
of int64 / int32, its length following the values, copied as it is);
the counts the run lengths; the inverse the running count of run starts
less one, taken back to x's order through the same one-hot, reshaped to
x's shape. Values keep x's dtype, counts and inverse are int64, as
torch.

Left refused (capture_nonzero, one line): dim=, sorted=False, more than
256 elements, other integer dtypes (uint8, int8, int16), bool."""
from __future__ import annotations

import torch

LIMIT = 256                 # elements: the [n, n] int64 tables


def integer_unique(input, ordered: bool, return_inverse: bool, return_counts: bool):
    from .capture_unique_counts import COMPACT, _VALUES, _counts, _edges, _numel, _select, _shape
    shape = _shape(input)
    if shape is None or not 1 <= _numel(shape) <= LIMIT:
        return None
    n = _numel(shape)
    flat = input.reshape(-1)
    onehot = None
    if ordered and n > 1:
        wide = flat.long() if flat.dtype == torch.int32 else flat
        row, col = wide.unsqueeze(1), wide.unsqueeze(0)         # [i, j]: v_i against v_j
        at = torch.arange(n)
        before = at.unsqueeze(0) < at.unsqueeze(1)              # j < i
        place = ((col < row) | ((col == row) & before)).long().sum(1)
        onehot = (place.unsqueeze(0) == at.unsqueeze(1)).long()  # [place r, element i]
        v = (onehot * col).sum(1)
        if flat.dtype == torch.int32:
            v = v.int()
    else:
        v = flat
    first, last = _edges(v)
    values = _select(v, first)
    out = [values]
    if return_inverse:
        group = first.long().cumsum(0) - 1                      # the sorted element's unique value
        if onehot is not None:
            group = (onehot * group.unsqueeze(1)).sum(0)        # element i's: at its place
        out.append(group.reshape(shape))
    if return_counts:
        counts, starts = _counts(first, last, with_starts=True)
        if all(isinstance(p, torch.fx.Proxy) for p in (values, v, starts, counts)):
            values.node.meta[COMPACT] = (v.node, starts.node, counts.node.args[1])
            values.node.meta[_VALUES] = True
        out.append(counts)
    return tuple(out) if len(out) > 1 else values
