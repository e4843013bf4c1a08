"""Steep saturating gates of a computed value in fp32 (issue 15):
`torch.clamp(self.fc(x) * 1e6, 0, 1)`, `F.hardtanh(fc(x) * 1e6)`,
`torch.sigmoid(fc(x) * 1e6)`, `torch.tanh(fc(x) / 1e-6)`, with a number
added or subtracted on either side of the factor (`clamp(fc(x) * 1e6 + 0.5,
0, 1)`, `clamp((fc(x) - t) * 1e6, 0, 1)`).

Such a gate is a step function of fc(x)'s sign (or of its distance to a
threshold): its ramp, (hi - lo) / |c| of fc(x) wide, is far narrower than
any int8 step of fc(x). On int8 grids fc(x) is rounded to its step s
before the factor, so an fc(x) within s / 2 of the ramp reads as 0 (or the
other side) and the gate gives lo where torch gives hi: 255 output steps
on a [0, 1] gate (measured, seeds 0..2), the same loss as heaviside's table
(capture_step_functions). Here the gate, its factor and its additions, and
the steps computing fc(x) from the program's float inputs are computed
once more in fp32 (capture_sign's chains, MAX_STEPS and the program's
MAX_WEIGHTS, shared with the signs in graph order), and the gate's readers
read that: torch's value up to fp32 rounding, then, for an int8 reader,
the gate's own calibrated grid (quantize: not its input's, which an int8
clamp keeps; lo and hi of a [0, 1] or [-1, 1] gate sit on it). The int8 steps stay for
their other readers, or go.

Steep means a factor over the gate's width of at least STEEP (8 per unit
of fc(x)): on int8 grids the error is about |c| s / 2 of the gate's
input, |c| R / (2 (hi - lo)) of its 255 output steps for an fc(x) over a
range R, so over 2 output steps whenever R > 0.5 (a sigmoid's or tanh's
width taken as 4 and 2, their slopes at 0 c / 4 and c): measured
`clamp(fc(x) * 10, 0, 1)` 19.03 and `sigmoid(fc(x) * 100)` 34.16 output
steps, 0.00 here. A gentler gate (`sigmoid(2 * fc(x))`, `clamp(fc(x) * 4,
0, 1)`) is an ordinary layer and keeps its int8 kernel: whether its ramp
is narrow against fc(x)'s grid is known only after calibration. A gate of a program input itself
(`clamp(x * 1e6, 0, 1)`) reads the input's float value the same way
(the input's int8 grid rounds it as a layer's does), except under int8_io,
where the input arrives as its int8 codes and the fp32 copy would hold
nothing more (number_steps_only). A gate whose chain has a step without an
fp32 kernel, or is past the budget (a note says so, past_budget_note),
keeps its int8 steps."""
from __future__ import annotations

import math
from typing import Optional, Tuple

import numpy as np

from .ir import Node

STEEP = 8.0            # |slope| / the gate's output width, per unit of its operand
GATE = "steep_gate"     # attrs key: capture_sign.exact_operands computes this node and its operand in fp32
GATE_FP32 = ("a steep saturating gate (a clamp / sigmoid / tanh of a value times a huge factor, a step function "
             "of it), computed in fp32 with its operand: on the operand's int8 grid a value near the ramp reads "
             "as the other side (issue 15)")
_WIDTH = {"sigmoid": 4.0, "tanh": 2.0}      # the input width over which the function rises: about 1 / its slope


def _number(g, name: str) -> Optional[float]:
    """The finite float value of a one-element constant, else None."""
    c = g.node(name)
    if c.op != "constant" or c.attrs.get("dtype"):
        return None
    v = np.asarray(c.attrs.get("value"))
    if v.size != 1 or v.dtype.kind != "f":
        return None
    v = float(v.reshape(()))
    return v if math.isfinite(v) else None


def _other(g, n: Node) -> Tuple[Optional[str], Optional[float]]:
    """(the tensor operand, the number) of a two-input step with one constant number, else (None, None)."""
    if len(n.inputs) != 2:
        return None, None
    a, b = n.inputs
    if _number(g, b) is not None and _number(g, a) is None:
        return a, _number(g, b)
    if _number(g, a) is not None and _number(g, b) is None and n.op in ("mul", "add"):
        return b, _number(g, a)
    return None, None


def _factor(g, name: str) -> float:
    """The gain from the gate's operand down to the value it scales: through
    additions of numbers, the product of the factors of muls and divs by a
    number (1.0 where there is none)."""
    gain = 1.0
    while True:
        n = g.node(name)
        if n.op not in ("mul", "div", "add", "sub") or n.attrs.get("dtype") or n.attrs.get("fp32"):
            return gain
        x, c = _other(g, n)
        if x is None:
            return gain
        if n.op == "mul":
            gain *= abs(c)
        elif n.op == "div":
            if n.inputs[0] != x or c == 0:
                return gain
            gain /= abs(c)
        name = x


def _bounds(g, n: Node) -> Optional[Tuple[float, float, str]]:
    """(lo, hi, operand) of a clamp with both bounds, or of two clamps, one
    bound each, the inner read only by the outer; else None."""
    if n.op != "clamp" or len(n.inputs) != 1:
        return None
    lo, hi, x = n.attrs.get("lo"), n.attrs.get("hi"), n.inputs[0]
    inner = g.node(x)
    if (lo is None or hi is None) and inner.op == "clamp" and len(inner.inputs) == 1 \
            and len(g.users(inner.name)) == 1 and not inner.attrs.get("fp32"):
        ilo, ihi = inner.attrs.get("lo"), inner.attrs.get("hi")
        if lo is None and ilo is not None and ihi is None:
            lo, x = ilo, inner.inputs[0]
        elif hi is None and ihi is not None and ilo is None:
            hi, x = ihi, inner.inputs[0]
    if lo is None or hi is None or not float(hi) > float(lo):
        return None
    return float(lo), float(hi), x


def steep(g, n: Node) -> bool:
    """Whether n is a clamp (both bounds) / sigmoid / tanh whose operand is
    a value times a factor steep against the gate's width (module doc)."""
    if n.attrs.get("fp32") or n.attrs.get("dtype") or len(n.inputs) != 1:
        return False
    if n.op == "clamp":
        got = _bounds(g, n)
        if got is None:
            return False
        lo, hi, x = got
        width = hi - lo
    elif n.op in _WIDTH:
        x, width = n.inputs[0], _WIDTH[n.op]
    else:
        return False
    return _factor(g, x) / width >= STEEP


def steep_gates(g) -> None:
    """Marks each steep gate whose operand's chain capture_sign can copy
    in fp32 within its budget (GATE): exact_operands copies the chain and
    runs the gate on the copy, in fp32."""
    from .capture_sign import _chain, _within_budget
    for n in [n for n in g.nodes if steep(g, n)]:
        chain = _chain(g, n.inputs[0])
        if chain and _within_budget(chain, n, g):
            n.attrs[GATE] = True


def number_steps_only(g, steps) -> bool:
    """Whether steps only move a program input or add / multiply it by
    numbers (no layer): under int8_io, whose input arrives as its int8
    codes, their fp32 copy holds nothing the int8 steps lose."""
    for s in steps:
        if s.attrs.get("weight") is not None:
            return False
        if s.op in ("mul", "div", "add", "sub") and _other(g, s)[0] is None:
            return False
    from .capture_sign import MOVE_OPS
    return all(s.op in MOVE_OPS or s.op in ("mul", "div", "add", "sub", "clamp") for s in steps)
