"""Emit the 16-bit-activation kernels (`ptec::*_a16`, docs/kernels.md "16-bit
activations"; CMSIS-NN's s16 numerics) with their integer parameters
computed ahead of time. int16 values are symmetric: zero point 0 on a grid
whose scale maps the observed range onto [-32767, 32767] (attrs["scale16"],
ptec.quantize.mark_a16).

Every helper takes and returns an `Act` (ptec.lowered), like
ptec.backends.cortex_m.kernels for the int8 operators.
"""
from __future__ import annotations

import math
from typing import Optional, Sequence, Tuple

import numpy as np

from ... import quant_math as qm
from ...lowered import Act, new_act
from ...pte.schema import ScalarType
from .kernels import conv_out_size, is_depthwise

I16 = ScalarType.SHORT
A16_MIN, A16_MAX = -32768, 32767
# TFLite's int16 softmax maps a difference x - max of [-10, 0] onto the
# exp table's [-65535, 0] (its SoftmaxPrepare: input_scale * beta / (10 / 65535)).
SOFTMAX16_INPUT_RANGE = 10.0


def activation_range16(act, scale: float) -> Tuple[int, int]:
    """A fused activation's clamp bounds on the int16 grid (zero point 0)."""
    lo, hi = act if act else (None, None)
    qlo = A16_MIN if lo is None or lo == -math.inf else max(A16_MIN, math.ceil(lo / scale - 1e-9))
    qhi = A16_MAX if hi is None or hi == math.inf else min(A16_MAX, math.floor(hi / scale + 1e-9))
    return int(qlo), int(qhi)


def _shift16(mult: int, shift: int, what: str) -> Tuple[int, int]:
    # the s16 requantization takes shifts in [-31, 7] (CMSIS-NN's range)
    if shift > 7:
        raise ValueError(f"{what}: int16 requantization shift {shift} above 7 "
                         "(output scale too small for the layer)")
    return mult, shift


def quantize16(b, x: Act, scale: float) -> Act:
    """float32 -> int16 on (scale, 0): the portable quantize (upstream's cortex_m one is int8 only)."""
    out = new_act(b, I16, x.sizes, scale, 0)
    b.call("quantized_decomposed::quantize_per_tensor.out", input=x.value, scale=float(scale), zero_point=0,
           quant_min=A16_MIN, quant_max=A16_MAX, dtype=I16, out=out.value)
    return out


def dequantize16(b, x: Act) -> Act:
    out = new_act(b, ScalarType.FLOAT, x.sizes)
    b.call("quantized_decomposed::dequantize_per_tensor.out", input=x.value, scale=float(x.scale), zero_point=0,
           quant_min=A16_MIN, quant_max=A16_MAX, dtype=I16, out=out.value)
    return out


def bias64(bias: Optional[np.ndarray], s_in: float, w_scales, count: int) -> Optional[np.ndarray]:
    """A float bias on the accumulator's grid s_in * s_w, as int64 (CMSIS-NN's s16 bias)."""
    if bias is None:
        return None
    q = np.round(np.asarray(bias, np.float64) / (float(s_in) * np.broadcast_to(
        np.asarray(w_scales, np.float64), (count,))))
    return np.clip(q, -2.0 ** 60, 2.0 ** 60).astype(np.int64)


def conv2d(b, x: Act, weight_oihw: np.ndarray, bias: Optional[np.ndarray], weight_scales,
           out_scale: float, stride, padding, dilation, groups: int, act) -> Act:
    """ptec::quantized_conv2d_a16, or its depthwise form."""
    n, cin, h, w = x.sizes
    cout, cin_g, kh, kw = weight_oihw.shape
    oh = conv_out_size(h, kh, stride[0], padding[0], dilation[0])
    ow = conv_out_size(w, kw, stride[1], padding[1], dilation[1])
    sig = np.broadcast_to(float(x.scale) * np.asarray(weight_scales, np.float64) / float(out_scale), (cout,))
    mults, shifts = qm.per_channel_multipliers(sig)
    for m, s in zip(mults, shifts):
        _shift16(int(m), int(s), "conv2d")
    lo, hi = activation_range16(act, out_scale)
    b64 = bias64(bias, x.scale, weight_scales, cout)
    out = new_act(b, I16, [n, cout, oh, ow], out_scale, 0)
    common = dict(input=x.value, bias=None if b64 is None else b.constant(b64), stride=list(stride),
                  padding=list(padding), dilation=list(dilation), requantize_multipliers=b.constant(mults),
                  requantize_shifts=b.constant(shifts), activation_min=lo, activation_max=hi,
                  scratch=b.scratch(0), out=out.value)
    w8 = np.asarray(weight_oihw, np.int8)
    if is_depthwise(n, cin, cout, groups):
        b.call("ptec::quantized_depthwise_conv2d_a16.out",
               weight=b.constant(np.ascontiguousarray(w8.transpose(1, 2, 3, 0))),    # [1,KH,KW,Cout]
               depth_multiplier=cout // cin, **common)
    else:
        b.call("ptec::quantized_conv2d_a16.out",
               weight=b.constant(np.ascontiguousarray(w8.transpose(0, 2, 3, 1))),    # [Cout,KH,KW,Cin/g]
               **common)
    return out


def linear(b, x: Act, weight: np.ndarray, bias: Optional[np.ndarray], weight_scale: float,
           out_scale: float, act) -> Act:
    out_features, in_features = weight.shape
    mult, shift = _shift16(*qm.requant_multiplier(float(x.scale) * float(weight_scale) / float(out_scale)),
                           "linear")
    lo, hi = activation_range16(act, out_scale)
    b64 = bias64(bias, x.scale, weight_scale, out_features)
    out = new_act(b, I16, list(x.sizes[:-1]) + [out_features], out_scale, 0)
    b.call("ptec::quantized_linear_a16.out", input=x.value,
           weights=b.constant(np.ascontiguousarray(np.asarray(weight, np.int8))),
           bias=None if b64 is None else b.constant(b64), requantize_multipliers=[mult],
           requantize_shifts=[shift], activation_max=hi, activation_min=lo, out=out.value)
    return out


def add(b, x1: Act, x2: Act, out_scale: float, act) -> Act:
    """TFLite Micro's int16 add: both inputs * 2^15 on the grid of twice the
    larger input scale, summed, requantized to the output."""
    common = 2.0 * max(float(x1.scale), float(x2.scale))
    (m1, s1), (m2, s2) = qm.quantize_multiplier(x1.scale / common), qm.quantize_multiplier(x2.scale / common)
    mo, so = qm.quantize_multiplier(common / (float(out_scale) * (1 << 15)))
    lo, hi = activation_range16(act, out_scale)
    sizes = x1.sizes if int(np.prod(x1.sizes)) >= int(np.prod(x2.sizes)) else x2.sizes
    out = new_act(b, I16, sizes, out_scale, 0)
    b.call("ptec::quantized_add_a16.out", self=x1.value, self_multiplier=m1, self_shift=s1, other=x2.value,
           other_multiplier=m2, other_shift=s2, output_multiplier=mo, output_shift=so,
           activation_min=lo, activation_max=hi, out=out.value)
    return out


def mul(b, x1: Act, x2: Act, out_scale: float) -> Act:
    mo, so = qm.quantize_multiplier(float(x1.scale) * float(x2.scale) / float(out_scale))
    sizes = x1.sizes if int(np.prod(x1.sizes)) >= int(np.prod(x2.sizes)) else x2.sizes
    out = new_act(b, I16, sizes, out_scale, 0)
    b.call("ptec::quantized_mul_a16.out", self=x1.value, other=x2.value, output_multiplier=mo,
           output_shift=so, out=out.value)
    return out


def pool_output_size(i: int, k: int, s: int, p: int, ceil_mode: bool) -> int:
    o = (i + 2 * p - k) // s + 1
    if ceil_mode:
        if (i + 2 * p - k) % s:
            o += 1
        if (o - 1) * s >= i + p:        # the last window must start inside the input or left pad
            o -= 1
    return o


def avg_pool2d(b, x: Act, kernel: Sequence[int], stride: Sequence[int], padding: Sequence[int],
               ceil_mode: bool) -> Act:
    """Averages over the in-bounds positions (count_include_pad=False, or no padding)."""
    n, c, h, w = x.sizes
    oh = pool_output_size(h, kernel[0], stride[0], padding[0], ceil_mode)
    ow = pool_output_size(w, kernel[1], stride[1], padding[1], ceil_mode)
    out = new_act(b, I16, [n, c, oh, ow], x.scale, 0)
    # multiplier and shift are read and unused, as in the int8 op
    b.call("ptec::quantized_avg_pool2d_a16.out", input=x.value, kernel_size=list(kernel), stride=list(stride),
           padding=list(padding), ceil_mode=bool(ceil_mode), multiplier=1 << 30, shift=0,
           scratch=b.scratch(0), out=out.value)
    return out


def max_pool2d(b, x: Act, kernel, stride, padding, ceil_mode: bool, lo: int = A16_MIN,
               hi: int = A16_MAX) -> Act:
    n, c, h, w = x.sizes
    oh = pool_output_size(h, kernel[0], stride[0], padding[0], ceil_mode)
    ow = pool_output_size(w, kernel[1], stride[1], padding[1], ceil_mode)
    out = new_act(b, I16, [n, c, oh, ow], x.scale, 0)
    b.call("ptec::quantized_max_pool2d_a16.out", input=x.value, kernel_size=list(kernel), stride=list(stride),
           padding=list(padding), dilation=[1, 1], ceil_mode=bool(ceil_mode), activation_min=int(lo),
           activation_max=int(hi), out=out.value)
    return out


def softmax_tables() -> Tuple[np.ndarray, np.ndarray]:
    """The two 513-entry int16 tables of TFLite's int16 softmax: exp(x) on
    [-10, 0] and 1 / (1 + x) on [0, 1], in Q0.15, each entry the function
    at its point (TFLite's gen_lut also balances the interpolation error;
    ptec's tables are the plain samples, which the kernel and the reference
    share as constants of the program)."""
    steps = np.arange(513, dtype=np.float64) / 512.0
    exp_lut = np.clip(np.round(32767.0 * np.exp(-SOFTMAX16_INPUT_RANGE * (1.0 - steps))), A16_MIN, A16_MAX)
    one_lut = np.clip(np.round(32767.0 / (1.0 + steps)), A16_MIN, A16_MAX)
    return exp_lut.astype(np.int16), one_lut.astype(np.int16)


def softmax(b, x: Act) -> Act:
    """ptec::softmax_a16 over the last (physical) dim; output 1/32768, zero point 0."""
    mult, shift = qm.quantize_multiplier(float(x.scale) * 65535.0 / SOFTMAX16_INPUT_RANGE)
    if not -31 <= shift <= 31:
        raise ValueError(f"softmax: int16 input shift {shift} outside [-31, 31]")
    exp_lut, one_lut = softmax_tables()
    out = new_act(b, I16, x.sizes, qm.SOFTMAX16_OUTPUT_SCALE, 0)
    b.call("ptec::softmax_a16.out", input=x.value, dim=-1, input_multiplier=mult, input_shift=shift,
           exp_lut=b.constant(exp_lut), one_by_one_lut=b.constant(one_lut), out=out.value)
    return out
