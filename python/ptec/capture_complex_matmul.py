"""Matrix products of complex values (issue 15): torch.matmul / @ /
torch.mm / torch.bmm of two complex operands (values or constants; torch
itself refuses a complex times a float one: "expected scalar type
ComplexFloat but found Float"), on the [..., 2] pairs ptec.capture_complex
carries: (A + iB)(C + iD) = (AC - BD) + i(AD + BC), four int8 matmuls of
the parts (each viewed as a real value of its own shape, a constant's
parts as constants), a sub and an add, joined along the pair's dim. torch
broadcasts the batch dims as for real values, and so do the parts'
matmuls."""
from __future__ import annotations

import operator
from typing import Optional

import numpy as np
import torch

from .capture_calls import call_is
from .capture_rewrites import _Steps

MATMULS = (torch.matmul, torch.mm, torch.bmm, operator.matmul, "matmul", "mm", "bmm")


def _real_imag(s: _Steps, operand):
    """The parts of a pair or complex constant, each a real value of its shape."""
    from .capture_complex import _parts
    if operand[0] == "constant":
        v = np.asarray(operand[1])
        return s.const(np.real(v).astype(np.float32)), s.const(np.imag(v).astype(np.float32)), list(v.shape)
    shape = list(operand[2])
    return tuple(s("reshape", [q], target_shape=shape) for q in _parts(s, operand[1], shape)) + (shape,)


def matmul_nodes(fn, by_name, s: _Steps, out_shape) -> Optional[str]:
    """The pair of a matrix product of two complex operands, or None."""
    from .capture_complex import _join, _operand, is_complex
    if not call_is(fn, MATMULS) or len(fn.args) != 2 or fn.kwargs or not is_complex(fn):
        return None
    x, y = (_operand(a, by_name) for a in fn.args)
    if x is None or y is None or "pair" not in (x[0], y[0]) or any(o[0] not in ("pair", "constant") for o in (x, y)):
        return None
    if any(len(o[2] if o[0] == "pair" else np.shape(o[1])) < 2 for o in (x, y)):
        return None                                   # (a vector operand: torch's 1-D rules, not rewritten)
    a, b, _ = _real_imag(s, x)
    c, d, _ = _real_imag(s, y)
    re = s("sub", [s("matmul", [a, c]), s("matmul", [b, d])])
    im = s("add", [s("matmul", [a, d]), s("matmul", [b, c])])
    whole = list(out_shape) + [1]
    return _join(s, s("reshape", [re], target_shape=whole), s("reshape", [im], target_shape=whole), len(out_shape))
