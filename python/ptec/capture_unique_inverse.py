"""torch.unique / unique_consecutive with return_inverse=True (issue 15):
the values are the plain call's (capture_nonzero: a selection whose length
follows the values, a program output); the inverse, of x's shape, is a
fixed-length int64 result, so a stand-in the fx tracer runs instead of the
call (capture_modules' FUNCTIONAL_STAND_INS) computes it in ops ptec lowers:

* unique (sorted): s, order = x flattened and sorted (stable: the int8
  codes, as the values), first = where s differs from the value before
  it (the first always); the sorted element's index is the running count
  of firsts up to it less one (an int64 cumsum of the 0/1), taken back to
  x's order through the inverse of the sort's permutation (the positions
  of a sort of the int64 order: element i's place, an int64 take);
* unique_consecutive: first along x's own order; an element's index is the
  running count of firsts up to it, less one (the int64 cumsum).

The counts and dim are capture_unique_counts' stand-ins (which call these
for the inverse of the flattened tensor). Every step after the sort is
exact int64 arithmetic, so any x of at least 2 elements runs (the sort
O(n log n)); "equal" is equal int8 codes, as for the values."""
from __future__ import annotations

import torch


def _numel(input) -> int:
    """input's element count, 0 for a selection (its length follows the
    values: capture_nonzero then refuses the call by name)."""
    try:
        shape = [int(d) for d in input.shape]
    except Exception:                   # noqa: BLE001 - the tracer's refusal of a varying length
        return 0
    n = 1
    for d in shape:
        n *= d
    return n


def _first(values):
    """Where each value differs from the one before it (the first always)."""
    n = int(values.shape[0])
    before = torch.cat([values[:1], values[:-1]])
    return (values != before) | (torch.arange(n) == 0)


def _unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    if not return_inverse or return_counts or dim is not None or sorted is not True \
            or input.dtype != torch.float32:
        return None                                   # capture_nonzero's call: runs or refuses by name
    n = _numel(input)
    if n < 2:
        return None
    shape = [int(d) for d in input.shape]
    s, order = torch.sort(input.reshape(-1), stable=True)      # order[r]: the element at place r
    group = _first(s).long().cumsum(0) - 1                      # the sorted element's unique value
    inverse = group[torch.sort(order, stable=True)[1]].reshape(shape)      # at element i's place
    return torch.unique(input), inverse


def _unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    if not return_inverse or return_counts or dim is not None or input.dtype != torch.float32:
        return None
    n = _numel(input)
    if n < 2:
        return None
    shape = [int(d) for d in input.shape]
    inverse = (_first(input.reshape(-1)).long().cumsum(0) - 1).reshape(shape)
    return torch.unique_consecutive(input), inverse


_UNIQUE = ("input", "sorted", "return_inverse", "return_counts", "dim")
_CONSECUTIVE = ("input", "return_inverse", "return_counts", "dim")
STAND_INS = {
    torch.unique: (_UNIQUE, 1, _unique),
    "unique": (_UNIQUE, 1, _unique),
    torch.unique_consecutive: (_CONSECUTIVE, 1, _unique_consecutive),
    "unique_consecutive": (_CONSECUTIVE, 1, _unique_consecutive),
}
