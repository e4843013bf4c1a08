"""torch.unique (sorted) and unique_consecutive of a selection `x[m]` / `torch.masked_select(x, m)`
(m a bool value of x's shape, x of fixed shape: float32, int64 or int32;
int16 / uint8 / int8 on their int64 copy, the values cast back before
they are picked, as capture_unique_narrow)
with return_counts and / or return_inverse (issue 15), without dim: a part
of capture_unique_counts' stand-in, in ops ptec lowers exactly on x's
fixed shape, never on the selection's varying length.

v, m = x and m flattened [n]. The selected values sorted are the front of
one ordering of all n: a stable sort of v (its positions `order`), then a
stable sort of the unselected flag (0 selected, 1 not) in that order
(positions `front`: the selected first, each part keeping v's order), so
w = v[order][front] holds the k selected values ascending in its first k
places. An element is the first of its run where it differs from the one
before (the first always), the last where it differs from the one after
or the one after is not selected, both only among the selected: so the
runs are those of the sorted selection, and capture_unique_counts' counts
(`ends - starts + 1` of the flags' stable sorts, picked by the sorted
first flags) are its counts, exact int64. The inverse: each place's run
(the running count of firsts less one, int64), taken back to x's order
through the inverse of the composed permutation (a sort of its positions),
then selected by m: [k] int64, as torch's (a marked int64 selection, a
program output). The values are the call without them (capture_nonzero's
unique of a selection; an integer one: w's firsts, selected). "Equal" is
equal int8 codes for float32 values, as every unique.

unique_consecutive of a selection (ordered False): the same without the
sort of v: one stable sort of the unselected flag in x's order puts the
selected first in x's order, so the runs are those of the selection as
torch reads it (equal values apart in x but adjacent among the selected
are one run, as torch's).

dim=0 (`selection_unique_dim`): of a 1-D selection the call without dim;
of a row selection x[m] (m of x's leading dims, `boxes[scores > t]`) its
rows sorted lexicographically as capture_unique_counts' dim, the selected
moved first by one stable sort (the same two-sort idea over rows)."""
from __future__ import annotations

import operator
import torch


def _source(input):
    """(x, m) proxies of a selection x[m] / masked_select(x, m), m a bool value
    of x's fixed shape; else None."""
    node = getattr(input, "node", None)
    if node is None or node.op != "call_function" or len(node.args) != 2 or node.kwargs:
        return None
    if node.target not in (operator.getitem, torch.masked_select):
        return None
    x, m = node.args
    if not isinstance(x, torch.fx.Node) or not isinstance(m, torch.fx.Node):
        return None
    x, m = input.tracer.proxy(x), input.tracer.proxy(m)           # the tracer's, which knows their values
    try:
        xs, ms = [int(d) for d in x.shape], [int(d) for d in m.shape]
        dtypes = (x.dtype, m.dtype)
    except Exception:                   # noqa: BLE001 - a varying length: not this form
        return None
    if xs != ms or not xs or dtypes[1] != torch.bool or dtypes[0] not in (torch.float32, torch.int64, torch.int32,
                                                                          torch.int16, torch.uint8, torch.int8):
        return None
    return x, m


def selection_unique(input, return_inverse: bool, return_counts: bool, ordered: bool = True):
    """(values, [inverse], [counts]) of torch.unique(x[m], sorted=True, ...)
    with return_inverse or return_counts (an integer x: or neither, the
    values alone), or None (not a selection of this form: capture_nonzero
    then refuses the call in one line)."""
    from .capture_unique_counts import COMPACT, _VALUES, _counts, _select, _shift
    found = _source(input)
    if found is None:
        return None
    x, m = found
    narrow = x.dtype if x.dtype in (torch.int16, torch.uint8, torch.int8) else None
    if narrow is not None:
        x = x.long()                            # int16 / uint8 / int8: on the int64 copy (capture_unique_narrow)
    integer = x.dtype in (torch.int64, torch.int32)
    if not (return_inverse or return_counts or integer or not ordered):
        return None                             # a float selection's values alone: capture_nonzero's unique
    n = 1
    for d in x.shape:
        n *= int(d)
    if n < 2:
        return None
    v, keep = x.reshape(-1), m.reshape(-1).long()
    if ordered:
        s, order = torch.sort(v, stable=True)
        front = torch.sort(1 - keep[order], stable=True)[1]    # the selected first, in v's order
        w, kept, moved = s[front], keep[order][front], order[front]
    else:                                                       # unique_consecutive: x's own order
        moved = torch.sort(1 - keep, stable=True)[1]            # the selected first, in x's order
        w, kept = v[moved], keep[moved]
    chosen, at = kept > 0, torch.arange(n)
    first = ((w != _shift(w, False)) | (at == 0)) & chosen
    last = ((w != _shift(w, True)) | (at == n - 1) | (_shift(kept, True) == 0)) & chosen
    if integer or not ordered:
        # w's firsts: int64 / int32 a marked selection, float32 a selection of w's int8 codes
        if narrow is not None:
            w = w.to(narrow)                    # the selection's own values, back in their dtype
        values = _select(w, first) if integer else torch.masked_select(w, first)
        input.node.meta[_VALUES] = True         # the selection itself: dropped, unused
    else:
        values = torch.unique(input)
    out = [values]
    if return_inverse:
        group = first.long().cumsum(0) - 1                      # the place's run
        place = torch.sort(moved, stable=True)[1]               # element i's place
        out.append(_select(group[place], m.reshape(-1)))
    if return_counts:
        counts, starts = _counts(first, last, with_starts=True)
        if integer and all(isinstance(p, torch.fx.Proxy) for p in (values, w, starts, counts)):
            values.node.meta[COMPACT] = (w.node, starts.node, counts.node.args[1])
            values.node.meta[_VALUES] = True
        out.append(counts)
    return tuple(out) if len(out) > 1 else values


def _row_source(input):
    """(x, m) proxies of a row selection x[m] (m a bool value of x's leading
    dims, x float32 of fixed shape with dims after them), or None."""
    node = getattr(input, "node", None)
    if node is None or node.op != "call_function" or node.target is not operator.getitem or len(node.args) != 2 \
            or node.kwargs or not all(isinstance(a, torch.fx.Node) for a in node.args):
        return None
    x, m = (input.tracer.proxy(a) for a in node.args)
    try:
        xs, ms = [int(d) for d in x.shape], [int(d) for d in m.shape]
        dtypes = (x.dtype, m.dtype)
    except Exception:                   # noqa: BLE001 - a varying length: not this form
        return None
    if not ms or len(ms) >= len(xs) or xs[:len(ms)] != ms or dtypes != (torch.float32, torch.bool) or 0 in xs:
        return None
    return x, m


def selection_unique_dim(input, dim, return_inverse: bool, return_counts: bool, ordered: bool = True):
    """(values, [inverse], [counts]) of torch.unique(s, dim=0) /
    unique_consecutive(s, dim=0) of a selection s (issue 15), or None.

    s = x[m] of a mask of x's own shape (1-D): dim 0 is unique without dim.
    s = x[m] of rows (m of x's leading dims, `boxes[scores > t]`): x viewed as
    its rows X [L, R]; unique sorts them lexicographically as capture_unique_counts'
    dim (R stable passes from the last column), then one stable sort of the
    unselected flag puts the selected rows first, each part in that order
    (unique_consecutive: that sort alone, x's order), so the front holds the
    selection's rows as torch orders them. A row starts a slice where any
    element differs from the row before (the first always), ends where it
    differs from the next or the next is not selected, both only among the
    selected: the unique rows are a row selection of the ordered rows
    ([k, ...] bound-dynamic), the counts capture_unique_counts' (exact
    int64), the inverse each selected row's slice (the running count of
    starts less one) taken back to x's order through the inverse of the
    composed permutation and selected by m (int64 [count])."""
    from .capture_unique_counts import _counts, _mark, _select, _shift
    if not isinstance(dim, int) or isinstance(dim, bool):
        return None
    found = _source(input)
    if found is not None and dim in (0, -1):                    # a 1-D selection: unique without dim
        got = selection_unique(input, return_inverse, return_counts, ordered)
        if got is None and not (return_inverse or return_counts) and found[0].dtype == torch.float32:
            got = torch.unique(input) if ordered else torch.unique_consecutive(input)
        return got
    found = _row_source(input)
    if found is None:
        return None
    x, m = found
    xs, ms = [int(d) for d in x.shape], [int(d) for d in m.shape]
    if dim not in (0, len(ms) - len(xs) - 1):                  # s's dim 0 (its rank len(xs) - len(ms) + 1)
        return None
    L, rest = 1, xs[len(ms):]
    for d in ms:
        L *= d
    if L < 2:
        return None
    R = 1
    for d in rest:
        R *= d
    X, keep = x.reshape(L, R), m.reshape(L).long()
    order = None
    if ordered:
        for c in reversed(range(R)):             # least significant column first: stable passes
            column = X[:, c]
            step = torch.sort(column if order is None else column[order], stable=True)[1]
            order = step if order is None else order[step]
        front = torch.sort(1 - keep[order], stable=True)[1]     # the selected first, in the rows' order
        moved = order[front]
    else:
        moved = torch.sort(1 - keep, stable=True)[1]            # the selected first, in x's order
    table, kept = X[moved], keep[moved]
    chosen, at = kept > 0, torch.arange(L)
    before = (table != _shift(table, False)).float().amax(1) > 0.5
    after = (table != _shift(table, True)).float().amax(1) > 0.5
    first = (before | (at == 0)) & chosen
    last = (after | (at == L - 1) | (_shift(kept, True) == 0)) & chosen
    rows = table.reshape([L] + rest)
    values = rows[first]
    _mark(rows, values)
    out = [values]
    if return_inverse:
        group = first.long().cumsum(0) - 1                      # the place's slice
        place = torch.sort(moved, stable=True)[1]               # row i's place
        out.append(_select(group[place], m.reshape(L)))
    if return_counts:
        out.append(_counts(first, last))
    return tuple(out) if len(out) > 1 else values
