"""numpy references of ptec's portable (aten::) kernels, on logical (NCHW)
arrays.

Float ops compute in float32 and sum in the order the C kernels use
(docs/portable-ops.md), one vectorised float32 add per term, so that the
sums are bit-identical to the C runtime's: convolution (input channel of the
group, kernel row, kernel column, then + bias), linear (k order, then + bias),
the pools (window taps in row-major order), mean (reduced elements in
row-major order) and batch-norm. softmax, sigmoid and tanh call numpy's exp
and tanh, which may differ from the C library's expf/tanhf in the last bit:
those three are close to the C kernels, not identical.
"""
from __future__ import annotations

from typing import List, Optional, Sequence

import numpy as np

from .std_sort import mode_position

F32 = np.float32
QUIET_NAN = np.frombuffer(np.uint32(0x7FC00000).tobytes(), F32)[0]


def _pair(v) -> List[int]:
    v = list(v)
    return [int(v[0]), int(v[-1])]


# -- element-wise --------------------------------------------------------------

def clamp(x: np.ndarray, lo, hi) -> np.ndarray:
    """Lower bound first, then upper, NaN passing through (PyTorch's order)."""
    y = x.copy()
    if x.dtype == F32:
        if lo is not None:
            y = np.where(y < F32(lo), F32(lo), y)
        if hi is not None:
            y = np.where(y > F32(hi), F32(hi), y)
        return y.astype(F32)
    info = np.iinfo(x.dtype)
    wide = y.astype(np.int64)
    if lo is not None:
        wide = np.maximum(wide, max(int(lo), info.min))
    if hi is not None:
        wide = np.minimum(wide, min(int(hi), info.max))
    return wide.astype(x.dtype)


def sigmoid(x: np.ndarray) -> np.ndarray:
    return (F32(1) / (F32(1) + np.exp(-x.astype(F32)))).astype(F32)


def tanh(x: np.ndarray) -> np.ndarray:
    return np.tanh(x.astype(F32)).astype(F32)


# aten::<fn>.out of op_float_unary_math.c in numpy float32. sqrt, rsqrt,
# reciprocal, abs, neg, floor, ceil, round (np.rint: half to even), trunc
# and sign are exact, so the C's bytes; the others are numpy's float32
# functions (its own SIMD code on x86), which may differ from the C
# library's expf, logf, sinf, ... in the last bit (tests/python/
# test_float_unary_math.py measures: at most 1 ulp).
FLOAT_UNARY = {
    "exp": np.exp, "expm1": np.expm1, "log": np.log, "log1p": np.log1p, "log2": np.log2, "log10": np.log10,
    "sqrt": np.sqrt, "rsqrt": lambda x: F32(1) / np.sqrt(x), "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh,
    "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh, "abs": np.abs, "neg": np.negative,
    "floor": np.floor, "ceil": np.ceil, "round": np.rint, "trunc": np.trunc,
    "reciprocal": lambda x: F32(1) / x,
    # torch 1.13's sign: (0 < x) - (x < 0), so NaN and -0 give +0
    "sign": lambda x: ((x > 0).astype(F32) - (x < 0).astype(F32)),
}


def _erf(x: np.ndarray) -> np.ndarray:
    """numpy has no erf: math.erf in double, rounded once to float32."""
    import math
    flat = [math.erf(v) for v in x.reshape(-1).astype(np.float64).tolist()]
    return np.asarray(flat, np.float64).reshape(x.shape).astype(F32)


FLOAT_UNARY["erf"] = _erf


def float_unary(fn: str, x: np.ndarray) -> np.ndarray:
    """aten::<fn>.out on a float32 tensor; every NaN is the quiet NaN
    0x7FC00000, as the C kernel writes it."""
    x = np.asarray(x, F32)
    with np.errstate(all="ignore"):
        r = np.asarray(FLOAT_UNARY[fn](x), F32)
    return np.where(np.isnan(r), QUIET_NAN, r).astype(F32).reshape(x.shape)


def binary(kind: str, a: np.ndarray, b: np.ndarray, alpha=1) -> np.ndarray:
    if a.dtype == F32:
        al = F32(alpha)
        r = {"add": lambda: a + al * b, "sub": lambda: a - al * b,
             "mul": lambda: a * b, "div": lambda: a / b}[kind]()
        return np.asarray(r, F32)
    with np.errstate(over="ignore"):
        wa, wb = a.astype(np.int64), b.astype(np.int64)
        r = {"add": lambda: wa + int(alpha) * wb, "sub": lambda: wa - int(alpha) * wb,
             "mul": lambda: wa * wb}[kind]()
    return r.astype(a.dtype)


def _narrow(d: np.ndarray) -> np.ndarray:
    """float64 to float32, to nearest even (numpy's cast: beyond the float
    range by half a step or more, infinite)."""
    with np.errstate(over="ignore"):
        return np.asarray(d, np.float64).astype(F32)


def _remainder(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """torch.remainder of floats: the result takes the divisor's sign
    (Python's %); numpy's fmod keeps the dividend's, so a nonzero result
    of the other sign moves by one divisor."""
    m = np.fmod(a, b)
    move = (m != 0) & ((b < 0) != (m < 0))
    return np.where(move, m + b, m).astype(F32)


# torch's float functions of two tensors: pow, atan2 and hypot rounded once
# from float64 (the C kernel's way; numpy's float64 functions are C99's,
# as torch's std:: ones), the rest exact in float32
BINARY_MATH = {
    "pow": lambda a, b: _narrow(np.power(a.astype(np.float64), b.astype(np.float64))),
    "atan2": lambda a, b: _narrow(np.arctan2(a.astype(np.float64), b.astype(np.float64))),
    "hypot": lambda a, b: _narrow(np.hypot(a.astype(np.float64), b.astype(np.float64))),
    "fmod": lambda a, b: np.fmod(a, b).astype(F32),
    "remainder": _remainder,
    "copysign": lambda a, b: np.copysign(a, b).astype(F32),
}


from .special_gamma import FUNCTIONS as SPECIAL_FUNCTIONS, special_binary  # noqa: E402


def binary_math(fn: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """aten::pow.Tensor_Tensor_out, atan2, hypot, fmod.Tensor_out,
    remainder.Tensor_out, copysign, igamma, igammac, special_zeta, nextafter
    on float32 tensors, broadcast; every NaN is the quiet NaN 0x7FC00000, as
    the C kernel writes it."""
    a, b = np.broadcast_arrays(np.asarray(a, F32), np.asarray(b, F32))
    if fn in SPECIAL_FUNCTIONS:          # igamma, igammac, zeta (op_special_gamma.c)
        r = special_binary(fn, a, b)
    elif fn == "nextafter":              # op_float_bits.c: integer steps on the encodings
        from .float_bits import nextafter
        r = nextafter(a, b)
    elif fn in EXTREMES:                 # fmin, fmax (op_minimum_maximum.c)
        r = extreme(fn, a, b)
    else:
        with np.errstate(all="ignore"):
            r = BINARY_MATH[fn](a, b)
    return np.where(np.isnan(r), QUIET_NAN, r).astype(F32)     # the kernel's one NaN


# aten::minimum.out, maximum.out, fmin.out, fmax.out (op_minimum_maximum.c)
EXTREMES = ("minimum", "maximum", "fmin", "fmax")


def extreme(fn: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The element-wise minimum / maximum (NaN where either is NaN) or fmin /
    fmax (the other where one is NaN) of two tensors of one dtype (bool,
    uint8, int8/16/32/64, float32), broadcast, as the C kernel: equal
    operands (-0.0, +0.0) give self, a NaN is the quiet NaN 0x7FC00000, a
    bool is 0 / 1."""
    a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
    if a.dtype != b.dtype:
        raise ValueError("self and other must share one dtype (no promotion)")
    smaller = fn in ("minimum", "fmin")
    pick_b = (b < a) if smaller else (b > a)          # strict: a tie keeps self
    r = np.where(pick_b, b, a)
    if a.dtype == F32:
        a_nan, b_nan = np.isnan(a), np.isnan(b)
        if fn in ("fmin", "fmax"):
            r = np.where(a_nan, b, np.where(b_nan, a, r))
        else:
            r = np.where(a_nan | b_nan, F32(np.nan), r)
        r = np.where(np.isnan(r), QUIET_NAN, r)
    return np.ascontiguousarray(r.astype(a.dtype))


def int_binary(fn: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """aten::floor_divide.out, fmod.Tensor_out, remainder.Tensor_out,
    bitwise_and / or / xor.Tensor_out, bitwise_left_shift / right_shift.Tensor_out,
    gcd.out / lcm.out (_gcd_lcm) of int32 / int64 tensors of one dtype, broadcast, as the C kernel
    (int_binary.c) and PyTorch's integer kernels compute them: the quotient
    toward minus infinity, fmod with the dividend's sign (C's truncation),
    remainder with the divisor's (Python's %); a left shift drops the bits
    shifted out, a right shift copies the sign in. A zero divisor, the least
    value divided by -1 (PyTorch raises ZeroDivisionError, its CPU traps) and
    a shift amount outside [0, width) are errors."""
    a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
    if a.dtype != b.dtype or a.dtype not in (np.int32, np.int64):
        raise ValueError(f"{fn}: int32 or int64 tensors of one dtype, got {a.dtype} and {b.dtype}")
    if fn in ("bitwise_and", "bitwise_or", "bitwise_xor"):
        return {"bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor}[fn](a, b)
    if fn in ("left_shift", "right_shift"):
        width = np.iinfo(a.dtype).bits
        if np.any((b < 0) | (b >= width)):
            raise ValueError(f"{fn}: a shift amount negative or not below the width {width}")
        if fn == "right_shift":
            return np.right_shift(a, b)                  # arithmetic on numpy's signed integers
        unsigned = np.uint64 if width == 64 else np.uint32
        return np.left_shift(a.astype(unsigned), b.astype(unsigned)).astype(a.dtype)   # wraps
    least = np.iinfo(a.dtype).min
    if fn in ("gcd", "lcm"):
        return _gcd_lcm(fn, a, b, least)
    if np.any(b == 0):
        raise ValueError(f"{fn}: integer division by zero")
    if np.any((b == -1) & (a == least)):
        raise ValueError(f"{fn}: the least integer divided by -1")
    # numpy's // and % on integers are Python's (floor, the divisor's sign)
    if fn == "floor_divide":
        return np.floor_divide(a, b)
    if fn == "remainder":
        return np.remainder(a, b)
    return np.fmod(a, b)                     # C's truncation, the dividend's sign


def _gcd_lcm(fn: str, a: np.ndarray, b: np.ndarray, least) -> np.ndarray:
    """aten::gcd.out / lcm.out as PyTorch's calc_gcd: Euclid's algorithm on
    the magnitudes (np.abs of the least value wraps to itself, as
    std::abs), C's truncating remainder; lcm = |a / gcd * b| wrapping in the
    dtype, 0 when the gcd is 0; the least value with a gcd of -1 is an error
    (PyTorch's division traps)."""
    x, y = np.abs(a), np.abs(b)
    while np.any(x != 0):
        live = (x != 0) & (x != -1)             # x % -1 is 0
        r = np.where(live, np.fmod(y, np.where(live, x, 1)), 0).astype(a.dtype)
        y = np.where(x != 0, x, y)
        x = r
    g = y.astype(a.dtype)
    if fn == "gcd":
        return g
    if np.any((g == -1) & (a == least)):
        raise ValueError("lcm: the least integer divided by -1")
    with np.errstate(over="ignore"):
        q = np.where(g == 0, 0, a // np.where(g == 0, 1, g)).astype(a.dtype)     # exact: g divides a
        return np.abs(q * b).astype(a.dtype)                                   # wraps, as PyTorch's


def int_reduce(kind: str, x: np.ndarray, dim, keepdim: bool, out_dtype) -> np.ndarray:
    """aten::sum.IntList_out, prod.int_out / prod.out, amax.out, amin.out of
    int32 / int64 tensors (op_int_reduce.c): dim None or [] reduces every
    dim; a sum or product wraps modulo 2^64 and is kept in out's dtype
    (int64, or int32 when asked), amax / amin keep self's dtype and refuse
    no elements."""
    if x.dtype not in (np.int32, np.int64):
        raise ValueError(f"{kind}: int32 or int64 tensors, got {x.dtype}")
    axes = tuple(range(x.ndim)) if not dim else tuple(sorted({d % max(x.ndim, 1) for d in dim})) if x.ndim else ()
    if kind in ("sum", "prod"):
        with np.errstate(over="ignore"):      # numpy's int64 sums and products wrap
            y = (np.sum if kind == "sum" else np.prod)(x.astype(np.int64), axis=axes, keepdims=bool(keepdim))
        return np.asarray(y).astype(out_dtype)
    if x.size == 0:
        raise ValueError(f"{kind}: over no elements")
    return np.asarray((np.max if kind == "amax" else np.min)(x, axis=axes, keepdims=bool(keepdim)))


def int_cumsum(x: np.ndarray, dim: int, out_dtype) -> np.ndarray:
    """aten::cumsum.out of an int32 / int64 tensor: int64 (or int32) running
    sums along dim, wrapping as PyTorch's."""
    if x.dtype not in (np.int32, np.int64):
        raise ValueError(f"cumsum: int32 or int64 tensors, got {x.dtype}")
    if x.ndim == 0:
        return x.astype(out_dtype)
    with np.errstate(over="ignore"):
        return np.cumsum(x.astype(np.int64), axis=dim % x.ndim).astype(out_dtype)


# -- convolution and linear ----------------------------------------------------

def convolution(x, w, bias, stride, padding, dilation, transposed, output_padding, groups,
                out_shape) -> np.ndarray:
    (sh, sw), (ph, pw), (dh, dw) = _pair(stride), _pair(padding), _pair(dilation)
    n, cin, ih, iw = x.shape
    _, cout, oh, ow = out_shape
    kh_n, kw_n = w.shape[2], w.shape[3]
    cin_g, cout_g = cin // groups, cout // groups
    acc = np.zeros((n, cout, oh, ow), F32)
    if not transposed:
        xp = np.zeros((n, cin, ih + 2 * ph + sh + dh * kh_n, iw + 2 * pw + sw + dw * kw_n), F32)
        xp[:, :, ph:ph + ih, pw:pw + iw] = x
        for g in range(groups):
            ocs = slice(g * cout_g, (g + 1) * cout_g)
            for icl in range(cin_g):
                plane = xp[:, g * cin_g + icl]
                for kh in range(kh_n):
                    for kw in range(kw_n):
                        patch = plane[:, kh * dh: kh * dh + sh * (oh - 1) + 1: sh,
                                      kw * dw: kw * dw + sw * (ow - 1) + 1: sw]
                        acc[:, ocs] += patch[:, None] * w[ocs, icl, kh, kw][None, :, None, None]
    else:
        def gather(o_n, pad, k, d, s, size):
            num = np.arange(o_n) + pad - k * d
            valid = (num >= 0) & (num % s == 0) & (num // s < size)
            return np.where(valid, num // s, 0), valid
        for g in range(groups):
            ocs = slice(g * cout_g, (g + 1) * cout_g)
            for icl in range(cin_g):
                ic = g * cin_g + icl
                for kh in range(kh_n):
                    hi, hv = gather(oh, ph, kh, dh, sh, ih)
                    for kw in range(kw_n):
                        wi, wv = gather(ow, pw, kw, dw, sw, iw)
                        patch = x[:, ic][:, hi][:, :, wi]
                        patch = np.where(hv[:, None] & wv[None, :], patch, F32(0))
                        acc[:, ocs] += patch[:, None] * w[ic, :, kh, kw][None, :, None, None]
    if bias is not None:
        acc = acc + bias.astype(F32)[None, :, None, None]
    return acc


def linear(x, w, bias) -> np.ndarray:
    acc = np.zeros(x.shape[:-1] + (w.shape[0],), F32)
    for k in range(x.shape[-1]):
        acc += x[..., k:k + 1] * w[:, k]
    return acc + bias.astype(F32) if bias is not None else acc



def bmm(x, y) -> np.ndarray:
    """aten::bmm.out: x [B, n, k] times y [B, k, m], float32 sums from 0
    over the contracted index in order (op_bmm.c)."""
    x, y = np.asarray(x, F32), np.asarray(y, F32)
    acc = np.zeros((x.shape[0], x.shape[1], y.shape[2]), F32)
    for c in range(x.shape[2]):
        acc += x[:, :, c:c + 1] * y[:, c:c + 1, :]
    return acc

# -- pools, reductions ----------------------------------------------------------

def pooled_size(size, k, p, s, d, ceil_mode) -> int:
    num = size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    out = num // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def avg_pool2d(x, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override,
               out_shape) -> np.ndarray:
    (kh_n, kw_n), (ph, pw) = _pair(kernel), _pair(padding)
    sh, sw = _pair(stride) if len(stride) else (kh_n, kw_n)
    n, c, ih, iw = x.shape
    oh, ow = out_shape[2], out_shape[3]
    h0 = np.arange(oh) * sh - ph
    w0 = np.arange(ow) * sw - pw
    h1 = np.minimum(h0 + kh_n, ih + ph)
    w1 = np.minimum(w0 + kw_n, iw + pw)
    pool = (h1 - h0)[:, None] * (w1 - w0)[None, :]
    hc0, wc0 = np.maximum(h0, 0), np.maximum(w0, 0)
    hc1, wc1 = np.minimum(h1, ih), np.minimum(w1, iw)
    count = (hc1 - hc0)[:, None] * (wc1 - wc0)[None, :]
    acc = np.zeros((n, c, oh, ow), F32)
    for kh in range(kh_n):
        h = h0 + kh
        hv = (h >= 0) & (h < ih)
        for kw in range(kw_n):
            w = w0 + kw
            wv = (w >= 0) & (w < iw)
            tap = x[:, :, np.clip(h, 0, ih - 1)][:, :, :, np.clip(w, 0, iw - 1)]
            acc += np.where(hv[:, None] & wv[None, :], tap, F32(0))
    if divisor_override:
        div = np.full((oh, ow), divisor_override)
    else:
        div = pool if count_include_pad else count
    empty = (hc0 >= hc1)[:, None] | (wc0 >= wc1)[None, :]
    return np.where(empty, F32(0), acc / div.astype(F32)).astype(F32)


def max_pool2d_with_indices(x, kernel, stride, padding, dilation, ceil_mode, out_shape):
    (kh_n, kw_n), (ph, pw), (dh, dw) = _pair(kernel), _pair(padding), _pair(dilation)
    sh, sw = _pair(stride) if len(stride) else (kh_n, kw_n)
    n, c, ih, iw = x.shape
    oh, ow = out_shape[2], out_shape[3]
    xf = x.astype(F32)
    h0 = np.arange(oh) * sh - ph
    w0 = np.arange(ow) * sw - pw
    h1 = np.minimum(h0 + (kh_n - 1) * dh + 1, ih)
    w1 = np.minimum(w0 + (kw_n - 1) * dw + 1, iw)
    hs = np.where(h0 < 0, h0 + ((-h0 + dh - 1) // dh) * dh, h0)
    ws = np.where(w0 < 0, w0 + ((-w0 + dw - 1) // dw) * dw, w0)
    best = np.full((n, c, oh, ow), -np.inf, F32)
    idx = np.broadcast_to((hs[:, None] * iw + ws[None, :]).astype(np.int64), best.shape).copy()
    for kh in range(kh_n):
        h = h0 + kh * dh
        hv = (h >= 0) & (h < h1)
        for kw in range(kw_n):
            w = w0 + kw * dw
            wv = (w >= 0) & (w < w1)
            tap = xf[:, :, np.clip(h, 0, ih - 1)][:, :, :, np.clip(w, 0, iw - 1)]
            take = (hv[:, None] & wv[None, :]) & ((tap > best) | np.isnan(tap))
            best = np.where(take, tap, best)
            idx = np.where(take, (np.clip(h, 0, ih - 1)[:, None] * iw + np.clip(w, 0, iw - 1)[None, :]), idx)
    if x.dtype != F32:
        best = np.maximum(best, -128).astype(x.dtype)
    return best, idx.astype(np.int64)


def adaptive_avg_pool2d(x, output_size) -> np.ndarray:
    oh, ow = _pair(output_size)
    n, c, ih, iw = x.shape
    y = np.zeros((n, c, oh, ow), F32)
    for i in range(oh):
        h0, h1 = i * ih // oh, ((i + 1) * ih + oh - 1) // oh
        for j in range(ow):
            w0, w1 = j * iw // ow, ((j + 1) * iw + ow - 1) // ow
            acc = np.zeros((n, c), F32)
            for h in range(h0, h1):
                for w in range(w0, w1):
                    acc += x[:, :, h, w]
            y[:, :, i, j] = acc / F32((h1 - h0) * (w1 - w0))
    return y


def mean(x, dims: Optional[Sequence[int]], keepdim: bool) -> np.ndarray:
    rank = x.ndim
    red = sorted({d % rank for d in dims}) if dims else list(range(rank))
    kept = [d for d in range(rank) if d not in red]
    moved = np.transpose(x, kept + red)
    count = int(np.prod([x.shape[d] for d in red])) if red else 1
    flat = moved.reshape([x.shape[d] for d in kept] + [count])
    acc = np.zeros(flat.shape[:-1], F32)
    for r in range(count):
        acc += flat[..., r]
    y = (acc / F32(count)).astype(F32)
    if keepdim:
        y = y.reshape([1 if d in red else x.shape[d] for d in range(rank)])
    return y


def arg_reduce(x, dim: Optional[int], keepdim: bool, smallest: bool) -> np.ndarray:
    """aten::argmax.out / argmin.out: int64 positions along dim (None: in
    the flattened tensor). numpy's argmax/argmin pick the first of equal
    values and the first NaN, which is PyTorch's rule."""
    fn = np.argmin if smallest else np.argmax
    if dim is None:
        y = np.asarray(fn(x.reshape(-1)), np.int64)
        return y.reshape([1] * x.ndim) if keepdim else y
    y = fn(x, axis=dim % max(x.ndim, 1)).astype(np.int64) if x.ndim else np.asarray(0, np.int64)
    return np.expand_dims(y, dim % x.ndim) if keepdim and x.ndim else y


def embedding(weight, indices) -> np.ndarray:
    """aten::embedding.out: row indices[...] of the table; an id outside
    [0, rows) is an error, as in the C kernel (no wrap-around of negatives)."""
    ids = np.asarray(indices, np.int64)
    if ids.size and (ids.min() < 0 or ids.max() >= weight.shape[0]):
        raise ValueError(f"embedding: an index is outside the table of {weight.shape[0]} rows")
    return weight[ids]


def ordered(x, dim: int, descending: bool, k: Optional[int]):
    """aten::sort.values (k None) / topk.values (descending = largest): the
    (values, int64 indices) along dim, a stable order (equal values keep
    their order in the row) with NaN the largest value; topk is the first k
    of that order. A 0-d x is one element. int64 / int32 compare exactly
    (descending: by ~x, the reverse order with no overflow)."""
    x = np.asarray(x)
    flat = x.reshape(1) if x.ndim == 0 else np.moveaxis(x, dim, -1)
    if np.issubdtype(flat.dtype, np.integer):
        wide = flat.astype(np.int64)
        rows = wide.reshape(-1, wide.shape[-1])
        idx = np.stack([np.argsort(~r if descending else r, kind="stable") for r in rows]) \
            if rows.size else np.zeros(rows.shape, np.int64)
    else:
        wide = flat.astype(np.float64)                 # float32 exactly, -x without overflow
        nan = np.isnan(wide)
        rows = wide.reshape(-1, wide.shape[-1])
        nans = nan.reshape(rows.shape)
        # lexsort is stable and sorts by the last key first
        idx = np.stack([np.lexsort((-r, ~m) if descending else (r, m)) for r, m in zip(rows, nans)]) \
            if rows.size else np.zeros(rows.shape, np.int64)
    idx = idx.reshape(flat.shape).astype(np.int64)
    if k is not None:
        idx = idx[..., :k]
    vals = np.take_along_axis(flat, idx, axis=-1)
    if x.ndim == 0:
        return vals.reshape(()), idx.reshape(())
    return np.moveaxis(vals, -1, dim), np.moveaxis(idx, -1, dim)


def row_pick(x, dim: int, keepdim: bool, rule: str):
    """aten::median.dim_values (rule "median"), nanmedian.dim_values
    ("nanmedian") and mode.values ("mode"): (values, int64 indices) of one
    element per row along dim. median: the row's first NaN if it holds one,
    else position (n - 1) // 2 of the stable ascending order; nanmedian:
    position (m - 1) // 2 of the order of the row's m numbers (NaN at 0 for
    a row of NaNs only); mode: PyTorch's own procedure (std_sort: the
    positions sorted by libstdc++'s std::sort, the last position of the
    first longest run of equal values). A 0-d x is one element."""
    x = np.asarray(x)
    flat = x.reshape(1) if x.ndim == 0 else np.moveaxis(x, dim, -1)
    rows = flat.reshape(-1, flat.shape[-1]).astype(np.float64)
    if rows.shape[-1] == 0:
        raise ValueError(f"{rule}: the reduced dim has no elements")
    picks = []
    for r in rows:
        nan = np.isnan(r)
        if rule == "median" and nan.any():
            picks.append(int(np.argmax(nan)))
        elif rule in ("median", "nanmedian"):
            numbers = np.flatnonzero(~nan)
            order = numbers[np.argsort(r[numbers], kind="stable")]
            picks.append(int(order[(len(order) - 1) // 2]) if len(order) else 0)
        else:
            picks.append(mode_position(r))
    idx = np.array(picks, np.int64).reshape(flat.shape[:-1] + (1,))
    vals = np.take_along_axis(flat, idx, axis=-1)
    if x.ndim == 0:
        return vals.reshape(()), idx.reshape(())
    vals, idx = np.moveaxis(vals, -1, dim), np.moveaxis(idx, -1, dim)
    if not keepdim:
        vals, idx = vals.squeeze(dim), idx.squeeze(dim)
    return vals, idx


def running_extreme(x, dim: int, smallest: bool):
    """aten::cummax.out / cummin.out: (values, int64 indices) of the largest
    (smallest) element so far along dim; a tie moves to the later position,
    a NaN takes the place and keeps it against numbers (a later NaN takes
    it again). A 0-d x is one element."""
    x = np.asarray(x)
    flat = x.reshape(1) if x.ndim == 0 else np.moveaxis(x, dim, -1)
    rows = flat.reshape(-1, flat.shape[-1]).astype(np.float64)
    idx = np.zeros(rows.shape, np.int64)
    for r, out in zip(rows, idx):
        best = 0
        for i, v in enumerate(r):
            e = r[best]
            if np.isnan(v) or (not np.isnan(e) and (v <= e if smallest else v >= e)):
                best = i
            out[i] = best
    idx = idx.reshape(flat.shape)
    vals = np.take_along_axis(flat, idx, axis=-1)
    if x.ndim == 0:
        return vals.reshape(()), idx.reshape(())
    return np.moveaxis(vals, -1, dim), np.moveaxis(idx, -1, dim)

def gather(x, dim: int, index) -> np.ndarray:
    """aten::gather.out: out[p] = x[p with its dim-th coordinate replaced by
    index[p]], over every position p of index (no larger than x in the
    other dims); an index outside [0, size) is an error, as in the C kernel.
    Written as an explicit walk of index's positions, not numpy's
    take_along_axis, so the rule is stated here once more."""
    x, ids = np.asarray(x), np.asarray(index, np.int64)
    xv, iv = x.reshape(x.shape or (1,)), ids.reshape(ids.shape or (1,))
    d = dim % xv.ndim
    if iv.size and (iv.min() < 0 or iv.max() >= xv.shape[d]):
        raise ValueError(f"gather: an index is outside [0, {xv.shape[d]}) along dim {d}")
    out = np.empty(iv.shape, x.dtype)
    for p in np.ndindex(*iv.shape):
        q = list(p)
        q[d] = int(iv[p])
        out[p] = xv[tuple(q)]
    return out.reshape(ids.shape)


def to_float32(x) -> np.ndarray:
    """dim_order_ops::_to_dim_order_copy.out into float32 (int64 rounds to
    the nearest float32, as C's conversion does)."""
    return np.asarray(x).astype(F32)


def convert(x, dtype) -> np.ndarray:
    """dim_order_ops::_to_dim_order_copy.out into `dtype`: a bool is 0 or 1
    (any nonzero byte counts as true); an integer into a narrower integer
    type keeps its low bits (numpy's astype, PyTorch's wrap; uint8 modulo
    256); an integer into float64 and float64 into float32: the nearest
    (numpy's astype, C's conversion); float32 into float64 exactly; other
    values as to_float32."""
    x = np.asarray(x)
    if x.dtype == np.bool_:
        return (x.view(np.uint8) != 0).astype(dtype)
    return x.astype(dtype)


# -- comparisons and truth values ----------------------------------------------

_ORDERS = {"gt": (1,), "ge": (0, 1), "lt": (-1,), "le": (-1, 0), "eq": (0,), "ne": (-1, 1, None)}


def _order(a, b):
    """-1, 0, 1 as Python numbers compare (exact between int and float), None for a NaN."""
    if a != a or b != b:
        return None
    return (a > b) - (a < b)


def compare(kind: str, x, other) -> np.ndarray:
    """aten::{gt,ge,lt,le,eq,ne}.Tensor_out / Scalar_out (other a number):
    a bool array. float32 compares in float32 (a number first rounded to
    float32, as PyTorch does); integers and bools (as 0/1) compare with a
    number exactly, as Python compares an int with a float. Element by
    element in Python: an independent check of the vectorised C kernel."""
    x = np.asarray(x)
    ints = x.dtype != np.float32
    if x.dtype == np.bool_:
        x = x.view(np.uint8) != 0
    if isinstance(other, np.ndarray) or hasattr(other, "dtype"):
        y = np.asarray(other)
        if y.dtype == np.bool_:
            y = y.view(np.uint8) != 0
        x, y = np.broadcast_arrays(x, y)
    else:
        with np.errstate(over="ignore"):
            y = np.broadcast_to(np.asarray(other if ints else F32(other), object if ints else F32), x.shape)
    keep = _ORDERS[kind]
    flat = [_order(a.item() if hasattr(a, "item") else a, b.item() if hasattr(b, "item") else b) in keep
            for a, b in zip(x.reshape(-1), y.reshape(-1))]
    return np.array(flat, np.bool_).reshape(x.shape)


def _truth(x) -> np.ndarray:
    x = np.asarray(x)
    return x.view(np.uint8) != 0 if x.dtype == np.bool_ else x != 0     # a float NaN is true


def logical(kind: str, x, other=None) -> np.ndarray:
    """aten::logical_{and,or,xor,not}.out: truth values (nonzero) combined."""
    a = _truth(x)
    if kind == "not":
        return ~a
    b = _truth(other)
    return {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}[kind](a, b)


def where(cond, a, b) -> np.ndarray:
    """aten::where.self_out: a where cond is true (nonzero), else b, broadcast."""
    return np.where(_truth(cond), np.asarray(a), np.asarray(b))


def masked_select(x, mask, out_sizes=None) -> np.ndarray:
    """aten::masked_select.out: the elements of x where the bool mask is
    set, both broadcast, in row-major order; 1-D, as long as the mask's
    count, or [1, ..., 1, count] into ptec's row out (out_sizes [1, ..., 1,
    bound]: the C kernel's rule, any other rank-2 or higher out an error)."""
    x, mask = np.broadcast_arrays(np.asarray(x), np.asarray(mask, np.bool_))
    got = x.reshape(-1)[mask.reshape(-1)]
    if out_sizes is None or len(out_sizes) == 1:
        return got
    if any(v != 1 for v in out_sizes[:-1]):
        raise ValueError(f"masked_select: out must be 1-D or [1, ..., 1, bound], not {list(out_sizes)}")
    return got.reshape([1] * (len(out_sizes) - 1) + [-1])


def index_by_mask(x, indices, out_sizes=None) -> np.ndarray:
    """aten::index.Tensor_out with one bool mask over x's leading dims (the
    form ptec emits): the rows of x where the mask is set, in row-major
    order, [count, x.shape[k:]...], or [1, count, ...] into ptec's out with
    a dim of 1 in front (out_sizes of one more dim, its first 1: the C
    kernel's rule). None indices before the mask (x[:, :, mask]): the mask
    over the dims after them, out [x.shape[:p]..., count, x.shape[p + k:]...]."""
    p = len(indices) - 1
    if p < 0 or any(i is not None for i in indices[:p]) or indices[p] is None \
            or np.asarray(indices[p]).dtype != np.bool_:
        raise ValueError("index: only one bool mask, after None indices, is supported")
    x, mask = np.asarray(x), np.asarray(indices[p])
    k = mask.ndim
    if k == 0 or p + k > x.ndim or (p == 0 and k == x.ndim) or mask.shape != x.shape[p:p + k]:
        raise ValueError(f"index: a mask of {list(mask.shape)} is not the dims of {list(x.shape)} after {p}")
    if p:
        return x.reshape(x.shape[:p] + (-1,) + x.shape[p + k:])[(slice(None),) * p + (mask.reshape(-1),)]
    rows = x.reshape((-1,) + x.shape[k:])[mask.reshape(-1)]
    if out_sizes is not None and len(out_sizes) == rows.ndim + 1:
        if out_sizes[0] != 1:
            raise ValueError(f"index: out {list(out_sizes)} has a dim in front that is not 1")
        return rows[None]
    return rows


def to_half(x) -> np.ndarray:
    """dim_order_ops::_to_dim_order_copy.out from float32 into float16:
    numpy's IEEE conversion (nearest even, subnormals, overflow to
    infinity); a NaN as the quiet NaN of its sign, as the C kernel writes it."""
    x = np.asarray(x, F32)
    with np.errstate(over="ignore"):
        h = x.astype(np.float16)
    quiet = np.where(np.signbit(x), np.float16(-np.nan), np.float16(np.nan))
    return np.where(np.isnan(x), quiet, h)


def to_bfloat16_bits(x) -> np.ndarray:
    """dim_order_ops::_to_dim_order_copy.out from float32 into bfloat16, as
    uint16 bit patterns (numpy has no bfloat16): of the two bfloat16 values
    around x (x's bits with the low 16 cleared, and the next one away from
    zero) the nearer in float64, on a tie the one with an even last bit.
    Past the largest finite value (0x7F7F) the next one is infinity, which
    stands for 2^128 there (IEEE rounds as if the exponent went on). A NaN
    is the quiet NaN of its sign."""
    x = np.asarray(x, F32)
    low = (x.view(np.uint32) >> 16).astype(np.uint16)    # toward zero
    high = (low + np.uint16(1)).astype(np.uint16)        # away from zero (0x7F7F + 1 is infinity's 0x7F80)

    def value(b):
        v = (b.astype(np.uint32) << 16).view(F32).astype(np.float64)
        return np.where(np.isinf(v), np.copysign(2.0 ** 128, v), v)
    with np.errstate(invalid="ignore"):
        below = np.abs(x.astype(np.float64) - value(low))
        above = np.abs(value(high) - x.astype(np.float64))
        up = ~np.isinf(x) & ((above < below) | ((above == below) & (low % 2 == 1)))
    out = np.where(up, high, low)
    nan = np.where(np.signbit(x), 0xFFC0, 0x7FC0).astype(np.uint16)
    return np.where(np.isnan(x), nan, out).astype(np.uint16)


def half_to_float(h) -> np.ndarray:
    """dim_order_ops::_to_dim_order_copy.out from float16 into float32:
    exact (numpy's conversion); a NaN keeps its payload with the quiet bit
    set, as torch's `.float()` and the C kernel."""
    h = np.asarray(h, np.float16)
    bits = h.astype(F32).view(np.uint32)
    return np.where(np.isnan(h), bits | np.uint32(0x400000), bits).astype(np.uint32).view(F32)


def bfloat16_bits_to_float(b) -> np.ndarray:
    """dim_order_ops::_to_dim_order_copy.out from bfloat16 (uint16 bit
    patterns) into float32: the bits as a float32's top half, exact (NaNs
    as they are, as torch's `.float()`)."""
    return (np.asarray(b, np.uint16).astype(np.uint32) << 16).view(F32)


def to_integer(x, dtype) -> np.ndarray:
    """dim_order_ops::_to_dim_order_copy.out from float32 into int64 or
    int32 (numpy dtype): truncation toward zero; a NaN, an infinity or a
    truncation outside the type is an error, as in the C kernel."""
    x = np.asarray(x, F32)
    bound = 2.0 ** (np.iinfo(dtype).bits - 1)           # exact in float64, unlike the type's max
    with np.errstate(invalid="ignore"):
        t = np.trunc(x.astype(np.float64))
        ok = (t >= -bound) & (t < bound)
    if not np.all(ok):
        raise ValueError(f"to_dim_order_copy: a value is NaN, infinite or outside {np.dtype(dtype).name}")
    return t.astype(dtype)


def softmax(x, dim: int) -> np.ndarray:
    x = x.astype(F32)
    m = np.max(x, axis=dim, keepdims=True)
    e = np.exp(x - m).astype(F32)
    moved = np.moveaxis(e, dim, -1)
    total = np.zeros(moved.shape[:-1], F32)
    for i in range(moved.shape[-1]):
        total += moved[..., i]
    return (e / np.expand_dims(total, dim)).astype(F32)


def log_softmax(x, dim: int) -> np.ndarray:
    """(x - max) - log(sum of exp(x - max)), the sum in index order, float32."""
    x = x.astype(F32)
    m = np.max(x, axis=dim, keepdims=True)
    moved = np.moveaxis(np.exp(x - m).astype(F32), dim, -1)
    total = np.zeros(moved.shape[:-1], F32)
    for i in range(moved.shape[-1]):
        total += moved[..., i]
    return ((x - m) - np.log(np.expand_dims(total, dim)).astype(F32)).astype(F32)


def batch_norm(x, weight, bias, mean_, var, eps) -> np.ndarray:
    shape = [1, -1] + [1] * (x.ndim - 2)
    inv = (F32(1) / np.sqrt(var.astype(F32) + F32(eps))).astype(F32)
    v = (x - mean_.reshape(shape)) * inv.reshape(shape)
    if weight is not None:
        v = v * weight.reshape(shape)
    return (v + (bias.reshape(shape) if bias is not None else F32(0))).astype(F32)


def layer_norm(x, k: int, weight, bias, eps) -> np.ndarray:
    """Over the last k dims, in float32 and in the kernel's order
    (src/kernels/portable/op_native_layer_norm.c): left-to-right sums (cumsum
    accumulates sequentially), then mean, variance, 1 / sqrt, affine."""
    x = np.asarray(x, F32)
    m = int(np.prod(x.shape[x.ndim - k:]))
    rows = x.reshape(-1, m)
    mean = (np.cumsum(rows, axis=1, dtype=F32)[:, -1] / F32(m)).astype(F32)
    d = (rows - mean[:, None]).astype(F32)
    var = (np.cumsum((d * d).astype(F32), axis=1, dtype=F32)[:, -1] / F32(m)).astype(F32)
    rstd = (F32(1) / np.sqrt((var + F32(eps)).astype(F32))).astype(F32)
    v = (d * rstd[:, None]).astype(F32)
    if weight is not None:
        v = (v * np.asarray(weight, F32).reshape(1, m)).astype(F32)
    if bias is not None:
        v = (v + np.asarray(bias, F32).reshape(1, m)).astype(F32)
    return v.reshape(x.shape)


def group_norm(x, groups: int, weight, bias, eps) -> np.ndarray:
    """Per (n, group) block of C/groups channels, in float32 and in the
    kernel's order (src/kernels/portable/op_native_group_norm.c): the
    statistics as layer_norm's over the block, then the per-channel affine."""
    x = np.asarray(x, F32)
    n, c = x.shape[:2]
    blocks = x.reshape(n * groups, -1)
    m = blocks.shape[1]
    mean = (np.cumsum(blocks, axis=1, dtype=F32)[:, -1] / F32(m)).astype(F32)
    d = (blocks - mean[:, None]).astype(F32)
    var = (np.cumsum((d * d).astype(F32), axis=1, dtype=F32)[:, -1] / F32(m)).astype(F32)
    rstd = (F32(1) / np.sqrt((var + F32(eps)).astype(F32))).astype(F32)
    v = (d * rstd[:, None]).astype(F32).reshape(x.shape)
    per_channel = [1, c] + [1] * (x.ndim - 2)
    if weight is not None:
        v = (v * np.asarray(weight, F32).reshape(per_channel)).astype(F32)
    if bias is not None:
        v = (v + np.asarray(bias, F32).reshape(per_channel)).astype(F32)
    return v


# -- data movement -------------------------------------------------------------

def upsample_nearest2d(x, out_hw, scale_factors=None) -> np.ndarray:
    """[N, C, H, W] resized to out_hw: source index min(floor(i * s), in - 1)
    with the float32 scale s of src/kernels/portable/op_upsample_nearest2d.c."""
    x = np.asarray(x)
    index = []
    for d, out in enumerate(out_hw):
        size = x.shape[2 + d]
        s = F32(1.0 / scale_factors[d]) if scale_factors is not None else F32(size / out)
        i = np.floor(np.arange(out, dtype=F32) * s).astype(np.int64)
        index.append(np.minimum(i, size - 1))
    return x[:, :, index[0][:, None], index[1][None, :]]


def _bilinear_taps(size: int, out: int, align_corners: bool, factor=None):
    """Per output index: (i0, i1, l0, l1) in float32, PyTorch's
    area_pixel_compute_source_index; an axis of unchanged size is copied."""
    i = np.arange(out)
    if size == out:
        return i, i, np.ones(out, F32), np.zeros(out, F32)
    if align_corners:
        s = F32((size - 1) / (out - 1)) if out > 1 else F32(0.0)
        src = s * i.astype(F32)
    else:
        s = F32(1.0 / factor) if factor is not None else F32(size / out)
        src = np.maximum(s * (i.astype(F32) + F32(0.5)) - F32(0.5), F32(0.0)).astype(F32)
    i0 = np.minimum(src.astype(np.int64), size - 1)
    i1 = i0 + (i0 < size - 1)
    l1 = np.clip(src - i0.astype(F32), F32(0.0), F32(1.0)).astype(F32)
    return i0, i1, (F32(1.0) - l1).astype(F32), l1


def upsample_bilinear2d(x, out_hw, align_corners: bool, scale_factors=None) -> np.ndarray:
    """[N, C, H, W] float32 resized to out_hw bilinearly, in float32 with the
    operation order of src/kernels/portable/op_upsample_bilinear2d.c:
    l0h * (l0w * a + l1w * b) + l1h * (l0w * c + l1w * d)."""
    x = np.asarray(x, F32)
    taps = [_bilinear_taps(x.shape[2 + d], out_hw[d], align_corners,
                           None if scale_factors is None or align_corners else scale_factors[d])
            for d in range(2)]
    (h0, h1, lh0, lh1), (w0, w1, lw0, lw1) = taps
    r0, r1 = x[:, :, h0, :], x[:, :, h1, :]
    top = lw0 * r0[..., w0] + lw1 * r0[..., w1]
    bottom = lw0 * r1[..., w0] + lw1 * r1[..., w1]
    return (lh0[:, None] * top + lh1[:, None] * bottom).astype(F32)


def _cubic_taps(size: int, out: int, align_corners: bool, factor=None):
    """Per output index: four source indices (clamped to the axis) and their
    four float32 weights, PyTorch's bicubic rule: cubic convolution with
    A = -0.75 around floor(src), src unclamped."""
    i = np.arange(out)
    if align_corners:
        s = F32((size - 1) / (out - 1)) if out > 1 else F32(0.0)
        src = (s * i.astype(F32)).astype(F32)
    else:
        s = F32(1.0 / factor) if factor is not None else F32(size / out)
        src = (s * (i.astype(F32) + F32(0.5)) - F32(0.5)).astype(F32)
    f = np.floor(src).astype(F32)
    index = [np.clip(f.astype(np.int64) - 1 + k, 0, size - 1) for k in range(4)]
    return index, _cubic_weights((src - f).astype(F32))


def _cubic_weights(t) -> List[np.ndarray]:
    """The four cubic-convolution weights (A = -0.75) of fractions t in
    [0, 1), for the taps floor - 1 .. floor + 2, in float32."""
    a = F32(-0.75)

    def inner(v):   # |v| <= 1
        return (((a + F32(2)) * v - (a + F32(3))) * v * v + F32(1)).astype(F32)

    def outer(v):   # 1 < |v| < 2
        return (((a * v - F32(5) * a) * v + F32(8) * a) * v - F32(4) * a).astype(F32)

    one, two = F32(1), F32(2)
    return [outer(t + one), inner(t), inner(one - t), outer(two - t)]


def upsample_bicubic2d(x, out_hw, align_corners: bool, scale_factors=None) -> np.ndarray:
    """[N, C, H, W] float32 resized to out_hw bicubically in float32: each of
    the four source rows summed from 0 over its four columns in tap order,
    then the four weighted row sums from 0 in tap order."""
    x = np.asarray(x, F32)
    (hi, hw), (wi, ww) = [_cubic_taps(x.shape[2 + d], out_hw[d], align_corners,
                                      None if scale_factors is None or align_corners else scale_factors[d])
                          for d in range(2)]
    acc = np.zeros((x.shape[0], x.shape[1], out_hw[0], out_hw[1]), F32)
    for r in range(4):
        rows = x[:, :, hi[r], :]                      # [N, C, OH, W]
        s = np.zeros_like(acc)
        for k in range(4):
            s = (s + ww[k] * rows[..., wi[k]]).astype(F32)
        acc = (acc + hw[r][:, None] * s).astype(F32)
    return acc


def _grid_padded(v, size: int, padding: int, align_corners: bool):
    """PyTorch's padding of unnormalized float32 coordinates: border clips
    into [0, size - 1] (a NaN to 0); reflection folds about 0 and size - 1
    (align_corners) or -0.5 and size - 0.5, then clips."""
    top = F32(size - 1)

    def clip(u):
        return np.minimum(np.where(u > 0, u, F32(0)), top).astype(F32)

    if padding == 1:
        return clip(v)
    if padding == 2:
        if align_corners and size <= 1:
            return np.zeros_like(v)
        low = F32(0) if align_corners else F32(-0.5)
        span2 = top * F32(2) if align_corners else F32(size) * F32(2)
        a = np.abs(v - low).astype(F32)
        extra = (a - np.trunc(a / span2) * span2).astype(F32)
        return clip(np.minimum(extra, span2 - extra) + low)   # np.minimum keeps a NaN
    return v


def _grid_taps(g, size: int, mode: int, padding: int, align_corners: bool):
    """Per grid position, the taps along one axis: [(index or -1, weight)],
    from the normalized float32 coordinates g."""
    g = g.astype(F32)
    scale = F32(size - 1) / F32(2) if align_corners else F32(size) / F32(2)
    v = ((g + F32(1)) * scale).astype(F32)
    if not align_corners:
        v = (v - F32(0.5)).astype(F32)

    def index(u, k=0):
        u = u.astype(np.float64) + k
        inside = (u >= 0) & (u < size)
        return np.where(inside, np.where(inside, u, 0).astype(np.int64), -1)

    if mode == 2:
        f = np.floor(v).astype(F32)
        weights = _cubic_weights((v - f).astype(F32))
        return [(index(_grid_padded((f + F32(k - 1)).astype(F32), size, padding, align_corners)), weights[k])
                for k in range(4)]
    p = _grid_padded(v, size, padding, align_corners)
    if mode == 1:
        return [(index(np.rint(p)), None)]      # rint: halves to even, as nearbyint
    f = np.floor(p).astype(F32)
    t = (p - f).astype(F32)
    return [(index(f), (F32(1) - t).astype(F32)), (index(f, 1), t)]


def grid_sampler_2d(x, grid, mode: int, padding: int, align_corners: bool) -> np.ndarray:
    """F.grid_sample of [N, C, H, W] float32 at grid [N, Ho, Wo, 2] (x, y)
    in float32 (mode 0 bilinear, 1 nearest, 2 bicubic; padding 0 zeros,
    1 border, 2 reflection), in PyTorch's CPU order: bilinear sums
    value * (wy * wx) over (row, column) from the first term; bicubic sums
    each row's weighted columns, then the weighted rows; a tap outside the
    plane reads 0."""
    x, grid = np.asarray(x, F32), np.asarray(grid, F32)
    with np.errstate(all="ignore"):
        tx = _grid_taps(grid[..., 0], x.shape[3], mode, padding, align_corners)
        ty = _grid_taps(grid[..., 1], x.shape[2], mode, padding, align_corners)
        planes = x.transpose(0, 2, 3, 1)                    # [N, H, W, C]
        batch = np.arange(x.shape[0])[:, None, None]

        def value(hi, wi):                                  # [N, C, Ho, Wo]
            got = planes[batch, np.maximum(hi, 0), np.maximum(wi, 0)]
            got = np.where(((hi >= 0) & (wi >= 0))[..., None], got, F32(0))
            return got.transpose(0, 3, 1, 2).astype(F32)

        if mode == 1:
            return value(ty[0][0], tx[0][0])
        acc = None
        for hi, wy in ty:
            row = None
            for wi, wx in tx:
                if mode == 0:
                    term = (value(hi, wi) * (wy * wx)[:, None]).astype(F32)
                    acc = term if acc is None else (acc + term).astype(F32)
                else:
                    term = (wx[:, None] * value(hi, wi)).astype(F32)
                    row = term if row is None else (row + term).astype(F32)
            if mode == 2:
                term = (wy[:, None] * row).astype(F32)
                acc = term if acc is None else (acc + term).astype(F32)
        return acc


def _grid_source_3d(g, size: int, padding: int, align_corners: bool):
    """PyTorch's scalar grid_sampler_compute_source_index in float32: the
    unnormalized coordinate, padded (border: std::min(size - 1,
    std::max(v, 0)), where a NaN ends as size - 1; reflection: fmod and the
    parity of the flips), then -100 for one that is not finite or lies
    beyond int32 (safe_downgrade_to_int_range: outside the volume)."""
    g = np.asarray(g, F32)
    top = F32(size - 1)
    if align_corners:
        v = (((g + F32(1)) / F32(2)) * top).astype(F32)
    else:
        v = ((((g + F32(1)) * F32(size)).astype(F32) - F32(1)) / F32(2)).astype(F32)

    def clip(u):
        m = np.where(u < F32(0), F32(0), u)
        return np.where(m < top, m, top).astype(F32)

    if padding == 2:
        if align_corners and size <= 1:
            v = np.zeros_like(v)
        else:
            low, span = (F32(0), top) if align_corners else (F32(-0.5), F32(size))
            a = np.abs(v - low).astype(F32)
            extra = np.fmod(a, span).astype(F32)
            odd = np.fmod(np.floor((a / span).astype(F32)), F32(2)) == 1
            v = np.where(odd, ((span - extra).astype(F32) + low), extra + low).astype(F32)
    if padding in (1, 2):
        v = clip(v)
    outside = ~np.isfinite(v) | (v > F32(2.0 ** 31)) | (v < F32(-2.0 ** 31))
    return np.where(outside, F32(-100), v).astype(F32)


def grid_sampler_3d(x, grid, mode: int, padding: int, align_corners: bool) -> np.ndarray:
    """F.grid_sample of [N, C, D, H, W] float32 at grid [N, Do, Ho, Wo, 3]
    (x, y, z) in float32 (mode 0 trilinear, 1 nearest; padding 0 zeros,
    1 border, 2 reflection), PyTorch's scalar CPU kernel: out starts at 0
    and adds value * ((wx * wy) * wz) for each of the eight corners inside
    the volume (z, y, x nested, low tap first), the weights (f + 1) - v and
    v - f; nearest takes the tap rint(v) (halves to even, PyTorch 2.1's;
    1.13 rounded them away from zero), 0 outside."""
    x, grid = np.asarray(x, F32), np.asarray(grid, F32)
    n, _, d, h, w = x.shape
    with np.errstate(all="ignore"):
        iz, iy, ix = [_grid_source_3d(grid[..., k], size, padding, align_corners)
                      for k, size in ((2, d), (1, h), (0, w))]
        volume = x.transpose(0, 2, 3, 4, 1)                     # [N, D, H, W, C]
        batch = np.arange(n)[:, None, None, None]

        def value(zi, yi, xi):                                  # whether inside, and [N, C, Do, Ho, Wo]
            inside = (zi >= 0) & (zi < d) & (yi >= 0) & (yi < h) & (xi >= 0) & (xi < w)
            got = volume[batch, np.where(inside, zi, 0), np.where(inside, yi, 0), np.where(inside, xi, 0)]
            return inside[:, None], got.transpose(0, 4, 1, 2, 3)

        if mode == 1:
            inside, got = value(*[np.rint(v).astype(np.int64) for v in (iz, iy, ix)])
            return np.where(inside, got, F32(0)).astype(F32)
        low = [np.floor(v).astype(np.int64) for v in (iz, iy, ix)]
        # per axis: (tap, weight) for the low and the high corner
        taps = [[(f, (f.astype(F32) + F32(1) - v).astype(F32)), (f + 1, (v - f.astype(F32)).astype(F32))]
                for f, v in zip(low, (iz, iy, ix))]
        out = np.zeros((n, x.shape[1]) + grid.shape[1:4], F32)
        for zi, wz in taps[0]:
            for yi, wy in taps[1]:
                for xi, wx in taps[2]:
                    inside, got = value(zi, yi, xi)
                    weight = ((wx * wy).astype(F32) * wz).astype(F32)[:, None]
                    out = np.where(inside, (out + (got * weight).astype(F32)).astype(F32), out)
        return out


def pixel_shuffle(x, r: int, unshuffle: bool = False) -> np.ndarray:
    """[N, C*r*r, H, W] -> [N, C, H*r, W*r] (unshuffle: the inverse): channel
    c*r*r + i*r + j at (h, w) is channel c at (h*r + i, w*r + j)."""
    x = np.asarray(x)
    n, c, h, w = x.shape
    if unshuffle:
        y = x.reshape(n, c, h // r, r, w // r, r).transpose(0, 1, 3, 5, 2, 4)
        return y.reshape(n, c * r * r, h // r, w // r)
    y = x.reshape(n, c // (r * r), r, r, h, w).transpose(0, 1, 4, 2, 5, 3)
    return y.reshape(n, c // (r * r), h * r, w * r)


def edge_pad(x, padding, reflect: bool) -> np.ndarray:
    """reflection_pad / replication_pad: padding lists the last dim first
    ([left, right] then [top, bottom]); numpy's "reflect" (edge not
    repeated) and "edge" modes are PyTorch's reflect and replicate."""
    x = np.asarray(x)
    widths = [(0, 0)] * x.ndim
    for i in range(len(padding) // 2):
        widths[x.ndim - 1 - i] = (int(padding[2 * i]), int(padding[2 * i + 1]))
    return np.pad(x, widths, mode="reflect" if reflect else "edge")


def cat(tensors: Sequence[np.ndarray], dim: int) -> np.ndarray:
    kept = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)]
    return np.concatenate(kept, axis=dim)


def slice_copy(x, dim, start, end, step) -> np.ndarray:
    index = [slice(None)] * x.ndim
    index[dim] = slice(start, end, step)
    return x[tuple(index)]


def squeeze_dims(x, dims) -> np.ndarray:
    drop = tuple(sorted({d % x.ndim for d in dims if x.shape[d % x.ndim] == 1})) if x.ndim else ()
    return np.squeeze(x, axis=drop) if drop else x


def view_dtype(x, dtype, sizes) -> np.ndarray:
    """ptec::view_dtype.out: x's bytes (row-major, little-endian) read as
    dtype, torch's Tensor.view(dtype): the last size scaled by the ratio of
    the element sizes (op_view_dtype.c checks the shapes)."""
    x = np.ascontiguousarray(x)
    dt = np.dtype(dtype)
    if x.ndim == 0:
        if x.dtype.itemsize != dt.itemsize:
            raise ValueError("view_dtype: a 0-d x only as a dtype of its element size")
        return x.reshape(1).view(dt).reshape(())
    return x.view(dt).reshape([int(d) for d in sizes])


def _fmaf(a, b, c) -> np.float32:
    """C's fmaf: a * b + c exact, rounded once to float32 (nearest, ties to even)."""
    from fractions import Fraction
    exact = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
    f = np.float32(float(exact))                       # within a float32 step of the exact value
    near = [np.nextafter(f, np.float32(-np.inf)), f, np.nextafter(f, np.float32(np.inf))]
    near = [v for v in near if np.isfinite(v)] or [f]
    return min(near, key=lambda v: (abs(Fraction(float(v)) - exact), int(v.view(np.uint32)) & 1))


def histc(x, bins: int, lo: float, hi: float) -> np.ndarray:
    """aten::histc.out (op_histc.c): torch 1.13's histc of float32 x in
    float32 steps: [lo, hi] as given, or x's own range when they are equal
    (widened by one in float64 when equal again), bin trunc((v - lo) /
    (hi - lo) * bins), hi torch's last linspace edge, the maximum in the
    last bin, values outside dropped, NaN in bin 0 (torch 1.13's); counts
    as float32."""
    x = np.asarray(x, np.float32).reshape(-1)
    bins = int(bins)
    a, b = float(lo), float(hi)
    if a == b:
        if x.size:
            if np.isnan(x).any():
                raise ValueError("histc: range of self is not finite")
            a, b = float(x.min()), float(x.max())
        if a == b:
            a, b = a - 1.0, b + 1.0
    f32 = np.float32
    with np.errstate(over="ignore"):
        lo32, hi32 = f32(a), f32(b)
        if not (np.isfinite(lo32) and np.isfinite(hi32) and np.isfinite(f32(hi32 - lo32))):
            raise ValueError("histc: range of self is not finite")
    if (bins + 1) % 16 == 0:          # torch's last linspace edge (op_histc.c's last_edge)
        step = f32(f32(hi32 - lo32) / f32(bins))
        # base = hi - 7 * step by one fused multiply-add (op_histc.c's fmaf: rounded once)
        hi32 = f32(_fmaf(-step, f32(7), hi32) + f32(f32(7) * step))
    if not (lo32 < hi32 and np.isfinite(f32(hi32 - lo32))):
        raise ValueError("histc: min must be below max")
    nan = int(np.isnan(x).sum())      # torch 1.13 on 64-bit CPUs: bin 0
    keep = x[(x >= lo32) & (x <= hi32)]
    q = ((keep - lo32).astype(f32) / f32(hi32 - lo32)).astype(f32) * f32(bins)
    q = q.astype(f32)
    pos = np.where(q < f32(bins), np.trunc(q), bins - 1).astype(np.int64)
    pos = np.minimum(pos, bins - 1)
    counts = np.bincount(pos, minlength=bins)
    counts[0] += nan
    return counts.astype(f32)


def nms_threshold(t) -> float:
    """ptec::nms.Tensor_out's / batched_nms.Tensor_out's threshold: a
    float32 tensor of one element, its value as a double."""
    t = np.asarray(t)
    if t.dtype != np.float32 or t.size != 1:
        raise ValueError("nms: iou_threshold must be float32 of one element")
    return float(t.reshape(-1)[0])


def nms(boxes, order, t: float) -> np.ndarray:
    """ptec::nms.out (op_nms.c): float32 [K], 1 where the box at sorted
    position p (box order[p]) is kept by torchvision's CPU nms walk over
    that order; each float32 step as the C (std::max / min picks, areas
    precomputed, iou > t compared in double)."""
    b = np.asarray(boxes, np.float32).reshape(-1, 4)
    o = np.asarray(order, np.int64).reshape(-1)
    k = b.shape[0]
    if o.shape[0] != k or (k and (o.min() < 0 or o.max() >= k)):
        raise ValueError("nms: order holds an index outside [0, K)")
    area = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    sb, sa = b[o], area[o]
    alive = np.ones(k, bool)
    zero = np.float32(0)

    def pmax(a, c):
        return np.where(a < c, c, a)

    def pmin(a, c):
        return np.where(c < a, c, a)

    with np.errstate(all="ignore"):
        for p in range(k - 1):
            if not alive[p]:
                continue
            r = sb[p + 1:]
            w = pmax(zero, pmin(sb[p, 2], r[:, 2]) - pmax(sb[p, 0], r[:, 0]))
            h = pmax(zero, pmin(sb[p, 3], r[:, 3]) - pmax(sb[p, 1], r[:, 1]))
            inter = (w * h).astype(np.float32)
            iou = (inter / ((sa[p] + sa[p + 1:]) - inter)).astype(np.float32)
            hit = iou.astype(np.float64) > float(t)
            alive[p + 1:] &= ~hit
    return alive.astype(np.float32)


def batched_nms(boxes, scores, order, idxs, t: float) -> np.ndarray:
    """ptec::batched_nms.out (op_batched_nms.c): int64 [K], torchvision's
    batched_nms indices past 1,000 boxes, then -1 per box not kept. The
    walk over the stable order is nms's (each float32 step as the C), a
    kept box suppressing only later boxes of its class (a NaN class is
    none: never kept); the kept indices, ascending, then reordered by
    libstdc++'s std::sort with torch's descending comparison (std_sort)."""
    from .std_sort import descending_keys, sorted_positions
    b = np.asarray(boxes, np.float32).reshape(-1, 4)
    v = np.asarray(scores, np.float32).reshape(-1)
    o = np.asarray(order, np.int64).reshape(-1)
    c = np.asarray(idxs).reshape(-1)
    k = b.shape[0]
    if v.shape[0] != k or o.shape[0] != k or c.shape[0] != k or (k and (o.min() < 0 or o.max() >= k)):
        raise ValueError("batched_nms: order holds an index outside [0, K)")
    area = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    alive = c == c
    zero = np.float32(0)

    def pmax(a, d):
        return np.where(a < d, d, a)

    def pmin(a, d):
        return np.where(d < a, d, a)

    with np.errstate(all="ignore"):
        for p in range(k):
            i = o[p]
            if not alive[i]:
                continue
            js = o[p + 1:]
            js = js[alive[js] & (c[js] == c[i])]
            r = b[js]
            w = pmax(zero, pmin(b[i, 2], r[:, 2]) - pmax(b[i, 0], r[:, 0]))
            h = pmax(zero, pmin(b[i, 3], r[:, 3]) - pmax(b[i, 1], r[:, 1]))
            inter = (w * h).astype(np.float32)
            iou = (inter / ((area[i] + area[js]) - inter)).astype(np.float32)
            alive[js[iou.astype(np.float64) > float(t)]] = False
    kept = np.nonzero(alive)[0]
    out = np.full(k, -1, np.int64)
    out[:kept.shape[0]] = kept[sorted_positions(descending_keys(v[kept]))]
    return out
