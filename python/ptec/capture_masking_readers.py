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
grid, quantize's PASS_THROUGH). A -inf fill stays as
capture_attention_masks has it (its logsumexp would be NaN here)."""
from __future__ import annotations

import operator
from typing import Optional

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from .capture_attention_masks import _masking_scores, _reads_masked
from .capture_bool import bool_valued
from .capture_calls import call_is

REASON = ("a masking fill (<= -1e4) and its reader computed in fp32: one int8 grid holding the fill and the kept "
          "values gives every kept value one code")

_READERS = (torch.exp, "exp", torch.amax, "amax", torch.max, "max", torch.logsumexp, "logsumexp", torch.sigmoid,
            "sigmoid", torch.sum, "sum", torch.mean, "mean", torch.softmax, F.softmax, "softmax")
_MODULES = (nn.Softmax, nn.Sigmoid)
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
    if m is None or not np.isfinite(m.value):
        return False
    readers = [u for u in fn.users if _reader(u, fn, mods)]
    if not readers:
        return False
    # x.max(1) is a pair: its values (indices) are the getitem / .values (.indices) reading it
    picks = [p for u in readers for p in u.users if p.op == "call_function" and p.target in (operator.getitem, getattr)
             and len(p.args) == 2 and p.args[1] in (0, "values")]
    for u in [fn] + readers + picks:
        u.meta.setdefault("ptec_fp32", REASON)
    for a in fn.args:
        if isinstance(a, torch.fx.Node) and a is not m.scores and _mask_node(a, by_name) is None:
            _mark_arithmetic(a.name, by_name, 4)
    return True


def _mask_node(a, by_name) -> Optional[str]:
    """a's name when it is a bool (the mask, kept as it is), else None."""
    n = by_name.get(a.name)
    return a.name if n is not None and bool_valued(n) else None


def own_grid(n) -> bool:
    """A view or max pool of a masked value computed in fp32 (the reader's
    steps above): quantized on its own calibrated range for an int8 reader,
    not on the masked value's, which spans the fill (quantize's
    PASS_THROUGH)."""
    return n.attrs.get("fp32") == REASON
