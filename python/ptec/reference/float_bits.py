"""numpy references of aten::nextafter.out and aten::frexp.Tensor_out
(src/kernels/portable/op_float_bits.c): the same integer steps on the
float32 encodings (uint32 views), element-wise over whole arrays."""
from __future__ import annotations

import numpy as np

F32, U32 = np.float32, np.uint32
SIGN, MAGNITUDE, INF = np.uint32(0x80000000), np.uint32(0x7FFFFFFF), np.uint32(0x7F800000)
QUIET_NAN = np.uint32(0x7FC00000)


def _bits(a) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(a, F32)).view(U32)


def _ordered(u: np.ndarray) -> np.ndarray:
    m = (u & MAGNITUDE).astype(np.int64)
    return np.where((u & SIGN) != 0, -m, m)


def nextafter(a, b) -> np.ndarray:
    """The next float32 after a towards b, broadcast; NaN as 0x7FC00000."""
    a, b = np.broadcast_arrays(np.asarray(a, F32), np.asarray(b, F32))
    x, y = _bits(a), _bits(b)
    kx, ky = _ordered(x), _ordered(y)
    up = (kx < ky) == (kx > 0)
    with np.errstate(over="ignore"):
        step = np.where(up, x + U32(1), x - U32(1)).astype(U32)
    r = np.where((x & MAGNITUDE) == 0, (y & SIGN) | U32(1), step).astype(U32)
    r = np.where(kx == ky, y, r).astype(U32)
    nan = ((x & MAGNITUDE) > INF) | ((y & MAGNITUDE) > INF)
    r = np.where(nan, QUIET_NAN, r).astype(U32)
    return r.view(F32)


def frexp(x):
    """(mantissa float32, exponent int32) of float32 x, C99's frexpf: 0,
    -0, +-inf as they are (a NaN quieted), exponent 0 there."""
    u = _bits(x).reshape(-1)
    m = np.empty_like(u)
    e = np.zeros(u.shape, np.int32)
    for i, v in enumerate(u.tolist()):
        sign, mag = v & 0x80000000, v & 0x7FFFFFFF
        if mag == 0 or mag >= 0x7F800000:
            m[i] = v | 0x00400000 if mag > 0x7F800000 else v
        elif mag >= 0x00800000:
            e[i] = (mag >> 23) - 126
            m[i] = sign | (126 << 23) | (mag & 0x007FFFFF)
        else:
            k = mag.bit_length() - 1
            e[i] = k - 148
            m[i] = sign | (126 << 23) | ((mag << (23 - k)) & 0x007FFFFF)
    shape = np.shape(x)
    return m.view(F32).reshape(shape), e.reshape(shape)
