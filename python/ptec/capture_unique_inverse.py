"""torch.unique / unique_consecutive with return_inverse=True (issue 15):
the values are the plain call's (capture_nonzero: a selection whose length
follows the values, a program output); the inverse, of x's shape, is a
fixed-length int64 result, so a stand-in the fx tracer runs instead of the
call (capture_modules' FUNCTIONAL_STAND_INS) computes it in ops ptec lowers:

* unique (sorted): s = x flattened and sorted, first = where s differs from
  the value before it (the first always); an element's index is how many
  first values are below it, a sum over one [numel, numel] comparison of
  int8 codes (exact) of its 0/1, rounded;
* unique_consecutive: first along x's own order; an element's index is the
  running count of firsts up to it, less one (a cumsum), rounded.

The counts and dim are capture_unique_counts' stand-ins (which call these
for the inverse of the flattened tensor). The sums are int8 on their calibrated grid: exact while it spans the
distinct values the runs meet and x has at most 254 elements (beyond, the
call stays refused)."""
from __future__ import annotations

import torch

_LIMIT = 254          # elements: a 0/1 sum's int8 grid then rounds to the count exactly


def _first(values):
    """Where each value differs from the one before it (the first always)."""
    n = int(values.shape[0])
    before = torch.cat([values[:1], values[:-1]])
    return (values != before) | (torch.arange(n) == 0)


def _unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    if not return_inverse or return_counts or dim is not None or sorted is not True \
            or input.dtype != torch.float32:
        return None                                   # capture_nonzero's call: runs or refuses by name
    shape = [int(d) for d in input.shape]
    n = 1
    for d in shape:
        n *= d
    if n < 2 or n > _LIMIT:
        return None
    flat = input.reshape(-1)
    s = torch.sort(flat)[0]
    below = (flat.unsqueeze(1) > s.unsqueeze(0)) & _first(s).unsqueeze(0)
    inverse = below.float().sum(1).round().long().reshape(shape)
    return torch.unique(input), inverse


def _unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    if not return_inverse or return_counts or dim is not None or input.dtype != torch.float32:
        return None
    shape = [int(d) for d in input.shape]
    n = 1
    for d in shape:
        n *= d
    if n < 2 or n > _LIMIT:
        return None
    flat = input.reshape(-1)
    inverse = (_first(flat).float().cumsum(0) - 1.0).round().long().reshape(shape)
    return torch.unique_consecutive(input), inverse


_UNIQUE = ("input", "sorted", "return_inverse", "return_counts", "dim")
_CONSECUTIVE = ("input", "return_inverse", "return_counts", "dim")
STAND_INS = {
    torch.unique: (_UNIQUE, 1, _unique),
    "unique": (_UNIQUE, 1, _unique),
    torch.unique_consecutive: (_CONSECUTIVE, 1, _unique_consecutive),
    "unique_consecutive": (_CONSECUTIVE, 1, _unique_consecutive),
}
