"""The calls on complex values that ptec.capture_complex_products left
refused though torch runs them (issue 15), on the [..., 2] pair of real
and imaginary parts ptec.capture_complex carries:

- z[i, j], z[:, i, j], z[i, :, j], z[i, None, j] ... with several index
  tensors, at least one an int64 value computed in the program (argmax,
  x.long(), arithmetic on them; constants beside them), and ints, slices,
  None and one `...` elsewhere: capture_tensor_index's rows of a real
  value by several computed indices (ptec::flat_index.out's position in
  the indexed dims' block, aten::embedding.out of its rows) on the pair,
  whose dim is one more full slice after the last dim of z, never indexed;
- torch.einsum of more than three complex operands: contracted two at a
  time (each step capture_complex_products' einsum of two operands, four
  real einsums of the parts), the pair contracted next chosen so that its
  result has the fewest elements (the letters it keeps: those a later
  operand or the output reads), the last step giving the output's letters.
  Each intermediate is a complex value of its own (int8 parts on their
  own grids), so the error grows with the number of steps: tests measure
  the bound;
- torch.isclose(a, b, equal_nan=True) of complex values: torch 1.13's
  rule, where a complex value is NaN when either of its parts is
  (`z != z`), so (1 + NaN i) and (2 + NaN i) are close; the parts compared
  with themselves (capture_bool's compare, `ne`), the `or` of each side's
  two, the `and` of the two sides, or-ed into isclose's result. A value in
  an int8 program is never NaN, so there it gives isclose's answer without
  equal_nan, as torch does on such values."""
from __future__ import annotations

import itertools
import types
from typing import List, Optional

import numpy as np
import torch

from .capture_rewrites import _Steps


def several_computed_indices(fn, by_name, s: _Steps, pair: str, shape, out_shape) -> Optional[str]:
    """The pair of z[idx] (z of shape `shape`, carried as pair `pair`) with
    several index tensors, one at least computed in the program; None for
    other subscripts."""
    import operator
    from .capture_tensor_index import _computed_indices_nodes, _spelled_out
    if fn.target is not operator.getitem or len(fn.args) != 2:
        return None
    idx = tuple(fn.args[1]) if isinstance(fn.args[1], (tuple, list)) else (fn.args[1],)
    found = {k: i for k, i in enumerate(idx) if isinstance(i, torch.fx.Node)}
    if not found or any(getattr(t.meta.get("tensor_meta"), "dtype", None) == torch.bool for t in found.values()):
        return None
    spelled = _spelled_out(idx, found, len(shape))       # `...` spelled against z's dims, not the pair's
    if spelled is None:
        return None
    idx, found = spelled
    # a stand-in for the call on the pair: its value, its index (one more `:` for the pair's dim), its result
    meta = types.SimpleNamespace(shape=torch.Size(list(out_shape) + [2]))
    stand = types.SimpleNamespace(name=f"{s.name}__ix", args=(types.SimpleNamespace(name=pair),),
                                  meta={"tensor_meta": meta})
    rows = _computed_indices_nodes(stand, list(shape) + [2], tuple(idx) + (slice(None),), found, by_name)
    if rows is None:
        return None
    s.nodes.extend(rows)
    return s("identity", [rows[-1].name])


def _step_shape(term: str, size) -> List[int]:
    return [int(size[c]) for c in term]


def pairwise_einsum(s: _Steps, terms, out: str, operands, size, out_shape) -> Optional[str]:
    """The pair of an einsum of complex operands [(re, im or None, shape)]
    (terms: their letters, '...' spelled as capitals; out: the output's
    letters; size: each letter's size), contracted two at a time."""
    from .capture_complex_products import _complex_einsum, _parts_of
    dummy = torch.fx.Graph()
    slots = (dummy.placeholder("a"), dummy.placeholder("b"))
    work = list(zip(terms, operands))
    step = 0
    while len(work) > 2:
        best = None
        for i, j in itertools.combinations(range(len(work)), 2):
            rest = "".join(t for k, (t, _) in enumerate(work) if k not in (i, j)) + out
            kept = "".join(dict.fromkeys(c for c in work[i][0] + work[j][0] if c in rest))
            cost = int(np.prod(_step_shape(kept, size))) if kept else 1
            if best is None or cost < best[0]:
                best = (cost, i, j, kept)
        _, i, j, kept = best
        if not kept:
            return None                     # a scalar intermediate: not rewritten
        sub = _Steps(f"{s.name}__p{step}")
        sub.nodes = s.nodes                 # one list: constants made before stay visible (their views folded)
        shape = _step_shape(kept, size)
        eq = f"{work[i][0]},{work[j][0]}->{kept}"
        pair = _complex_einsum(sub, (eq,) + slots, [work[i][1], work[j][1]], shape)
        if pair is None:
            return None
        merged = (kept, _parts_of(s, ("pair", pair, shape)))
        work = [merged if k == i else w for k, w in enumerate(work) if k != j]
        step += 1
    sub = _Steps(f"{s.name}__p{step}")
    sub.nodes = s.nodes
    eq = f"{work[0][0]},{work[1][0]}->{out}"
    return _complex_einsum(sub, (eq,) + slots, [w[1] for w in work], list(out_shape))


def nan_pairs(s: _Steps, x, y, out_shape) -> str:
    """torch's equal_nan term of complex operands with sides x and y ((re,
    im) at the result's shape + [1], capture_complex_products' _sides): both
    NaN, each NaN when either part is."""
    from .capture_complex_products import _compare

    def isnan(side):
        return s("logical", [_compare(s, "ne", side[0], side[0], out_shape),
                             _compare(s, "ne", side[1], side[1], out_shape)], kind="or")
    return s("logical", [isnan(x), isnan(y)], kind="and")
