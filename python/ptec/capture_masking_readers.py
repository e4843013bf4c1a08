"""A masking fill read by something other than a softmax over the last dim
(issue 15): `x.masked_fill(~keep, -1e9).max(1)` (masked max-pooling over a
sequence), `torch.where(keep, x, -1e9).amax(-1)`, `exp(...)`, `.sum(-1)` /
`.mean(-1)`, `torch.logsumexp(..., -1)`, `torch.sigmoid(...)`, a softmax
over another dim (`dim=0`), each with any fill capture_attention_masks
takes as masking (a number or a filled tensor <= -1e4, an additive mask of
a computed bool `(1 - keep.float()) * -1e9`, or a constant bias holding
such numbers).

On int8 grids these were lost: the masked value's one grid spans
[-1e9, max], so every kept value is one code (a max 144 to 210 output
steps off, exp and its sum 255, sigmoid 128, a softmax over dim 0 170 to
188), then refused in one line naming the reader. Nothing in the hardware
stops them: the fill and its readers run in fp32 on the portable kernels
(attrs["fp32"], through the tracer's `ptec_fp32` mark), the kept values
dequantized from their own grid, the fill exactly torch's float32 number
(the additive mask's factor `(1 - keep.float()) * -1e9` and a filled
tensor's arithmetic computed in fp32 too, so a calibration that never
masks leaves it -1e9, not a grid of [0, 0]). So a masked max is the max of
the kept values' codes, exactly, and a row masked entirely gives what
torch gives: -1e9 (the fill) for max / amax, fill + log(n) rounded to
float32 for logsumexp (-1e9), 0 for exp and sigmoid, 1/n for the softmax,
n * fill for the sum. A reader's result is the program's float32 value
when it is an output (-1e9 exactly, not clipped to a grid), or quantized
for an int8 reader onto its own calibrated grid (`own_grid`: a view or
max pool of the masked value would otherwise keep the masked value's
grid, quantize's PASS_THROUGH).

A -inf fill (`x.masked_fill(~keep, float('-inf')).max(1)`) read only by
such readers runs the same way, fp32 holding -inf: a row masked entirely
gives torch's float32 value, -inf for max / amax / sum / mean / logsumexp
(its decomposition's max kept finite where the row is all -inf, so
exp(-inf) is 0 and log(0) -inf, not -inf - -inf = NaN), 0 for exp and
sigmoid, NaN for a softmax over the masked dim. A constant mask's fill is
an fp32 add of a constant 0 / -inf (a masked_fill's x * keep + -inf * (1 -
keep) would be NaN at the kept positions). No int8 value holds -inf or
NaN: a reader whose result can be one (REASON_INF), read by an int8 step,
is refused in one line (minus_inf_in_int8), on any calibration; a program
output or an fp32 reader takes it as it is."""
from __future__ import annotations

import operator
from typing import List, Optional

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from .capture_attention_masks import _masking_scores, _reads_masked
from .capture_bool import bool_valued
from .capture_calls import _meta_shape, call_is
from .capture_rewrites import _Steps
from .ir import Node, origin

REASON = ("a masking fill (<= -1e4) and its reader computed in fp32: one int8 grid holding the fill and the kept "
          "values gives every kept value one code")

REASON_INF = ("a -inf masking fill and its reader computed in fp32, -inf (NaN for a softmax) where a row is "
              "masked entirely: no int8 value holds it")

_READERS = (torch.exp, "exp", torch.amax, "amax", torch.max, "max", torch.logsumexp, "logsumexp", torch.sigmoid,
            "sigmoid", torch.sum, "sum", torch.mean, "mean", torch.softmax, F.softmax, "softmax")
_MODULES = (nn.Softmax, nn.Sigmoid)
_FINITE = (torch.exp, "exp", torch.sigmoid, "sigmoid")     # exp(-inf), sigmoid(-inf): 0
_ARITHMETIC = ("neg", "add", "sub", "mul", "div")


def _reader(u, fn, mods) -> bool:
    """u reads fn's masked value as its first operand in one of the calls
    that lose the kept values on fn's grid (a softmax over the last dim
    takes the mask itself: capture_attention_masks)."""
    if _reads_masked(u, fn, mods) or not u.args or u.args[0] is not fn:
        return False
    if u.op == "call_module":
        return isinstance(mods.get(u.target) if mods is not None else None, _MODULES)
    return u.op in ("call_function", "call_method") and call_is(u, _READERS)


def _mark_arithmetic(name: str, by_name, depth: int) -> None:
    """The steps capture left computing a fill or an additive mask's factor
    (`torch.ones_like(x) * -1e4`, `(1 - keep.float()) * -1e9`) in fp32:
    its float32 value exactly, not rounded onto a grid spanning it."""
    n = by_name.get(name)
    if n is None or depth == 0 or n.op not in _ARITHMETIC:
        return
    n.attrs.setdefault("fp32", REASON)
    for i in n.inputs:
        _mark_arithmetic(i, by_name, depth - 1)


def masking_readers_in_fp32(fn, mods, by_name) -> bool:
    """Marks fn (a masking fill with a finite value) and its readers that
    lose the kept values on one int8 grid (see the module's note)
    ptec_fp32, with the arithmetic capture left computing the fill; True
    when it did."""
    m = _masking_scores(fn, by_name)
    if m is None or np.isnan(m.value) or m.value > 0:
        return False
    readers = [u for u in fn.users if _reader(u, fn, mods)]
    if not readers or (np.isinf(m.value) and len(readers) < len(fn.users)):
        return False
    # x.max(1) is a pair: its values (indices) are the getitem / .values (.indices) reading it
    picks = [p for u in readers for p in u.users if p.op == "call_function" and p.target in (operator.getitem, getattr)
             and len(p.args) == 2 and p.args[1] in (0, "values")]
    for u in [fn] + readers + picks:
        u.meta.setdefault("ptec_fp32", REASON if np.isfinite(m.value) or _finite(u, mods) else REASON_INF)
    for a in fn.args:
        if isinstance(a, torch.fx.Node) and a is not m.scores and _mask_node(a, by_name) is None:
            _mark_arithmetic(a.name, by_name, 4)
    return True


def _finite(u, mods) -> bool:
    """u's result is finite where its operand is -inf (exp, sigmoid: 0)."""
    if u.op == "call_module":
        return isinstance(mods.get(u.target) if mods is not None else None, nn.Sigmoid)
    return u.op in ("call_function", "call_method") and call_is(u, _FINITE)


def minus_inf_constant_nodes(fn, by_name) -> Optional[List[Node]]:
    """A -inf fill by a constant mask (or a constant 0 / -inf bias) that
    masking_readers_in_fp32 marked: the scores plus a constant holding -inf
    where masked (the bias's finite part elsewhere), one fp32 add. Else None."""
    if fn.meta.get("ptec_fp32") not in (REASON, REASON_INF):
        return None
    m = _masking_scores(fn, by_name)
    if m is None or isinstance(m.mask, str) or m.value != -np.inf:
        return None
    shape = _meta_shape(fn)
    mask = np.broadcast_to(~m.mask if m.invert else m.mask, shape)
    rest = np.broadcast_to(m.bias, shape) if m.bias is not None else np.zeros(shape, np.float32)
    s = _Steps(fn.name)
    s("add", [m.scores.name, s.const(np.where(mask, -np.inf, rest))], fp32=fn.meta["ptec_fp32"])
    return s.done()


def minus_inf_in_int8(n, reader=None) -> Optional[str]:
    """Why an int8 step cannot read n (a reader of a -inf fill whose result
    is -inf or NaN where a row is masked entirely; reader: lowering's
    (origin, backend) of the step reading it, when known), else None."""
    if n.attrs.get("fp32") != REASON_INF:
        return None
    who = f"an int8 step ({reader[0]})" if reader else "an int8 step"
    return (f"{origin(n)} is -inf (NaN for a softmax) where its -inf masking fill masks a row entirely, and {who} "
            "reads it: no int8 value holds -inf; fill with a finite value such as -1e9, or keep the result a "
            "program output or fp32")


def _mask_node(a, by_name) -> Optional[str]:
    """a's name when it is a bool (the mask, kept as it is), else None."""
    n = by_name.get(a.name)
    return a.name if n is not None and bool_valued(n) else None


def own_grid(n) -> bool:
    """A view or max pool of a masked value computed in fp32 (the reader's
    steps above): quantized on its own calibrated range for an int8 reader,
    not on the masked value's, which spans the fill (quantize's
    PASS_THROUGH)."""
    return n.attrs.get("fp32") in (REASON, REASON_INF)
