"""Emit one cortex_m kernel call each, with its integer parameters computed
ahead of time: per-channel requantization multipliers and shifts, zero-point
signs (cortex-m-ops.md §1.4), pre-permuted weights, kernel sums, LUTs and
scratch sizes for the target ISA. The cortex_m lowering and the sample
programs are built from these, so a test program and a compiled model take
one code path.

Every helper takes and returns an `Act` (ptec.lowered).
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from ... import quant_math as qm
from ...lowered import Act, new_act
from ...pte.program_builder import CHANNELS_LAST
from ...pte.schema import ScalarType
from . import scratch as sc

I8 = ScalarType.CHAR


def quantized_constant(b, value: np.ndarray, scale: float, zp: int) -> Act:
    """A float constant stored as int8 on the grid (scale, zp), quantized
    ahead of time with the numerics of cortex_m::quantize_per_tensor; a 4-D
    constant is stored channels-last like activations."""
    q8 = qm.quantize_to_int8(value, scale, zp)
    if q8.ndim == 4:
        v = b.constant(np.ascontiguousarray(q8.transpose(0, 2, 3, 1)))
        t = b.values[v].val
        t.sizes, t.dim_order = list(q8.shape), bytes(CHANNELS_LAST)
    else:
        v = b.constant(q8)
    return Act(v, list(q8.shape), I8, scale, zp)


def conv_out_size(n, k, s, p, d) -> int:
    return (n + 2 * p - d * (k - 1) - 1) // s + 1


def quantize(b, x: Act, scale: float, zp: int) -> Act:
    out = new_act(b, I8, x.sizes, scale, zp)
    b.call("cortex_m::quantize_per_tensor.out", input=x.value, scale=float(scale),
           zero_point=int(zp), quant_min=qm.QMIN, quant_max=qm.QMAX, dtype=I8, out=out.value)
    return out


def dequantize(b, x: Act) -> Act:
    out = new_act(b, ScalarType.FLOAT, x.sizes)
    b.call("cortex_m::dequantize_per_tensor.out", input=x.value, scale=float(x.scale),
           zero_point=int(x.zp), quant_min=qm.QMIN, quant_max=qm.QMAX, dtype=I8,
           out=out.value)
    return out


def is_depthwise(n: int, cin: int, cout: int, groups: int) -> bool:
    return groups == cin and cout % cin == 0 and n == 1


def conv2d(b, x: Act, weight_oihw: np.ndarray, bias_i32: Optional[np.ndarray],
           weight_scales: Sequence[float], out_scale: float, out_zp: int,
           stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups: int = 1,
           act_min: int = qm.QMIN, act_max: int = qm.QMAX,
           target: str = "cortex-m55", weight_bits: int = 8) -> Act:
    """quantized_conv2d or quantized_depthwise_conv2d (cortex-m-ops.md §3.9-3.10);
    with 4-bit weights, ptec::quantized_conv2d_w4 or
    ptec::quantized_depthwise_conv2d_w4 (docs/kernels.md)."""
    n, cin, h, w = x.sizes
    cout, cin_g, kh, kw = weight_oihw.shape
    if cin_g * groups != cin:
        raise ValueError(f"weight {weight_oihw.shape} does not fit input {x.sizes} groups {groups}")
    oh = conv_out_size(h, kh, stride[0], padding[0], dilation[0])
    ow = conv_out_size(w, kw, stride[1], padding[1], dilation[1])
    sig = np.float64(x.scale) * np.asarray(weight_scales, np.float64) / np.float64(out_scale)
    sig = np.broadcast_to(sig, (cout,))
    mults, shifts = qm.per_channel_multipliers(sig)
    for s in shifts:
        qm.check_shift(int(s), "conv2d")
    if bias_i32 is None and groups > 1:
        bias_i32 = np.zeros(cout, np.int32)
    bias_v = None if bias_i32 is None else b.constant(np.asarray(bias_i32, np.int32))
    out = new_act(b, I8, [n, cout, oh, ow], out_scale, out_zp)
    common = dict(input=x.value, bias=bias_v, stride=list(stride), padding=list(padding),
                  dilation=list(dilation), input_offset=-int(x.zp), output_offset=int(out_zp),
                  requantize_multipliers=b.constant(mults), requantize_shifts=b.constant(shifts),
                  activation_min=int(act_min), activation_max=int(act_max), out=out.value)
    w8 = np.asarray(weight_oihw, np.int8)
    if is_depthwise(n, cin, cout, groups):
        wt = np.ascontiguousarray(w8.transpose(1, 2, 3, 0))          # [1,KH,KW,Cout]
        if weight_bits == 4:
            # ptec's kernel takes its scratch from the runtime's region
            # (runtime_scratch.depthwise_conv2d_w4): the argument stays empty.
            b.call("ptec::quantized_depthwise_conv2d_w4.out", weight=b.constant(pack_int4(wt)),
                   weight_sizes=list(wt.shape), depth_multiplier=cout // cin, scratch=b.scratch(0), **common)
            return out
        scr = sc.depthwise_scratch(target, n, cin, cout, kh, kw, padding, dilation)
        b.call("cortex_m::quantized_depthwise_conv2d.out", weight=b.constant(wt),
               depth_multiplier=cout // cin, scratch=b.scratch(scr), **common)
    else:
        wt = np.ascontiguousarray(w8.transpose(0, 2, 3, 1))          # [Cout,KH,KW,Cin/g]
        # The s4 kernels work within the s8 kernel's scratch (docs/kernels.md).
        scr = sc.conv2d_scratch(target, cin_g, kh, kw, stride, padding, dilation)
        if weight_bits == 4:
            if groups != 1:
                raise ValueError("4-bit weights need groups 1")
            b.call("ptec::quantized_conv2d_w4.out", weight=b.constant(pack_int4(wt)),
                   weight_sizes=list(wt.shape), scratch=b.scratch(scr), **common)
        else:
            b.call("cortex_m::quantized_conv2d.out", weight=b.constant(wt),
                   scratch=b.scratch(scr), **common)
    return out


def pack_int4(w: np.ndarray) -> np.ndarray:
    """int4 values (int8 array in [-8, 7]), flattened in order, two to a
    byte: value 2i in byte i's low nibble, 2i+1 in its high nibble, as
    CMSIS-NN's s4 kernels read them. Rows are not padded."""
    flat = np.asarray(w, np.int8).reshape(-1)
    if flat.size and (flat.min() < -8 or flat.max() > 7):
        raise ValueError("4-bit weights must lie in [-8, 7]")
    nib = (flat.astype(np.int16) & 0xF).astype(np.uint8)
    if nib.size % 2:
        nib = np.append(nib, np.uint8(0))
    return (nib[0::2] | (nib[1::2] << 4)).astype(np.uint8).view(np.int8)


def transpose_conv2d(b, x: Act, weight_iohw: np.ndarray, bias_i32: Optional[np.ndarray],
                     weight_scales: Sequence[float], out_scale: float, out_zp: int,
                     stride=(1, 1), padding=(0, 0), output_padding=(0, 0), dilation=(1, 1),
                     act_min: int = qm.QMIN, act_max: int = qm.QMAX,
                     target: str = "cortex-m55") -> Act:
    """quantized_transpose_conv2d (cortex-m-ops.md §3.11). The PyTorch weight
    [Cin, Cout, KH, KW] becomes OHWI [Cout, KH, KW, Cin]; per-channel
    multipliers are indexed by output channel."""
    n, cin, h, w = x.sizes
    cin_w, cout, kh, kw = weight_iohw.shape
    if cin_w != cin:
        raise ValueError(f"transpose conv weight {weight_iohw.shape} does not fit input {x.sizes}")

    def osize(i, k, s, p, op, d):
        return (i - 1) * s - 2 * p + d * (k - 1) + op + 1
    oh = osize(h, kh, stride[0], padding[0], output_padding[0], dilation[0])
    ow = osize(w, kw, stride[1], padding[1], output_padding[1], dilation[1])
    sig = np.float64(x.scale) * np.asarray(weight_scales, np.float64) / np.float64(out_scale)
    mults, shifts = qm.per_channel_multipliers(np.broadcast_to(sig, (cout,)))
    for s in shifts:
        qm.check_shift(int(s), "transpose_conv2d")
    wt = np.ascontiguousarray(np.asarray(weight_iohw, np.int8).transpose(1, 2, 3, 0))
    scr, out_scr = sc.transpose_conv_scratch(target, cin, w, cout, kh, kw, stride)
    out = new_act(b, I8, [n, cout, oh, ow], out_scale, out_zp)
    b.call("cortex_m::quantized_transpose_conv2d.out", input=x.value, weight=b.constant(wt),
           bias=None if bias_i32 is None else b.constant(np.asarray(bias_i32, np.int32)),
           stride=list(stride), padding=list(padding), output_padding=list(output_padding),
           dilation=list(dilation), input_offset=-int(x.zp), output_offset=int(out_zp),
           requantize_multipliers=b.constant(mults), requantize_shifts=b.constant(shifts),
           activation_min=int(act_min), activation_max=int(act_max), scratch=b.scratch(scr),
           output_scratch=b.scratch(out_scr), out=out.value)
    return out


def batch_matmul(b, lhs: Act, rhs_t: Act, out_scale: float, out_zp: int,
                 target: str = "cortex-m55") -> Act:
    """quantized_batch_matmul (§3.12): lhs [B,M,K] and rhs transposed [B,N,K],
    both contiguous; the "zero point" arguments carry the negated zero points."""
    bsz, m, k = lhs.sizes
    bsz2, n, k2 = rhs_t.sizes
    if bsz != bsz2 or k != k2:
        raise ValueError(f"batch matmul {lhs.sizes} x {rhs_t.sizes}^T")
    mult, shift = qm.requant_multiplier(float(lhs.scale) * float(rhs_t.scale) / float(out_scale))
    qm.check_shift(shift, "batch_matmul")
    out = new_act(b, I8, [bsz, m, n], out_scale, out_zp)
    b.call("cortex_m::quantized_batch_matmul.out", lhs=lhs.value, lhs_zero_point=-int(lhs.zp),
           rhs_transposed=rhs_t.value, rhs_zero_point=-int(rhs_t.zp),
           output_zero_point=int(out_zp), output_multiplier=mult, output_shift=shift,
           scratch=b.scratch(sc.batch_matmul_scratch(target, n)), out=out.value)
    return out


def div(b, x1: Act, x2: Act, out_scale: float, out_zp: int) -> Act:
    """quantized_div (§3.5): same shapes; output_scale is s1 / (s2 * s_out)."""
    out = new_act(b, I8, x1.sizes, out_scale, out_zp)
    b.call("cortex_m::quantized_div.out", self=x1.value, self_zero_point=int(x1.zp),
           other=x2.value, other_zero_point=int(x2.zp), output_zero_point=int(out_zp),
           output_scale=float(x1.scale) / (float(x2.scale) * float(out_scale)), out=out.value)
    return out


def min_max(b, key: str, x1: Act, x2: Act) -> Act:
    """cortex_m::minimum / maximum on raw int8 (both inputs on one grid)."""
    sizes = x1.sizes if int(np.prod(x1.sizes)) >= int(np.prod(x2.sizes)) else x2.sizes
    out = new_act(b, I8, sizes, x1.scale, x1.zp)
    b.call(f"cortex_m::{key}.out", self=x1.value, other=x2.value, out=out.value)
    return out


def transpose(b, x: Act, perm: Sequence[int], dim_order=None) -> Act:
    """cortex_m::transpose of a contiguous tensor (§3.16)."""
    sizes = [x.sizes[p] for p in perm]
    out = new_act(b, x.dtype, sizes, x.scale, x.zp,
                  dim_order=list(range(len(sizes))) if dim_order is None else dim_order)
    b.call("cortex_m::transpose.out", input=x.value, perm=[int(p) for p in perm],
           out=out.value)
    return out


def linear(b, x: Act, weight: np.ndarray, bias_i32: Optional[np.ndarray], weight_scale: float,
           out_scale: float, out_zp: int, act_min: int = qm.QMIN, act_max: int = qm.QMAX,
           target: str = "cortex-m55", weight_bits: int = 8) -> Act:
    """quantized_linear (cortex-m-ops.md §3.8): per-tensor symmetric weights;
    kernel_sum on MVE targets, bias on DSP targets. With 4-bit weights,
    ptec::quantized_linear_w4, which takes a bias on every target."""
    out_features, in_features = weight.shape
    if x.sizes[-1] != in_features:
        raise ValueError(f"linear input {x.sizes} vs weight {weight.shape}")
    mult, shift = qm.requant_multiplier(float(x.scale) * float(weight_scale) / float(out_scale))
    qm.check_shift(shift, "linear")
    w8 = np.ascontiguousarray(np.asarray(weight, np.int8))
    bias = np.zeros(out_features, np.int64) if bias_i32 is None else np.asarray(bias_i32, np.int64)
    out = new_act(b, I8, list(x.sizes[:-1]) + [out_features], out_scale, out_zp)
    input_offset = -int(x.zp)
    if weight_bits == 4:
        b.call("ptec::quantized_linear_w4.out", input=x.value, weights=b.constant(pack_int4(w8)),
               weight_sizes=[out_features, in_features],
               bias=None if bias_i32 is None else b.constant(np.asarray(bias_i32, np.int32)),
               input_offset=input_offset, output_offset=int(out_zp), requantize_multipliers=[mult],
               requantize_shifts=[shift], activation_max=int(act_max), activation_min=int(act_min),
               out=out.value)
        return out
    if sc.linear_uses_kernel_sum(target):
        ksum = input_offset * w8.astype(np.int64).sum(axis=1) + bias
        if np.abs(ksum).max(initial=0) >= 2 ** 31:
            raise ValueError("linear kernel_sum overflows int32")
        bias_v, ksum_v = None, b.constant(ksum.astype(np.int32).reshape(1, out_features))
    else:
        bias_v = None if bias_i32 is None else b.constant(np.asarray(bias_i32, np.int32))
        ksum_v = None
    b.call("cortex_m::quantized_linear.out", input=x.value, weights=b.constant(w8),
           bias=bias_v, kernel_sum=ksum_v, input_offset=input_offset, filter_offset=0,
           output_offset=int(out_zp), requantize_multipliers=[mult],
           requantize_shifts=[shift], activation_max=int(act_max),
           activation_min=int(act_min), out=out.value)
    return out


def pad(b, x: Act, pre: Sequence[int], post: Sequence[int], value: int) -> Act:
    """cortex_m::pad with 4-entry physical (N,H,W,C) pads for a 4-D tensor."""
    n, c, h, w = x.sizes
    out = new_act(b, I8, [n + pre[0] + post[0], c + pre[3] + post[3],
                          h + pre[1] + post[1], w + pre[2] + post[2]], x.scale, x.zp)
    b.call("cortex_m::pad.out", input=x.value, pre_pad=list(pre), post_pad=list(post),
           pad_value=int(value), out=out.value)
    return out


def avg_pool2d(b, x: Act, kernel, stride=None, padding=(0, 0), ceil_mode=False,
               count_include_pad=True, target="cortex-m55") -> Act:
    stride = list(kernel) if stride is None else list(stride)
    padding = list(padding)
    if count_include_pad and any(padding):
        x = pad(b, x, [0, padding[0], padding[1], 0], [0, padding[0], padding[1], 0], x.zp)
        padding = [0, 0]
    n, c, h, w = x.sizes

    def osize(i, k, s, p):
        o = (i + 2 * p - k) // s + 1
        if ceil_mode:
            if (i + 2 * p - k) % s:
                o += 1
            if (o - 1) * s >= i + p:
                o -= 1
        return o
    oh, ow = osize(h, kernel[0], stride[0], padding[0]), osize(w, kernel[1], stride[1], padding[1])
    out = new_act(b, I8, [n, c, oh, ow], x.scale, x.zp)
    mult, shift = qm.quantize_multiplier(float(x.scale))
    b.call("cortex_m::quantized_avg_pool2d.out", input=x.value, kernel_size=list(kernel),
           stride=stride, padding=padding, ceil_mode=bool(ceil_mode), zero_point=int(x.zp),
           multiplier=mult, shift=shift, scratch=b.scratch(sc.avg_pool_scratch(target, c)),
           out=out.value)
    return out


def max_pool2d(b, x: Act, kernel, stride=None, padding=(0, 0), act_min=qm.QMIN,
               act_max=qm.QMAX) -> Act:
    stride = list(kernel) if stride is None else list(stride)
    n, c, h, w = x.sizes
    oh = conv_out_size(h, kernel[0], stride[0], padding[0], 1)
    ow = conv_out_size(w, kernel[1], stride[1], padding[1], 1)
    out = new_act(b, I8, [n, c, oh, ow], x.scale, x.zp)
    b.call("cortex_m::quantized_max_pool2d.out", input=x.value, kernel_size=list(kernel),
           stride=stride, padding=list(padding), dilation=[1, 1], ceil_mode=False,
           input_zero_point=int(x.zp), output_zero_point=int(x.zp),
           activation_min=int(act_min), activation_max=int(act_max), out=out.value)
    return out


def add(b, x1: Act, x2: Act, out_scale, out_zp, act_min=qm.QMIN, act_max=qm.QMAX) -> Act:
    (m1, s1), (m2, s2), (mo, so) = qm.add_params(x1.scale, x2.scale, out_scale)
    sizes = x1.sizes if int(np.prod(x1.sizes)) >= int(np.prod(x2.sizes)) else x2.sizes
    out = new_act(b, I8, sizes, out_scale, out_zp)
    b.call("cortex_m::quantized_add.out", self=x1.value, self_zero_point=int(x1.zp),
           self_multiplier=m1, self_shift=s1, other=x2.value, other_zero_point=int(x2.zp),
           other_multiplier=m2, other_shift=s2, output_zero_point=int(out_zp),
           output_multiplier=mo, output_shift=so, activation_min=int(act_min),
           activation_max=int(act_max), out=out.value)
    return out


def mul(b, x1: Act, x2: Act, out_scale, out_zp) -> Act:
    mo, so = qm.requant_multiplier(x1.scale * x2.scale / out_scale)
    sizes = x1.sizes if int(np.prod(x1.sizes)) >= int(np.prod(x2.sizes)) else x2.sizes
    out = new_act(b, I8, sizes, out_scale, out_zp)
    b.call("cortex_m::quantized_mul.out", self=x1.value, self_zero_point=int(x1.zp),
           other=x2.value, other_zero_point=int(x2.zp), output_zero_point=int(out_zp),
           output_multiplier=mo, output_shift=so, out=out.value)
    return out


def softmax(b, x: Act, dim: int = -1) -> Act:
    mult, shift, diff_min = qm.softmax_params(float(x.scale))
    out = new_act(b, I8, x.sizes, qm.SOFTMAX_OUTPUT_SCALE, qm.SOFTMAX_OUTPUT_ZERO_POINT)
    b.call("cortex_m::softmax.out", input=x.value, dim=int(dim), input_zero_point=int(x.zp),
           output_zero_point=qm.SOFTMAX_OUTPUT_ZERO_POINT, input_multiplier=mult,
           input_shift=shift, diff_min=diff_min, out=out.value)
    return out





def lut_table(fn, in_scale: float, in_zp: int, out_scale: float, out_zp: int) -> np.ndarray:
    """The 256-entry int8 table of fn from the grid (in_scale, in_zp) to
    (out_scale, out_zp), indexed by input + 128; the Ethos-U backend's LUT
    uses the same table, so both give the same bytes."""
    q = np.arange(-128, 128, dtype=np.float64)
    y = fn((q - in_zp) * in_scale) / out_scale + out_zp
    if np.isnan(y).any() and not np.isnan(y).all():
        # an int8 code holds no NaN: an entry where fn gives one (outside its domain, where calibration
        # never went: lowering refuses NaN it saw) takes the nearest entry's value (inf saturates below)
        ok = np.flatnonzero(~np.isnan(y))
        near = ok[np.abs(np.arange(256)[:, None] - ok[None, :]).argmin(axis=1)]
        y = y[near]
    y = np.sign(y) * np.floor(np.abs(y) + 0.5)              # half away from zero
    return np.clip(y, -128, 127).astype(np.int8)


def activation_lut(b, x: Act, fn, out_scale: float, out_zp: int) -> Act:
    """cortex_m::quantized_activation with a 256-entry table (§3.6)."""
    lut = lut_table(fn, x.scale, x.zp, out_scale, out_zp)
    out = new_act(b, I8, x.sizes, out_scale, out_zp)
    b.call("cortex_m::quantized_activation.out", input=x.value, lut=b.constant(lut),
           out=out.value)
    return out
