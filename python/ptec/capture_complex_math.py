"""Element-wise functions of a complex value (issue 15), on the [..., 2]
pair of real and imaginary parts that ptec.capture_complex carries for it,
with torch's principal-branch conventions:

- exp(z) = e^a (cos b, sin b): three LUTs (exp, cos, sin) and two muls;
- log(z) = (log |z|, angle z): |z| and the angle as capture_complex's abs
  and angle (fp32 hypot, atan2), a log LUT;
- z ** p, torch.pow(z, p), Tensor.pow for a real number p: polar,
  |z|^p (cos p theta, sin p theta) with theta = atan2(b, a) in (-pi, pi]
  (torch's principal branch: sqrt(-1) = i); p = 0 is 1 (torch's 0 ** 0),
  p = 1 the value, p = 2 z * z, p = -1 the reciprocal; sqrt is p = 1/2;
- 1 / z = conj z / |z|^2 and z / w = z conj w / |w|^2 (the numerator as
  capture_complex's products, the real |w|^2 = c^2 + d^2 one int8 div);
  a real value, number or constant over a complex value the same;
- torch.sgn(z) = z / max(|z|, 1.2e-38): z / |z|, 0 at 0 (torch's);
- z.square(), torch.square(z): z * z.

Where torch's answer is not finite (log 0, 1 / 0, 0 ** p for p < 0) the
int8 LUTs saturate and the int8 div gives 0. Near the negative real axis
the angle jumps from pi to -pi (torch's branch cut): log's imaginary part,
sqrt's and pow's results jump with it, so a value whose imaginary part
rounds across 0 on the int8 grid lands on the other side of the cut."""
from __future__ import annotations

import operator
from typing import Optional

import numpy as np
import torch

from .capture_calls import call_is
from .capture_rewrites import _Steps

_EXP = (torch.exp, "exp")
_LOG = (torch.log, "log")
_SQRT = (torch.sqrt, "sqrt")
_POW = (torch.pow, operator.pow, "pow")
_RECIPROCAL = (torch.reciprocal, "reciprocal")
_SGN = (torch.sgn, "sgn")
_SQUARE = (torch.square, "square")
TINY = float(np.finfo(np.float32).tiny)


def _polar(s: _Steps, p: str, shape):
    """|z| and angle z of pair p (each S + [1]): fp32 hypot and atan2."""
    from .capture_complex import _parts
    re, im = _parts(s, p, shape)
    return s("binary_math", [re, im], fn="hypot"), s("binary_math", [im, re], fn="atan2")


def _power(s: _Steps, p: str, shape, exponent: float) -> str:
    """|z|^p (cos p theta, sin p theta)."""
    from .capture_complex import _join
    r, theta = _polar(s, p, shape)
    magnitude = (s("elementwise", [r], fn="sqrt") if exponent == 0.5
                 else s("elementwise", [r], fn="pow", exponent=exponent))
    angle = s("mul", [theta, s.const(np.float32(exponent))])
    return _join(s, s("mul", [magnitude, s("elementwise", [angle], fn="cos")]),
                 s("mul", [magnitude, s("elementwise", [angle], fn="sin")]), len(shape))


def _squared(s: _Steps, p: str, shape) -> str:
    from .capture_complex import _mul
    return _mul(s, p, shape, ("pair", p, shape), shape)


def over_pair(s: _Steps, numerator, w: str, w_shape, out_shape) -> Optional[str]:
    """numerator (capture_complex's operand: a pair, real value, number or
    constant) over the complex value w: numerator times 1 / w = conj w *
    |w|^-2, |w|^-2 fp32 pow of the fp32 hypot (quantized as a
    reciprocal: |w|^2 in int8 would lose its small values, 8 output
    steps measured)."""
    from .capture_complex import _join, _mul, _parts, _trailing
    c, d = _parts(s, w, w_shape)
    inverse = s("binary_math", [s("binary_math", [c, d], fn="hypot"), s.const(np.float32(-2.0))], fn="pow")
    whole = list(w_shape) + [2]
    one = s("mul", [_join(s, c, s("neg", [d]), len(w_shape)),
                    s.widen(_trailing(s, inverse, w_shape), list(w_shape) + [1], whole)])
    if numerator == ("number", 1.0 + 0j) and list(w_shape) == list(out_shape):
        return one
    return _mul(s, one, w_shape, numerator, out_shape)


def _exponent(fn) -> Optional[float]:
    """The real number p of z ** p, torch.pow(z, p), z.pow(p)."""
    if len(fn.args) != 2 or fn.kwargs:
        return None
    p = fn.args[1]
    if isinstance(p, bool) or not isinstance(p, (int, float)):
        return None
    return float(p)


def math_nodes(fn, s: _Steps, p: str, shape, out_shape) -> Optional[str]:
    """The pair of one element-wise function of complex pair p (of S), or
    None for another call."""
    from .capture_complex import _join, _parts
    if list(out_shape) != list(shape):
        return None
    one = len(fn.args) == 1 and not fn.kwargs
    if call_is(fn, _EXP) and one:
        re, im = _parts(s, p, shape)
        e = s("elementwise", [re], fn="exp")
        return _join(s, s("mul", [e, s("elementwise", [im], fn="cos")]),
                     s("mul", [e, s("elementwise", [im], fn="sin")]), len(shape))
    if call_is(fn, _LOG) and one:
        r, theta = _polar(s, p, shape)
        return _join(s, s("elementwise", [r], fn="log"), theta, len(shape))
    if call_is(fn, _SQRT) and one:
        return _power(s, p, shape, 0.5)
    if call_is(fn, _SQUARE) and one:
        return _squared(s, p, shape)
    if call_is(fn, _RECIPROCAL) and one:
        return over_pair(s, ("number", 1.0 + 0j), p, shape, out_shape)
    if call_is(fn, _SGN) and one:
        r, _ = _polar(s, p, shape)
        r = s("clamp", [r], lo=TINY, hi=None)
        return s("div", [p, s.widen(r, list(shape) + [1], list(shape) + [2])])
    if call_is(fn, _POW):
        exponent = _exponent(fn)
        if exponent is None:
            return None
        if exponent == 0:
            ones = s.const(np.broadcast_to(np.array([1.0, 0.0], np.float32), tuple(shape) + (2,)).copy())
            return s("identity", [ones])    # (a value, not a constant: capture_complex reads constants as numbers)
        if exponent == 1:
            return s("identity", [p])
        if exponent == 2:
            return _squared(s, p, shape)
        if exponent == -1:
            return over_pair(s, ("number", 1.0 + 0j), p, shape, out_shape)
        return _power(s, p, shape, exponent)
    return None
