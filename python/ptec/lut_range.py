"""The output grid of a one-input 256-entry LUT node (issue 15).

A LUT's output grid is chosen, as every value's, from the range its float
values took in calibration. But the program does not evaluate the function
at the calibration inputs: it evaluates it at the input grid's codes, and
an input at the edge of calibration rounds to a code up to half an input
step beyond it (or between two samples, where the function may peak). Where
the function is steep there (torch.special.erfcx at -3, modified_bessel_k1
and bessel_y1 near 0.2) the table entry f(code) lies outside the observed
range and saturates: probe17 measured 10, 5.5 and 4.5 output steps against
torch on the same int8-rounded input, from one entry each.

So the range of a LUT node is widened to cover f at every input code
between the codes calibration's extremes round to -- the values the
program can produce for inputs inside calibration's range -- which makes
each entry within half an output step of torch's f at that code's value.
It is widened only when that costs at most WIDEN_LIMIT of the observed
span: near a pole (torch.tan over [-3, 3], 1/x near 0, digamma near a
non-positive integer) a code can sit far closer to the pole than any sample
and f there is huge; widening to it would coarsen every other entry's step,
so the observed range is kept and that entry saturates, as before.
"""
from __future__ import annotations

from typing import Optional, Tuple

import numpy as np

# widen by at most this fraction of the observed span (more: keep the observed range)
WIDEN_LIMIT = 0.25


def is_lut(n) -> bool:
    """n is lowered as a one-input 256-entry table (the ops lowering.op_sigmoid lowers)."""
    from .backends.cortex_m import lowering
    return len(n.inputs) == 1 and getattr(lowering, "op_" + n.op, None) is lowering.op_sigmoid


def lut_range(n, in_qparams, in_range: Tuple[float, float], lo: float, hi: float) -> Optional[Tuple[float, float]]:
    """The widened (lo, hi) of LUT node n, or None to keep the observed (lo, hi).
    in_qparams: the input's grid; in_range: the input's observed range."""
    from .backends.cortex_m.lowering import unary_function
    if in_qparams is None or not np.isfinite([lo, hi, *in_range]).all():
        return None
    s, z = float(in_qparams[0]), int(in_qparams[1])
    if s <= 0:
        return None
    q0, q1 = (int(np.clip(np.round(v / s) + z, -128, 127)) for v in in_range)
    codes = np.arange(min(q0, q1), max(q0, q1) + 1, dtype=np.float64)
    try:
        with np.errstate(all="ignore"):
            y = np.asarray(unary_function(n)((codes - z) * s), np.float64)
    except Exception:          # noqa: BLE001 - a function that cannot take the codes: keep the observed range
        return None
    y = y[np.isfinite(y)]
    if y.size == 0:
        return None
    new_lo, new_hi = min(lo, float(y.min())), max(hi, float(y.max()))
    if (new_lo, new_hi) == (lo, hi):
        return None
    span = max(hi - lo, 1e-12)
    if (new_hi - new_lo) - span > WIDEN_LIMIT * span:
        return None                 # a code near a pole: widening would coarsen every entry
    return new_lo, new_hi
