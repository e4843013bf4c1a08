"""torch.unique / unique_consecutive (and the Tensor methods) with
return_counts=True, and with dim= (issue 15): stand-ins the fx tracer runs
instead of the call (capture_modules' FUNCTIONAL_STAND_INS, as
capture_unique_inverse), written in ops ptec lowers exactly.

Counts. The values in their order, v [n] (x flattened and sorted for
unique, in x's order for unique_consecutive), each element is the first of
its run where it differs from the one before (the first always) and the
last where it differs from the one after (the last always). A stable sort
of first's 0/1 descending puts the positions of the k first elements in
order at its front, the same sort of last's the positions of the k last
ones (int64 indices), so `ends - starts + 1` holds the k counts in its first
k places: int64 arithmetic, exact for any n. They are picked by the sorted
0/1 (1 on the first k places): `aten::masked_select.out` copies int64 as it
copies int8 (`_select`: a masked_select this module marks, run as a
program output, or after `.float()` as a float selection with its readers:
the cast moves before the pick, capture_selection_more). "Equal" is equal int8 codes, as for
the values: values closer than an input step merge, so the counts are
torch's where the values lie a grid apart.

dim=d. Unique slices along d, where every dim before d is 1 (so the
varying length is the first dim above 1, as ptec's row selections give
it), and at most one such 1 when the slices have dims ([1, k, C], as
capture_selection_row_output's outputs; [1, ..., 1, k] for d the last):
x viewed as a table X [L, R] (L = x's size along d, R the numel of
the dims after it). unique sorts X's rows in lexicographic order, as
torch's comparator does (the first differing element decides): R stable
sorts, from the last column to the first, each of one column gathered by
the order so far (an int64 take of the order and a computed index of the
column: codes copied), the least significant column first (an LSD radix
sort: each stable pass keeps the order of the columns sorted before it
among equal keys). unique_consecutive keeps X's order. A row starts a
new slice where any element differs from the row before; the unique rows
are a row selection (`x[mask]` of the leading dim: `aten::index.Tensor_out`
into a bound-dynamic [L, ...] out), viewed back with x's leading ones
(`[1, k, ...]`, the row-output form of capture_selection_row_output).
The counts as above over the rows; return_inverse: the slice's group,
the running count of first rows less one (an int64 cumsum), taken back to
x's order through the sort's order by an exact one-hot sum ([L, L]
int64).

dim=d behind a dim above 1 (or two ones before d and dims after it:
[1, 4, 8] with dim=2, [2, 7, 3] with dim=1, `_behind`): X is x with d
moved first, the rest flattened in order (torch's slices), sorted as
above; the sorted table moved back to x's layout and its slices along d
selected after d whole dims (`x_sorted[:, :, first]`: a masked_select
node with attrs rows and at = d, `aten::index.Tensor_out` with d None
indices before the mask, which ptec's kernel and upstream's take), so
the result is [..., k, ...] with the count at d. Those slices run as a
program output, and through element-wise readers (numbers, functions of
one value, the same slices, operands of size 1 along d), which
capture_masked_select.through_selections moves before the selection
(f(x_sorted)[:, ..., first]), and through sums / means / extremes /
softmax over d or acting per slice, scans, flips and views keeping the
count a dim (capture_unique_slices); another reader is refused there
naming it.

Left refused (capture_nonzero, one line): dim of a tensor with a size 0,
a reader of slices behind a dim above 1 other than those (a sort or
cumprod along d, a view merging the count: its count sits inside), return_inverse without dim
of fewer than 2 elements (capture_unique_inverse's), sorted=False,
a selection's slices other than dim 0 (counts / inverse of a selection
x[m] and its dim 0, unique's and unique_consecutive's:
capture_unique_selection); a reader of the int64 counts
other than `.float()` and those capture_counts_readers rewrites (here,
naming the reader). int64 / int32 inputs: capture_unique_integers; int16 /
uint8 / int8: capture_unique_narrow."""
from __future__ import annotations

from typing import List, Optional

import torch

from . import capture_unique_inverse as _inverse
from .capture_counts_readers import COMPACT, PREFIX
from .ir import Node

_FLAG = "ptec_int64_selection"


def int64_selection_nodes(fn, ins, by_name) -> Optional[List[Node]]:
    """The marked masked_select of int64 counts (`_select`): the node
    `masked_select` (capture_masked_select's), whose kernel copies int64."""
    if not fn.meta.get(_FLAG) or fn.target is not torch.masked_select or len(fn.args) != 2 or fn.kwargs:
        return None
    for user in fn.users:
        if user.op != "output" and not _to_float(user):
            from .capture_calls import refuse_call
            refuse_call(user, "it reads unique's int64 counts (or an integer input's unique values), whose "
                        "length follows the values: they run as a program output, after .float() (then as a "
                        "selection's), through element-wise integer ops with numbers, sum / max / min / any / "
                        "all, and, of the counts, argmax / argmin / cumsum along dim 0 "
                        "(capture_counts_readers)")
    from .capture_int_casts import NARROW
    dtype = getattr(fn.meta.get("tensor_meta"), "dtype", None)
    attrs = dict(dtype=NARROW[dtype]) if dtype in (torch.int16, torch.uint8, torch.int8) else {}
    return [Node(fn.name, "masked_select", [a.name for a in fn.args], attrs)]     # (narrow: capture_unique_narrow)


_VALUES = "ptec_unique_values"


def without_unused_values(gm: torch.fx.GraphModule) -> None:
    """Drops unique(dim=)'s slices (the row selection and its view, marked
    by `_by_dim`) when the model reads only the counts or the inverse: a
    view of a selection that is no program output is refused
    (capture_masked_select.refuse_consumers)."""
    erased = False
    for fn in reversed(list(gm.graph.nodes)):
        if fn.meta.get(_VALUES):
            # reads of its sizes (a selection's, which the stand-in tried) that nothing uses
            for user in [u for u in fn.users if u.op == "call_function" and u.target is getattr and not u.users]:
                gm.graph.erase_node(user)
        if fn.meta.get(_VALUES) and not fn.users:
            gm.graph.erase_node(fn)
            erased = True
    if erased:
        gm.recompile()


def _mark(*proxies):
    for p in proxies:
        if isinstance(p, torch.fx.Proxy):
            p.node.meta[_VALUES] = True


def _to_float(fn) -> bool:
    """`.float()` / `.to(torch.float32)` / `.type(torch.float32)` of a value."""
    return fn.op == "call_method" and (fn.target == "float" and len(fn.args) == 1 and not fn.kwargs
                                       or fn.target in ("to", "type") and len(fn.args) == 2 and not fn.kwargs
                                       and fn.args[1] is torch.float32)


def _select(values, keep):
    """masked_select(values, keep) of int64 values, marked for capture."""
    got = torch.masked_select(values, keep)
    if isinstance(got, torch.fx.Proxy):
        got.node.meta[_FLAG] = True
    return got


def _shift(v, later: bool):
    """v moved one place along dim 0 (the end copied): each row's
    predecessor (later False) or successor (later True)."""
    return torch.cat([v[1:], v[-1:]]) if later else torch.cat([v[:1], v[:-1]])


def _edges(v):
    """(first, last) bool [n]: where v's row starts or ends a run of equal rows."""
    n = int(v.shape[0])
    at = torch.arange(n)
    differ = [v != _shift(v, later) for later in (False, True)]
    if v.dim() > 1:
        differ = [d.float().amax(1) > 0.5 for d in differ]     # the table [L, R]
    return differ[0] | (at == 0), differ[1] | (at == n - 1)


def _counts(first, last, with_starts=False):
    """The run lengths, int64 [k]: ends - starts + 1 of the stably sorted 0/1
    (with_starts: and starts, the k runs' first positions in its first k places)."""
    keep, starts = torch.sort(first.float(), descending=True, stable=True)
    ends = torch.sort(last.float(), descending=True, stable=True)[1]
    counts = _select(ends - starts + 1, keep > 0.5)
    if isinstance(counts, torch.fx.Proxy):
        counts.node.meta[PREFIX] = True          # keep: the first k >= 1 places (capture_counts_readers)
    return (counts, starts) if with_starts else counts


def _numel(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _shape(input):
    """input's traced sizes, or None for a value whose length follows the
    values (a selection: the tracer refuses reading its sizes; the plain
    call is then capture_nonzero's, which refuses it by name)."""
    try:
        return [int(s) for s in input.shape]
    except Exception:                   # noqa: BLE001 - the tracer's refusal of a varying length
        return None


def _dim_table(input, dim):
    """(X [L, R], d, shape, behind) for unique slices along dim, or None;
    behind: a dim above 1 before d, or two ones before d and dims after it
    (the slices then kept by x[:, ..., :, m], `_behind`)."""
    shape = _shape(input)
    if not isinstance(dim, int) or isinstance(dim, bool) or not shape:
        return None
    d = dim + len(shape) if dim < 0 else dim
    if not 0 <= d < len(shape) or 0 in shape:
        return None
    if any(s != 1 for s in shape[:d]) or d > 1 and len(shape) > d + 1:
        # torch's slices: x's dim d moved first, each the rest flattened in order
        return input.movedim(d, 0).reshape(shape[d], -1), d, shape, True
    return input.reshape(shape[d], _numel(shape[d + 1:])), d, shape, False


def _behind(table, first, d: int, shape):
    """The unique slices of the sorted table [L, R] in x's layout, the dims
    before d whole: x_sorted[:, ..., :, first] (a row selection after d
    whole dims, `aten::index.Tensor_out` with d None indices first)."""
    rest = shape[:d] + shape[d + 1:]
    sorted_x = table.reshape([shape[d]] + rest).movedim(0, d)
    values = sorted_x[(slice(None),) * d + (first,)]
    if isinstance(values, torch.fx.Proxy):
        values.node.meta[_AT] = d
    _mark(sorted_x, values)
    return values


_AT = "ptec_unique_slices_at"


def unique_slices_nodes(fn, by_name) -> Optional[List[Node]]:
    """`_behind`'s selection: a masked_select node of rows after `at` whole
    dims, a program output only."""
    at = fn.meta.get(_AT)
    if at is None or fn.op != "call_function" or len(fn.args) != 2 or by_name.get(fn.args[0].name) is None:
        return None
    # (its readers: element-wise ones move before the selection, capture_masked_select.through_selections;
    # any other is refused there in one line naming it)
    return [Node(fn.name, "masked_select", [fn.args[0].name, fn.args[1][-1].name], dict(rows=True, at=at))]


def _by_dim(input, dim, return_inverse, return_counts, ordered):
    """unique (ordered: lexicographically sorted) / unique_consecutive of
    the slices along dim."""
    found = _dim_table(input, dim)
    if found is None:
        return None
    x, d, shape, behind = found
    rows, width = int(x.shape[0]), int(x.shape[1])
    order = None
    if ordered and rows > 1:
        for c in reversed(range(width)):             # least significant column first: stable passes
            column = x[:, c]
            step = torch.sort(column if order is None else column[order], stable=True)[1]
            order = step if order is None else order[step]
    table = x if order is None else x[order]
    first, last = _edges(table)
    if behind:
        values = _behind(table, first, d, shape)
    else:
        slices = table.reshape([rows] + shape[d + 1:])      # the rows as x's slices: kept whole
        kept = slices[first]
        values = kept
        for _ in range(d):                                  # x's leading ones
            values = values.unsqueeze(0)
        _mark(slices, kept, values)
    out = [values]
    if return_inverse:
        group = first.long().cumsum(0) - 1          # the sorted row's slice
        if order is not None:                       # back to x's order: row i sits where order holds i
            at = (order.unsqueeze(0) == torch.arange(rows).unsqueeze(1)).long()
            group = (at * group.unsqueeze(0)).sum(1)
        out.append(group)
    if return_counts:
        out.append(_counts(first, last))
    return tuple(out) if len(out) > 1 else values


def _flat_counts(input, ordered, values):
    """The counts of the flattened input's runs (sorted: unique's); values'
    node keeps the run values v and the starts for a values[i] at a counts
    position (capture_counts_readers)."""
    flat = input.reshape(-1)
    v = torch.sort(flat)[0] if ordered else flat
    counts, starts = _counts(*_edges(v), with_starts=True)
    if all(isinstance(p, torch.fx.Proxy) for p in (values, v, starts, counts)):
        values.node.meta[COMPACT] = (v.node, starts.node, counts.node.args[1])
        values.node.meta[_VALUES] = True         # dropped when only values[i] read it
    return counts


def _narrow(input, dim, return_inverse, return_counts) -> bool:
    """int16 / uint8 / int8 values of fixed shape, without dim: capture_unique_narrow."""
    from .capture_unique_narrow import NARROW
    return input.dtype in NARROW and dim is None and _shape(input) is not None \
        and isinstance(return_inverse, bool) and isinstance(return_counts, bool)


def _narrow_unique(input, ordered, return_inverse, return_counts):
    from .capture_unique_narrow import narrow_unique
    return narrow_unique(input, ordered, return_inverse, return_counts)


def _unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    if dim is not None and sorted is True and _shape(input) is None and isinstance(return_inverse, bool) \
            and isinstance(return_counts, bool):
        from .capture_unique_selection import selection_unique_dim      # dim 0 of a selection x[m]
        return selection_unique_dim(input, dim, return_inverse, return_counts)
    if sorted is True and dim is None and _shape(input) is None and isinstance(return_inverse, bool) \
            and isinstance(return_counts, bool):
        from .capture_unique_selection import selection_unique      # of a selection x[m]
        return selection_unique(input, return_inverse, return_counts)
    if input.dtype in (torch.int64, torch.int32) and sorted is True and dim is None \
            and isinstance(return_inverse, bool) and isinstance(return_counts, bool):
        from .capture_unique_integers import integer_unique
        return integer_unique(input, True, return_inverse, return_counts)
    if _narrow(input, dim, return_inverse, return_counts) and sorted is True:
        return _narrow_unique(input, True, return_inverse, return_counts)
    if input.dtype != torch.float32 or sorted is not True or not isinstance(return_inverse, bool) \
            or not isinstance(return_counts, bool):
        return None                                   # capture_nonzero's call: runs or refuses by name
    if dim is not None:
        return _by_dim(input, dim, return_inverse, return_counts, True)
    if not return_counts:
        return _inverse.STAND_INS[torch.unique][2](input, sorted, return_inverse)
    if _shape(input) is None or _numel(_shape(input)) < 1:
        return None
    if return_inverse:
        both = _inverse.STAND_INS[torch.unique][2](input, sorted, True)
        return None if both is None else (both[0], both[1], _flat_counts(input, True, both[0]))
    values = torch.unique(input)
    return values, _flat_counts(input, True, values)


def _unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    if dim is not None and _shape(input) is None and isinstance(return_inverse, bool) \
            and isinstance(return_counts, bool):
        from .capture_unique_selection import selection_unique_dim      # dim 0 of a selection x[m]
        return selection_unique_dim(input, dim, return_inverse, return_counts, ordered=False)
    if dim is None and _shape(input) is None and isinstance(return_inverse, bool) \
            and isinstance(return_counts, bool):
        from .capture_unique_selection import selection_unique      # of a selection x[m]
        return selection_unique(input, return_inverse, return_counts, ordered=False)
    if input.dtype in (torch.int64, torch.int32) and dim is None \
            and isinstance(return_inverse, bool) and isinstance(return_counts, bool):
        from .capture_unique_integers import integer_unique
        return integer_unique(input, False, return_inverse, return_counts)
    if _narrow(input, dim, return_inverse, return_counts):
        return _narrow_unique(input, False, return_inverse, return_counts)
    if input.dtype != torch.float32 or not isinstance(return_inverse, bool) or not isinstance(return_counts, bool):
        return None
    if dim is not None:
        return _by_dim(input, dim, return_inverse, return_counts, False)
    if not return_counts:
        return _inverse.STAND_INS[torch.unique_consecutive][2](input, return_inverse)
    if _shape(input) is None or _numel(_shape(input)) < 1:
        return None
    if return_inverse:
        both = _inverse.STAND_INS[torch.unique_consecutive][2](input, True)
        return None if both is None else (both[0], both[1], _flat_counts(input, False, both[0]))
    values = torch.unique_consecutive(input)
    return values, _flat_counts(input, False, values)


STAND_INS = {
    torch.unique: (_inverse._UNIQUE, 1, _unique),
    "unique": (_inverse._UNIQUE, 1, _unique),
    torch.unique_consecutive: (_inverse._CONSECUTIVE, 1, _unique_consecutive),
    "unique_consecutive": (_inverse._CONSECUTIVE, 1, _unique_consecutive),
}
