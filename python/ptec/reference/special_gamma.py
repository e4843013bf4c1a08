"""numpy references of aten::igamma.out, aten::igammac.out and
aten::special_zeta.out (src/kernels/portable/op_special_gamma.c): the same
steps in Python's doubles, element by element (math.lgamma, log, exp and
pow are the C library's on the host, so the host's bytes agree; a board's
libm may differ in the last double bit, far below the float rounding).

P(a, x) by its power series for x < a + 1, else Q(a, x) by its continued
fraction (modified Lentz), the other 1 minus it; Hurwitz zeta(s, q) by
Euler-Maclaurin summation from q + N >= 9 with Bernoulli terms up to B_24.
Special values as torch 1.13 (the C file's header)."""
from __future__ import annotations

import math

import numpy as np

F32 = np.float32
MAX_STEPS = 12000          # GAMMA_MAX_STEPS
EPS = 1e-17                # GAMMA_EPS
TINY = 1e-300              # LENTZ_TINY
SHIFT = 9.0                # ZETA_SHIFT
SHIFT_MAX = 200.0          # ZETA_SHIFT_MAX
# B_2j / (2j)!, j = 1 .. 12, as the C table's quotients
BERNOULLI = (1.0 / 12.0, -1.0 / 720.0, 1.0 / 30240.0, -1.0 / 1209600.0, 1.0 / 47900160.0,
             -691.0 / 1307674368000.0, 1.0 / 74724249600.0, -3617.0 / 10670622842880000.0,
             43867.0 / 5109094217170944000.0, -174611.0 / 802857662698291200000.0,
             77683.0 / 14101100039391805440000.0, -236364091.0 / 1693824136731743669452800000.0)


ASYMPTOTIC = 1e6           # GAMMA_ASYMPTOTIC


def _lgamma_1p(a: float) -> float:
    if a < 1e-5:
        return a * (-0.57721566490153286061 + a * 0.82246703342411321824)
    return math.lgamma(1.0 + a)


def _small_a_upper(a: float, x: float) -> float:
    power = 1.0
    total = 0.0
    for n in range(1, MAX_STEPS):
        power *= -x / float(n)
        term = power / (a + float(n))
        total += term
        if abs(term) <= abs(total) * EPS:
            break
    ln_x = math.log(x)
    return -math.expm1(a * ln_x - _lgamma_1p(a)) - math.exp(a * ln_x - math.lgamma(a)) * total


def _uniform_asymptotic(a: float, x: float, upper: bool) -> float:
    d = (x - a) / a
    half_eta2 = d - (math.log1p(d) if d > -1.0 else -math.inf)     # C's log1p(-1) = -inf
    eta = math.sqrt(2.0 * (half_eta2 if half_eta2 > 0.0 else 0.0))
    if d < 0.0:
        eta = -eta
    c0 = -1.0 / 3.0 + eta / 12.0 if abs(d) < 1e-3 else 1.0 / d - 1.0 / eta
    r = math.exp(-a * half_eta2) / math.sqrt(2.0 * 3.14159265358979323846 * a) * c0
    z = eta * math.sqrt(0.5 * a)
    return 0.5 * math.erfc(z) + r if upper else 0.5 * math.erfc(-z) - r


def _incomplete(a: float, x: float, upper: bool) -> float:
    if a > ASYMPTOTIC:
        return _uniform_asymptotic(a, x, upper)
    if upper and a < 1.0 and x < a + 1.0:
        return _small_a_upper(a, x)
    log_front = a * math.log(x) - x - math.lgamma(a)
    if x < a + 1.0:
        term = 1.0 / a
        total = term
        for n in range(1, MAX_STEPS):
            term *= x / (a + float(n))
            total += term
            if abs(term) < abs(total) * EPS:
                break
        p = min(math.exp(log_front) * total, 1.0)
        return 1.0 - p if upper else p
    b = x + 1.0 - a
    if abs(b) < TINY:          # x and a so large that x + 1 - a rounds to 0
        b = TINY
    c = 1.0 / TINY
    d = 1.0 / b
    h = d
    for i in range(1, MAX_STEPS):
        an = -float(i) * (float(i) - a)
        b += 2.0
        d = an * d + b
        if abs(d) < TINY:
            d = TINY
        c = b + an / c
        if abs(c) < TINY:
            c = TINY
        d = 1.0 / d
        step = d * c
        h *= step
        if abs(step - 1.0) < EPS:
            break
    q = min(math.exp(log_front) * h, 1.0)
    return q if upper else 1.0 - q


def igamma_scalar(a: float, x: float, upper: bool = False) -> float:
    """P(a, x) (Q with upper) in double, torch's special values."""
    if a < 0.0 or x < 0.0:
        return math.nan
    if a == 0.0:
        return (0.0 if upper else 1.0) if x > 0.0 else math.nan
    if x == 0.0:
        return 1.0 if upper else 0.0
    if math.isinf(a):
        return math.nan if math.isinf(x) else (1.0 if upper else 0.0)
    if math.isinf(x):
        return 0.0 if upper else 1.0
    if math.isnan(a) or math.isnan(x):
        return math.nan
    return _incomplete(a, x, upper)


def _pow(base: float, e: float) -> float:
    """C's pow: math.pow raises where C's result overflows to infinity."""
    try:
        return math.pow(base, e)
    except OverflowError:
        with np.errstate(all="ignore"):
            return float(np.power(np.float64(base), np.float64(e)))


def zeta_scalar(s: float, q: float) -> float:
    """Hurwitz zeta(s, q) in double, torch's special values (in its order)."""
    if s == 1.0:
        return math.inf
    if s < 1.0:
        return math.nan
    if q <= 0.0:
        if math.isinf(q) or q == math.floor(q):
            return math.inf
        if math.isnan(s) or (not math.isinf(s) and s != math.floor(s)):
            return math.nan
    if math.isnan(s) or math.isnan(q) or math.isinf(q):
        return math.nan
    if math.isinf(s):
        return 1.0 if q == 1.0 else (math.inf if q < 1.0 else math.nan)
    target = (s + 24.0) / 3.14159265358979323846
    target = SHIFT if target < SHIFT else (SHIFT_MAX if target > SHIFT_MAX else target)
    n = float(math.ceil(target - q)) if q < target else 0.0
    total = 0.0
    k = 0.0
    while k < n:
        v = q + k
        term = _pow(v, -s)
        total += term
        if v > 0.0 and abs(term) * (1.0 + (v + 1.0) / (s - 1.0)) <= abs(total) * EPS:
            return total
        k += 1.0
    w = q + n
    edge = _pow(w, -s)
    total += w * edge / (s - 1.0) + 0.5 * edge
    factor = s * edge / w
    for j, c in enumerate(BERNOULLI):
        t = c * factor
        total += t
        if abs(t) <= abs(total) * EPS:
            break
        factor *= (s + 2.0 * j + 1.0) * (s + 2.0 * j + 2.0) / (w * w)
    return total


def _narrow(d: float) -> np.float32:
    with np.errstate(over="ignore"):
        return np.float64(d).astype(F32)


FUNCTIONS = {"igamma": lambda a, b: igamma_scalar(a, b, False),
             "igammac": lambda a, b: igamma_scalar(a, b, True),
             "zeta": zeta_scalar}


def special_binary(fn: str, a, b) -> np.ndarray:
    """igamma / igammac / zeta of float32 tensors, broadcast; each element
    computed in double and rounded once to float32."""
    a, b = np.broadcast_arrays(np.asarray(a, F32), np.asarray(b, F32))
    f = FUNCTIONS[fn]
    out = np.empty(a.shape, F32)
    flat = out.reshape(-1)
    for i, (u, v) in enumerate(zip(a.reshape(-1).tolist(), b.reshape(-1).tolist())):
        flat[i] = _narrow(f(u, v))
    return out
