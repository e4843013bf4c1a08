"""More element-wise functions of a complex value (issue 15), on the
[..., 2] pair (a, b) of real and imaginary parts that ptec.capture_complex
carries, each from real formulas whose pieces are bounded (so that int8
grids keep them) and with torch's principal branches:

- sin z = (sin a cosh b, cos a sinh b), cos z = (cos a cosh b, -sin a
  sinh b), sinh z = (sinh a cos b, cosh a sin b), cosh z = (cosh a cos b,
  sinh a sin b): four LUTs and two muls;
- tanh z = (sinh 2a, sin 2b) / (cosh 2a + cos 2b), each divided by cosh 2a:
  (tanh 2a, sin 2b sech 2a) / (1 + cos 2b sech 2a) (every LUT in [-1, 1],
  the denominator in [0, 2], 0 at tanh's poles); tan z = -i tanh(iz) the
  same with a and b swapped; sigmoid z = 1/2 + tanh(z / 2) / 2;
- log10 z, log2 z = log z / ln 10 (ln 2); rsqrt z = z ** -1/2 (capture_
  complex_math's polar power);
- asin z = (asin beta, copysign(acosh alpha, b)), acos z = (acos beta,
  -copysign(acosh alpha, b)), acosh z = (acosh alpha, copysign(acos beta,
  b)) with alpha, beta = (|z + 1| +- |z - 1|) / 2, spelled asin beta =
  atan2(a, sqrt(alpha^2 - a^2)), acosh alpha = log(alpha + sqrt(alpha^2 -
  1)) in fp32 (but the log's LUT); asinh z = -i asin(iz),
  atanh z = ((log |1 + z| - log |1 - z|) / 2, atan2(b, (1 - |z|^2) / 2) / 2),
  atan z = -i atanh(iz) (Hull et al.'s real forms of the principal
  values: the branch cuts' sides as torch's for a cut reached from
  above, an imaginary part of +0);
- exp2 z = exp(z ln 2), log1p z = log(1 + z), expm1 z = exp z - 1 where
  torch defines them for a complex value (torch 1.13 does not: it raises,
  and capture_complex refuses quoting torch);
- powers with a complex exponent or base (torch's exp(w log z), principal
  log): z ** w, x ** w (x real), z ** x, c ** z for a number c (c ** z =
  exp(z log c); 0 ** z the zero pair, torch's value where Re z > 0), a
  complex number as exponent: log z = (log max(|z|, tiny), angle z), times
  w as capture_complex's products, exp, times 1 where |z| > 0 and 0 at
  z = 0 (torch's 0 ** w = 0 for Re w > 0; its NaN / inf elsewhere is no
  int8 value);
- torch's layers of an element-wise function it defines on a complex
  value (nn.Tanh, nn.Sigmoid, nn.SiLU z * sigmoid z, nn.Softsign z / (1 +
  |z|), nn.Tanhshrink z - tanh z) and the dropouts in eval (the value).

Near the functions' poles (tanh at b = pi/2 + k pi on a = 0, ...) and
branch cuts a value rounding across on the int8 grid lands far away, as
for capture_complex_math's log and sqrt."""
from __future__ import annotations

import math
import operator
from typing import Optional

import numpy as np
import torch
import torch.nn.functional as F

from .capture_calls import call_is, torch_functions
from .capture_rewrites import _Steps

TINY = float(np.finfo(np.float32).tiny)
FP32 = ("an inverse function of a complex value, computed in fp32 (alpha and beta's int8 grids near 1 would "
        "make acosh's and asin's LUTs jump)")

# the real functions the LUTs are made of: m * f(k x) + c (ir.ELEMENTWISE's "math", name "complex_part")
_REAL = {
    "identity": lambda v: v, "square": lambda v: v * v, "exp": torch.exp, "sin": torch.sin, "cos": torch.cos,
    "sinh": torch.sinh, "cosh": torch.cosh, "tanh": torch.tanh, "sech": lambda v: 1.0 / torch.cosh(v),
    "log": lambda v: torch.log(torch.clamp(v, min=0.0)),
    "positive": lambda v: (v > 0).to(v.dtype),
}
MATH_FUNCTIONS = {"complex_part": lambda x, a: a["m"] * _REAL[a["f"]](a["k"] * x) + a["c"]}

_SIN, _COS, _TAN = (torch.sin, "sin"), (torch.cos, "cos"), (torch.tan, "tan")
_SINH, _COSH = (torch.sinh, "sinh"), (torch.cosh, "cosh")
_TANH = (torch.tanh, "tanh", F.tanh)
_SIGMOID = (torch.sigmoid, "sigmoid", F.sigmoid) + torch_functions("special.expit")
_LOG10, _LOG2 = (torch.log10, "log10"), (torch.log2, "log2")
_RSQRT = (torch.rsqrt, "rsqrt")
_ASIN = (torch.asin, "asin", torch.arcsin, "arcsin")
_ACOS = (torch.acos, "acos", torch.arccos, "arccos")
_ATAN = (torch.atan, "atan", torch.arctan, "arctan")
_ASINH = (torch.asinh, "asinh", torch.arcsinh, "arcsinh")
_ACOSH = (torch.acosh, "acosh", torch.arccosh, "arccosh")
_ATANH = (torch.atanh, "atanh", torch.arctanh, "arctanh")
_EXP2 = (torch.exp2, "exp2") + torch_functions("special.exp2")
_LOG1P = (torch.log1p, "log1p") + torch_functions("special.log1p")
_EXPM1 = (torch.expm1, "expm1") + torch_functions("special.expm1")
_SILU = (F.silu,) + torch_functions("_C._nn.silu")
_SOFTSIGN, _TANHSHRINK = (F.softsign,), (F.tanhshrink,)
POWERS = (torch.pow, operator.pow, "pow")
FUNCTIONS = (_SIN + _COS + _TAN + _SINH + _COSH + _TANH + _SIGMOID + _LOG10 + _LOG2 + _RSQRT + _ASIN + _ACOS + _ATAN
             + _ASINH + _ACOSH + _ATANH + _EXP2 + _LOG1P + _EXPM1 + _SILU + _SOFTSIGN + _TANHSHRINK)


POWER_FP32 = "w log z of a complex power, computed in fp32 (its int8 products, then exp, would lose ~5 output steps)"


def _lut(s: _Steps, src: str, f: str, k=1.0, m=1.0, c=0.0) -> str:
    """m * f(k src) + c, one LUT."""
    return s("elementwise", [src], fn="math", name="complex_part", f=f, k=float(k), m=float(m), c=float(c))


def _parts(s, p, shape):
    from .capture_complex import _parts as parts
    return parts(s, p, shape)


def _join(s, re, im, shape):
    return s("cat", [re, im], dim=len(shape))


def exp_pair(s: _Steps, p: str, shape, scale: Optional[str] = None) -> str:
    """e^a (cos b, sin b) (times scale, of shape S + [1], when given)."""
    re, im = _parts(s, p, shape)
    e = _lut(s, re, "exp")
    if scale is not None:
        e = s("mul", [e, scale])
    return _join(s, s("mul", [e, _lut(s, im, "cos")]), s("mul", [e, _lut(s, im, "sin")]), shape)


def _products(s, shape, x, y, kinds):
    """(f1(x) g1(y), f2(x) g2(y)) for kinds ((f1, g1, m1), (f2, g2, m2))."""
    out = [s("mul", [_lut(s, x, f, m=m), _lut(s, y, g)]) for f, g, m in kinds]
    return _join(s, out[0], out[1], shape)


def _tanh_like(s: _Steps, x: str, y: str, k: float) -> tuple:
    """tanh(k x + i k y) / ... as (tanh k x / E, sin k y sech k x / E),
    E = 1 + cos k y sech k x: tanh z for k = 2 (of z / 2 ... see callers)."""
    u = _lut(s, x, "sech", k=k)
    e = _lut(s, s("mul", [_lut(s, y, "cos", k=k), u]), "identity", c=1.0)
    return s("div", [_lut(s, x, "tanh", k=k), e]), s("div", [s("mul", [_lut(s, y, "sin", k=k), u]), e])


def _copysign(s: _Steps, magnitude: str, sign: str) -> str:
    return s("binary_math", [magnitude, sign], fn="copysign", fp32=FP32)


def _hypot_shifted(s: _Steps, x: str, y: str, shift: float) -> str:
    """|(x + shift) + i y|: fp32 hypot."""
    return s("binary_math", [_lut(s, x, "identity", c=shift), y], fn="hypot")


def _arc(s: _Steps, x: str, y: str):
    """For w = x + iy, alpha = (|w + 1| + |w - 1|) / 2 (so x = alpha beta):
    sqrt(alpha^2 - x^2) (= alpha sqrt(1 - beta^2)) and acosh alpha = log(alpha
    + sqrt(alpha^2 - 1)), all in fp32 but the log's LUT (of a value >= 1,
    where log's slope is at most 1: acosh's and asin's own LUTs would be
    steep at alpha = 1, |beta| = 1, which int8 grids of alpha and beta
    reach; 8 output steps measured so)."""
    def f(op, ins, **attrs):
        return s(op, ins, fp32=FP32, **attrs)

    def root(v):
        return f("binary_math", [f("clamp", [v], lo=0.0, hi=None), s.const(np.float32(0.5))], fn="pow")
    h1 = f("binary_math", [f("add", [x, s.const(np.float32(1.0))]), y], fn="hypot")
    h2 = f("binary_math", [f("sub", [x, s.const(np.float32(1.0))]), y], fn="hypot")
    alpha = f("mul", [f("add", [h1, h2]), s.const(np.float32(0.5))])
    square = f("mul", [alpha, alpha])
    across = root(f("sub", [square, f("mul", [x, x])]))
    return across, _lut(s, f("add", [alpha, root(f("sub", [square, s.const(np.float32(1.0))]))]), "log")


def _atanh_parts(s: _Steps, x: str, y: str):
    """atanh(x + iy) = ((log |1 + z| - log |1 - z|) / 2, atan2(y, (1 - |z|^2) / 2) / 2)."""
    h1, h2 = _hypot_shifted(s, x, y, 1.0), _hypot_shifted(s, x, y, -1.0)
    re = s("sub", [_lut(s, h1, "log", m=0.5), _lut(s, h2, "log", m=0.5)])
    r = s("binary_math", [x, y], fn="hypot")
    angle = s("binary_math", [y, _lut(s, r, "square", m=-0.5, c=0.5)], fn="atan2")
    return re, s("mul", [angle, s.const(np.float32(0.5))])


def function_nodes(fn, s: _Steps, p: str, shape, out_shape) -> Optional[str]:
    """The pair of one function of complex pair p (of S), or None."""
    from .capture_complex_math import _polar, _power
    if list(out_shape) != list(shape) or len(fn.args) != 1 or fn.kwargs not in ({}, {"inplace": False}) \
            or not call_is(fn, FUNCTIONS):
        return None
    a, b = _parts(s, p, shape)
    if call_is(fn, _SIN):
        return _products(s, shape, a, b, (("sin", "cosh", 1.0), ("cos", "sinh", 1.0)))
    if call_is(fn, _COS):
        return _products(s, shape, a, b, (("cos", "cosh", 1.0), ("sin", "sinh", -1.0)))
    if call_is(fn, _SINH):
        return _products(s, shape, a, b, (("sinh", "cos", 1.0), ("cosh", "sin", 1.0)))
    if call_is(fn, _COSH):
        return _products(s, shape, a, b, (("cosh", "cos", 1.0), ("sinh", "sin", 1.0)))
    if call_is(fn, _TANH):
        return _join(s, *_tanh_like(s, a, b, 2.0), shape)
    if call_is(fn, _TAN):                               # -i tanh(iz), iz = -b + ia
        im, re = _tanh_like(s, b, a, 2.0)
        return _join(s, re, im, shape)
    if call_is(fn, _SIGMOID):
        return sigmoid_pair(s, a, b, shape)
    if call_is(fn, _LOG10 + _LOG2):
        factor = 1.0 / math.log(10.0 if call_is(fn, _LOG10) else 2.0)
        r, theta = _polar(s, p, shape)
        return _join(s, _lut(s, r, "log", m=factor), s("mul", [theta, s.const(np.float32(factor))]), shape)
    if call_is(fn, _RSQRT):
        return _power(s, p, shape, -0.5)
    if call_is(fn, _ASIN + _ACOS + _ACOSH):
        across, acosh = _arc(s, a, b)
        if call_is(fn, _ASIN):                          # (asin beta, copysign(acosh alpha, b))
            return _join(s, s("binary_math", [a, across], fn="atan2"), _copysign(s, acosh, b), shape)
        acos = s("binary_math", [across, a], fn="atan2")
        if call_is(fn, _ACOS):                          # (acos beta, -copysign(acosh alpha, b))
            return _join(s, acos, s("mul", [_copysign(s, acosh, b), s.const(np.float32(-1.0))], fp32=FP32), shape)
        return _join(s, acosh, _copysign(s, acos, b), shape)
    if call_is(fn, _ASINH):                             # -i asin(iz), iz = -b + ia
        across, acosh = _arc(s, b, a)
        return _join(s, _copysign(s, acosh, a), s("binary_math", [b, across], fn="atan2"), shape)
    if call_is(fn, _ATANH):
        return _join(s, *_atanh_parts(s, a, b), shape)
    if call_is(fn, _ATAN):                              # -i atanh(iz): (Im atanh(iz), -Re atanh(iz))
        re, im = _atanh_parts(s, s("neg", [b]), a)
        return _join(s, im, s("neg", [re]), shape)
    if call_is(fn, _EXP2):
        return exp_pair(s, s("mul", [p, s.const(np.float32(math.log(2.0)))]), shape)
    if call_is(fn, _LOG1P):
        r, theta = _polar(s, _join(s, _lut(s, a, "identity", c=1.0), b, shape), shape)
        return _join(s, _lut(s, r, "log"), theta, shape)
    if call_is(fn, _EXPM1):
        e = exp_pair(s, p, shape)
        re, im = _parts(s, e, shape)
        return _join(s, _lut(s, re, "identity", c=-1.0), im, shape)
    if call_is(fn, _SILU):
        return silu_pair(s, p, a, b, shape)
    if call_is(fn, _SOFTSIGN):
        return softsign_pair(s, p, a, b, shape)
    if call_is(fn, _TANHSHRINK):
        return s("sub", [p, _join(s, *_tanh_like(s, a, b, 2.0), shape)])
    return None


def sigmoid_pair(s: _Steps, a: str, b: str, shape) -> str:
    """1/2 + tanh(z / 2) / 2."""
    re, im = _tanh_like(s, a, b, 1.0)
    return _join(s, _lut(s, re, "identity", m=0.5, c=0.5), s("mul", [im, s.const(np.float32(0.5))]), shape)


def silu_pair(s: _Steps, p: str, a: str, b: str, shape) -> str:
    from .capture_complex import _mul
    return _mul(s, p, list(shape), ("pair", sigmoid_pair(s, a, b, shape), list(shape)), list(shape))


def softsign_pair(s: _Steps, p: str, a: str, b: str, shape) -> str:
    """z / (1 + |z|)."""
    r = s("binary_math", [a, b], fn="hypot")
    return s("div", [p, s.widen(_lut(s, r, "identity", c=1.0), list(shape) + [1], list(shape) + [2])])


def module_nodes(module, s: _Steps, p: str, shape) -> Optional[str]:
    """nn.Tanh, nn.Sigmoid, nn.SiLU, nn.Softsign, nn.Tanhshrink of complex
    pair p, the dropouts (eval: the value); None for another layer."""
    nn = torch.nn
    dropouts = tuple(getattr(nn, n) for n in ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
                                              "FeatureAlphaDropout") if hasattr(nn, n))
    if isinstance(module, dropouts) and not module.training:
        return s("identity", [p])
    if not isinstance(module, (nn.Tanh, nn.Sigmoid, nn.SiLU, nn.Softsign, nn.Tanhshrink)):
        return None
    a, b = _parts(s, p, shape)
    if isinstance(module, nn.Sigmoid):
        return sigmoid_pair(s, a, b, shape)
    if isinstance(module, nn.SiLU):
        return silu_pair(s, p, a, b, shape)
    if isinstance(module, nn.Softsign):
        return softsign_pair(s, p, a, b, shape)
    tanh = _join(s, *_tanh_like(s, a, b, 2.0), shape)
    return tanh if isinstance(module, nn.Tanh) else s("sub", [p, tanh])


def _as_pair(s: _Steps, real) -> str:
    """capture_complex's real operand as the pair (x, +0) (torch's promotion:
    a negative x's angle is pi, not the -pi of a -0 imaginary part)."""
    from .capture_complex import _trailing
    shape = list(real[2])
    x = _trailing(s, real[1], shape)
    return _join(s, x, s("sub", [x, x]), shape)


def power_nodes(fn, by_name, s: _Steps, out_shape) -> Optional[str]:
    """z ** w, x ** w, z ** x, c ** z with a complex exponent or base
    (torch's exp(w log z)); None for z ** p with a real number p
    (capture_complex_math) and any other call."""
    from .capture_complex import _mul, _operand, _wide, is_complex
    if not call_is(fn, POWERS) or len(fn.args) != 2 or fn.kwargs or not is_complex(fn):
        return None
    base, w = (_operand(v, by_name) for v in fn.args)
    if base is None or w is None:
        return None
    if w[0] == "number" and w[1].imag == 0 and base[0] == "pair":
        return None                                     # z ** p (capture_complex_math)
    out = list(out_shape)
    if base[0] == "number":                             # c ** w = exp(w log c)
        if w[0] not in ("pair", "real"):
            return None
        p = w[1] if w[0] == "pair" else _as_pair(s, w)
        if base[1] == 0:
            return s("mul", [p, s.const(np.float32(0.0))])
        prod = _mul(s, p, list(w[2]), ("number", complex(np.log(complex(base[1])))), out)
        return exp_pair(s, prod, out)
    if base[0] == "real":                               # x as the pair (x, 0)
        p, shape = _as_pair(s, base), list(base[2])
    elif base[0] == "pair":
        p, shape = base[1], list(base[2])
    else:
        return None
    from .capture_complex_math import _polar
    r, theta = _polar(s, p, shape)
    log = _join(s, _lut(s, s("clamp", [r], lo=TINY, hi=None), "log"), theta, shape)
    before = len(s.nodes)
    prod = _mul(s, log, shape, w, out)
    if prod is None:
        return None
    for n in s.nodes[before:]:              # w log z in fp32: int8 products of it, then exp, would magnify
        if n.op in ("mul", "sub", "add", "cat", "slice", "reshape", "linear"):
            n.attrs["fp32"] = POWER_FP32
    mask = _wide(s, _lut(s, r, "positive"), shape + [1], out + [1])
    return exp_pair(s, prod, out, scale=mask)
