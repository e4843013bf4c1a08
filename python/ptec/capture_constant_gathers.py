"""Calls whose result is a fixed arrangement of their input's values, or of
functions ptec runs (issue 15): each a stand-in the fx tracer runs instead
of the call (capture_modules' FUNCTIONAL_STAND_INS), its index tables and
masks constants computed from the traced shapes:

* torch.diagflat(v, offset): v's values on a diagonal of a square of zeros:
  the flattened value picked by a constant index table, 0 where a
  constant mask is off (a where: the values unrounded);
* torch.combinations(v, r, with_replacement): v picked by the table of
  index tuples (torch's order, itertools' combinations);
* torch.linalg.vander(v, N): the columns v^0 .. v^(N-1), stacked;
* torch.histogram(x, bins, range=(lo, hi)): .hist as torch.histc's counts
  (capture_elementwise_math), .bin_edges the constant torch gives;
* x.index_reduce(dim, index, source, reduce, include_self) with a constant
  index: x.scatter_reduce with the index spread along `source`'s other
  dims (which ptec runs);
* torch.special.softmax / log_softmax / logsumexp: torch.softmax /
  log_softmax / logsumexp.

A call these do not cover (a computed index, histogram without its range or
with weights / density, a vander of a 0-d value) stays the call, refused by
name."""
from __future__ import annotations

import itertools

import torch


def _diagflat(input, offset=0):
    if not isinstance(offset, int):
        return None
    flat = input.reshape(-1)
    n = int(flat.shape[0])
    m = n + abs(offset)
    idx = torch.zeros(m, m, dtype=torch.long)
    on = torch.zeros(m, m, dtype=torch.bool)
    for i in range(n):
        r, c = (i, i + offset) if offset >= 0 else (i - offset, i)
        idx[r, c], on[r, c] = i, True
    return torch.where(on, flat[idx], 0.0)


def _combinations(input, r=2, with_replacement=False):
    if input.dim() != 1 or not isinstance(r, int) or r < 0:
        return None
    n = int(input.shape[0])
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = list(pick(range(n), r))
    if not rows or r == 0:
        return None                 # an empty result: torch's own shape rules, left to it
    return input[torch.tensor(rows, dtype=torch.long)]


def _vander(x, N=None):
    if x.dim() < 1:
        return None
    n = int(x.shape[-1]) if N is None else N
    if not isinstance(n, int) or n < 1:
        return None
    columns = [x * 0.0 + 1.0] + [x if k == 1 else x ** k for k in range(1, n)]
    return torch.stack(columns, -1)


def _histogram(input, bins, range=None, weight=None, density=False):
    if not isinstance(bins, int) or isinstance(bins, bool) or bins < 1 or range is None or weight is not None \
            or density:
        return None
    lo, hi = (float(v) for v in range)
    if not lo < hi:
        return None
    edges = torch.linspace(lo, hi, bins + 1)
    return torch.return_types.histogram((torch.histc(input, bins, lo, hi), edges))


def _index_reduce(self, dim, index, source, reduce, include_self=True):
    if isinstance(index, torch.fx.Proxy) or not isinstance(index, torch.Tensor) or index.dim() != 1 \
            or not isinstance(source, (torch.Tensor, torch.fx.Proxy)) \
            or not isinstance(dim, int) or reduce not in ("prod", "mean", "amax", "amin"):
        return None
    rank = source.dim()
    d = dim % rank
    shape = [1] * rank
    shape[d] = -1
    spread = index.detach().long().reshape(shape).expand([int(v) for v in source.shape]).clone()
    return self.scatter_reduce(d, spread, source, reduce, include_self=include_self)


STAND_INS = {
    torch.diagflat: (("input", "offset"), 1, _diagflat),
    torch.combinations: (("input", "r", "with_replacement"), 1, _combinations),
    torch.linalg.vander: (("x", "N"), 1, _vander),
    torch.histogram: (("input", "bins", "range", "weight", "density"), 1, _histogram),
    # a Tensor method: by its name; self and source traced (or constants), the index a constant
    "index_reduce": (("self", "dim", "index", "source", "reduce", "include_self"), 1, _index_reduce, True),
    torch.special.softmax: (("input", "dim", "dtype"), 1,
                            lambda input, dim, dtype=None: torch.softmax(input, dim) if dtype is None else None),
    torch.special.log_softmax: (("input", "dim", "dtype"), 1,
                                lambda input, dim, dtype=None: torch.log_softmax(input, dim) if dtype is None
                                else None),
    torch.special.logsumexp: (("input", "dim", "keepdim"), 1,
                              lambda input, dim, keepdim=False: torch.logsumexp(input, dim, keepdim)),
}
