#!/usr/bin/python3
"""The cortex_m operator wrappers end to end: one-op .pte programs built with
ptec.pte.ProgramBuilder, run by ptec-run, compared byte for byte with
ptec.reference.cortex_m; and malformed calls that prepare must refuse with a
clear message (never a crash, never at run time).

Usage: kernel_ops_e2e.py --ptec-run PATH [--keep DIR]
       kernel_ops_e2e.py --qemu-target CORE --runner-elf ELF [--keep DIR]
The second form runs the same programs on the emulated board with the
fixed-address firmware runner (scripts/run_qemu.sh) instead of ptec-run.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import re

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from ptec.pte.program_builder import CHANNELS_LAST, ProgramBuilder  # noqa: E402
from ptec.pte.schema import ScalarType  # noqa: E402
from ptec.pte.writer import write_program  # noqa: E402
from ptec.reference import cortex_m as ref  # noqa: E402
from ptec.targets import CORES  # noqa: E402

I8, I16, I32, F32 = ScalarType.CHAR, ScalarType.SHORT, ScalarType.INT, ScalarType.FLOAT
rng = np.random.default_rng(11)


def i8(shape):
    return rng.integers(-128, 128, size=shape, dtype=np.int64).astype(np.int8)


def nchw(shape_nhwc):
    n, h, w, c = shape_nhwc
    return [n, c, h, w]


def as_input(x_nhwc):
    """NHWC bytes under the logical NCHW shape, as ptec-run takes them."""
    return np.ascontiguousarray(x_nhwc).reshape(nchw(x_nhwc.shape))


class Case:
    def __init__(self, name, builder, inputs, expected=None, error=None):
        self.name, self.builder, self.inputs = name, builder, inputs
        self.expected, self.error = expected, error


def act4(b, shape_nhwc, dtype=I8, order=CHANNELS_LAST):
    return b.tensor(dtype, nchw(shape_nhwc), order)


def finish(b, name, ins, out, inputs, expected=None, error=None):
    b.set_io(ins, [out])
    return Case(name, b, inputs, expected, error)


# ---------------------------------------------------------------------------
# one-op programs

def quantize_case(bits, error_dtype=None):
    x = (rng.standard_normal((3, 5)) * 40).astype(np.float32)
    dtype = I8 if bits == 8 else I16
    qmin, qmax = (-128, 127) if bits == 8 else (-32768, 32767)
    b = ProgramBuilder()
    xv = b.tensor(F32, x.shape)
    out = b.tensor(dtype, x.shape)
    b.call("cortex_m::quantize_per_tensor.out", input=xv, scale=0.37, zero_point=-3, quant_min=qmin,
           quant_max=qmax, dtype=error_dtype or dtype, out=out)
    if error_dtype:
        return finish(b, "quantize bad dtype", [xv], out, [x], error="int8 (CHAR) or int16")
    return finish(b, "quantize s%d" % bits, [xv], out, [x], ref.quantize_per_tensor(x, 0.37, -3, qmin, qmax,
                                                                                   1 if bits == 8 else 2))


def quantize_ties_case():
    """x * (1/scale) lands exactly on .5: nearbyint must round to even, on
    every target's libm."""
    x = (np.arange(-60, 60, dtype=np.float32) + np.float32(0.25)).reshape(8, 15)
    b = ProgramBuilder()
    xv, out = b.tensor(F32, x.shape), b.tensor(I8, x.shape)
    b.call("cortex_m::quantize_per_tensor.out", input=xv, scale=0.5, zero_point=1, quant_min=-128, quant_max=127,
           dtype=I8, out=out)
    return finish(b, "quantize ties", [xv], out, [x], ref.quantize_per_tensor(x, 0.5, 1, -128, 127))


def div_ties_case():
    """Quotients of k + 0.5: roundf must round half away from zero."""
    a = np.arange(-100, 100, dtype=np.int64).astype(np.int8).reshape(10, 20)
    c = np.full(a.shape, 2, np.int8)
    b = ProgramBuilder()
    va, vc, out = b.tensor(I8, a.shape), b.tensor(I8, c.shape), b.tensor(I8, a.shape)
    b.call("cortex_m::quantized_div.out", self=va, self_zero_point=0, other=vc, other_zero_point=0,
           output_zero_point=3, output_scale=1.0, out=out)
    return finish(b, "div ties", [va, vc], out, [a, c], ref.quantized_div(a, 0, c, 0, 3, 1.0))


def dequantize_case(bits):
    dtype, np_dtype = (I8, np.int8) if bits == 8 else (I16, np.int16)
    info = np.iinfo(np_dtype)
    q = rng.integers(info.min, info.max + 1, size=(2, 7), dtype=np.int64).astype(np_dtype)
    b = ProgramBuilder()
    qv = b.tensor(dtype, q.shape)
    out = b.tensor(F32, q.shape)
    b.call("cortex_m::dequantize_per_tensor.out", input=qv, scale=0.021, zero_point=5, quant_min=int(info.min),
           quant_max=int(info.max), dtype=dtype, out=out)
    return finish(b, "dequantize s%d" % bits, [qv], out, [q],
                  ref.dequantize_per_tensor(q, 0.021, 5, int(info.min), int(info.max)))


def add_mul_case(op, mode):
    shape = (2, 3, 4, 5)
    big = i8(shape)
    small = i8((1, 1, 1, 5)) if mode != "same" else i8(shape)
    b = ProgramBuilder()
    vb = act4(b, shape)
    vs = act4(b, small.shape)
    out = act4(b, shape)
    first, second = (vs, vb) if mode == "swapped" else (vb, vs)
    x1, x2 = (small, big) if mode == "swapped" else (big, small)
    if op == "add":
        (m1, s1), (m2, s2), (mo, so) = ref.add_parameters(0.05, 0.08, 0.1)
        b.call("cortex_m::quantized_add.out", self=first, self_zero_point=-7, self_multiplier=m1, self_shift=s1,
               other=second, other_zero_point=12, other_multiplier=m2, other_shift=s2, output_zero_point=3,
               output_multiplier=mo, output_shift=so, activation_min=-100, activation_max=120, out=out)
        want = ref.quantized_add(x1, -7, m1, s1, x2, 12, m2, s2, 3, mo, so, -100, 120)
    else:
        mo, so = ref.quantize_multiplier(0.05 * 0.08 / 0.1)
        b.call("cortex_m::quantized_mul.out", self=first, self_zero_point=-7, other=second, other_zero_point=12,
               output_zero_point=3, output_multiplier=mo, output_shift=so, out=out)
        want = ref.quantized_mul(x1, -7, x2, 12, 3, mo, so)
    return finish(b, "%s %s" % (op, mode), [first, second], out, [as_input(x1), as_input(x2)], want)


def div_case(bits):
    np_dtype, dtype = (np.int8, I8) if bits == 8 else (np.int16, I16)
    info = np.iinfo(np_dtype)
    a = rng.integers(info.min, info.max + 1, size=(4, 6), dtype=np.int64).astype(np_dtype)
    c = rng.integers(info.min, info.max + 1, size=(4, 6), dtype=np.int64).astype(np_dtype)
    c[0, :3] = 2
    b = ProgramBuilder()
    va, vc, out = b.tensor(dtype, a.shape), b.tensor(dtype, c.shape), b.tensor(dtype, a.shape)
    b.call("cortex_m::quantized_div.out", self=va, self_zero_point=1, other=vc, other_zero_point=2,
           output_zero_point=-4, output_scale=0.75, out=out)
    return finish(b, "div s%d" % bits, [va, vc], out, [a, c], ref.quantized_div(a, 1, c, 2, -4, 0.75))


def activation_case():
    x = i8((3, 40))
    lut = i8(256)
    b = ProgramBuilder()
    xv, out = b.tensor(I8, x.shape), b.tensor(I8, x.shape)
    b.call("cortex_m::quantized_activation.out", input=xv, lut=b.constant(lut), out=out)
    return finish(b, "activation lut", [xv], out, [x], ref.quantized_activation(x, lut))


def min_max_case(op, layout):
    if layout == "contiguous":
        sa, sb, so = (3, 4, 3, 1), (3, 4, 1, 1), (3, 4, 3, 1)
        a, c = i8(sa), i8(sb)
        b = ProgramBuilder()
        va, vc, out = b.tensor(I8, sa), b.tensor(I8, sb), b.tensor(I8, so)
        inputs = [a, c]
    else:  # channels-last image against a per-channel [1,C,1,1] operand
        a, c = i8((1, 3, 4, 6)), i8((1, 1, 1, 6))
        b = ProgramBuilder()
        va, vc, out = act4(b, a.shape), act4(b, c.shape), act4(b, a.shape)
        inputs = [as_input(a), as_input(c)]
    b.call("cortex_m::%s.out" % op, self=va, other=vc, out=out)
    want = ref.minimum(a, c) if op == "minimum" else ref.maximum(a, c)
    return finish(b, "%s %s" % (op, layout), [va, vc], out, inputs, want)


def linear_case(form):
    x = i8((2, 3, 17))
    w = i8((9, 17))
    bias = rng.integers(-3000, 3000, size=9).astype(np.int32)
    m, s = ref.quantize_multiplier(0.003)
    b = ProgramBuilder()
    xv, out = b.tensor(I8, x.shape), b.tensor(I8, (2, 3, 9))
    kernel_sum = ref.kernel_sum_from_bias(w, bias, 5) if form == "kernel_sum" else None
    b.call("cortex_m::quantized_linear.out", input=xv, weights=b.constant(w),
           bias=b.constant(bias) if form == "bias" else None,
           kernel_sum=b.constant(kernel_sum) if kernel_sum is not None else None, input_offset=5,
           filter_offset=0, output_offset=-2, requantize_multipliers=[m], requantize_shifts=[s],
           activation_max=100, activation_min=-90, out=out)
    want = ref.quantized_linear(x, w, bias, None, 5, 0, -2, [m], [s], 100, -90)
    return finish(b, "linear " + form, [xv], out, [x], want)


def conv_call(b, xv, w, bias, stride, padding, dilation, mults, shifts, out, op="conv", dm=None,
              output_padding=None):
    common = dict(input=xv, weight=b.constant(w), bias=b.constant(bias) if bias is not None else None,
                  stride=list(stride), padding=list(padding), input_offset=9, output_offset=-6,
                  requantize_multipliers=b.constant(mults), requantize_shifts=b.constant(shifts),
                  activation_min=-120, activation_max=125, out=out)
    if op == "conv":
        b.call("cortex_m::quantized_conv2d.out", dilation=list(dilation), scratch=b.scratch(0), **common)
    elif op == "depthwise":
        b.call("cortex_m::quantized_depthwise_conv2d.out", dilation=list(dilation), depth_multiplier=dm,
               scratch=b.scratch(0), **common)
    else:
        b.call("cortex_m::quantized_transpose_conv2d.out", dilation=list(dilation),
               output_padding=list(output_padding), scratch=b.scratch(0), output_scratch=b.scratch(0), **common)


def per_channel(cout, scale):
    pairs = [ref.quantize_multiplier(scale * (1 + 0.1 * i)) for i in range(cout)]
    return (np.array([p[0] for p in pairs], np.int32), np.array([p[1] for p in pairs], np.int32))


def conv_case(error=None):
    n, h, w, cin, cout, groups = 2, 7, 6, 6, 4, 2
    kh, kw, stride, padding, dilation = 3, 2, (2, 1), (1, 2), (1, 2)
    x = i8((n, h, w, cin))
    wt = i8((cout, kh, kw, cin // groups))
    bias = rng.integers(-5000, 5000, size=cout).astype(np.int32)
    mults, shifts = per_channel(cout, 0.002)
    oh = ref.conv_output_size(h, kh, stride[0], padding[0], dilation[0])
    ow = ref.conv_output_size(w, kw, stride[1], padding[1], dilation[1])
    b = ProgramBuilder()
    order = CHANNELS_LAST if error != "layout" else None
    xv = act4(b, x.shape, order=order)
    out = act4(b, (n, oh + (1 if error == "geometry" else 0), ow, cout))
    if error == "shift":
        shifts = shifts.copy()
        shifts[1] = 40
    conv_call(b, xv, wt, bias, stride, padding, dilation, mults, shifts, out)
    if error:
        messages = {"layout": "channels-last", "geometry": "geometry", "shift": "shift"}
        return finish(b, "conv bad " + error, [xv], out, [as_input(x)], error=messages[error])
    want = ref.quantized_conv2d(x, wt, bias, stride, padding, dilation, 9, -6, mults, shifts, -120, 125)
    return finish(b, "conv groups batch", [xv], out, [as_input(x)], want)


def pack_s4(weights):
    """CMSIS-NN's s4 order: element 2i in the low nibble of byte i, 2i+1 in
    the high nibble, rows not padded; an odd count leaves the last high
    nibble 0."""
    nibbles = [int(v) & 0xF for v in np.asarray(weights).reshape(-1)]
    nibbles += [0] * (len(nibbles) % 2)
    return np.array([lo | hi << 4 for lo, hi in zip(nibbles[0::2], nibbles[1::2])], np.uint8).view(np.int8)


def i4(shape):
    return rng.integers(-8, 8, size=shape, dtype=np.int64).astype(np.int8)


def linear_w4_case(error=None):
    """Odd in_features: every other row starts in the middle of a byte."""
    x = i8((2, 3, 17))
    w = i4((9, 17))
    bias = rng.integers(-3000, 3000, size=9).astype(np.int32)
    m, s = ref.quantize_multiplier(0.03)
    packed = pack_s4(w)
    sizes = [9, 17]
    if error == "bytes":
        packed = packed[:-1]
    elif error == "rank":
        sizes = [9, 17, 1]
    elif error == "zero":
        sizes = [0, 17]
    b = ProgramBuilder()
    xv, out = b.tensor(I8, x.shape), b.tensor(I8, (2, 3, 9))
    b.call("ptec::quantized_linear_w4.out", input=xv, weights=b.constant(packed), weight_sizes=sizes,
           bias=b.constant(bias), input_offset=5, output_offset=-2, requantize_multipliers=[m],
           requantize_shifts=[s], activation_max=100, activation_min=-90, out=out)
    if error:
        messages = {"bytes": "ceil(prod(weight_sizes)/2) bytes", "rank": "[out_features, in_features]",
                    "zero": ">= 1"}
        return finish(b, "linear_w4 bad " + error, [xv], out, [x], error=messages[error])
    want = ref.quantized_linear(x, w, bias, None, 5, 0, -2, [m], [s], 100, -90)
    return finish(b, "linear_w4", [xv], out, [x], want)


def conv_w4_case(error=None):
    """Groups, stride, padding, dilation, batches; rows of k = 3*3*3 = 27
    weights, so that every other row starts in the middle of a byte."""
    n, h, w, cin, cout, groups = 2, 7, 6, 6, 4, 2
    kh, kw, stride, padding, dilation = 3, 2, (2, 1), (1, 2), (1, 2)
    if error is None or error == "bytes":
        kw = 3  # 4 * 3 * 3 * 3 = 108 weights: odd rows of 27, rows starting mid-byte
    x = i8((n, h, w, cin))
    wt = i4((cout, kh, kw, cin // groups))
    bias = rng.integers(-5000, 5000, size=cout).astype(np.int32)
    mults, shifts = per_channel(cout, 0.03)
    oh = ref.conv_output_size(h, kh, stride[0], padding[0], dilation[0])
    ow = ref.conv_output_size(w, kw, stride[1], padding[1], dilation[1])
    packed = pack_s4(wt)
    sizes = list(wt.shape)
    if error == "bytes":
        packed = np.concatenate([packed, np.zeros(1, np.int8)])
    elif error == "rank":
        sizes = sizes[:3]
    elif error == "negative":
        sizes[2] = -kw
    elif error == "overflow":
        sizes = [1 << 16, 1 << 16, 1 << 16, 1 << 16]
    b = ProgramBuilder()
    xv = act4(b, x.shape)
    out = act4(b, (n, oh, ow, cout))
    b.call("ptec::quantized_conv2d_w4.out", input=xv, weight=b.constant(packed), weight_sizes=sizes,
           bias=b.constant(bias), stride=list(stride), padding=list(padding), dilation=list(dilation),
           input_offset=9, output_offset=-6, requantize_multipliers=b.constant(mults),
           requantize_shifts=b.constant(shifts), activation_min=-120, activation_max=125, scratch=b.scratch(0),
           out=out)
    if error:
        messages = {"bytes": "ceil(prod(weight_sizes)/2) bytes", "rank": "[Cout, KH, KW, Cin/groups]",
                    "negative": ">= 1", "overflow": "2^31 - 1 weights"}
        return finish(b, "conv_w4 bad " + error, [xv], out, [as_input(x)], error=messages[error])
    want = ref.quantized_conv2d(x, wt, bias, stride, padding, dilation, 9, -6, mults, shifts, -120, 125)
    return finish(b, "conv_w4 groups batch", [xv], out, [as_input(x)], want)


def depthwise_w4_case(cin=5, dm=3, error=None):
    """Multiplier, stride, padding, dilation, batches; 3 * 3 * Cout weights,
    odd for odd Cout: the last byte's high nibble unused."""
    n, h, w, kh, kw = 2, 7, 6, 3, 3
    stride, padding, dilation = (2, 1), (1, 2), (1, 2)
    cout = cin * dm
    x = i8((n, h, w, cin))
    wt = i4((1, kh, kw, cout))
    bias = rng.integers(-5000, 5000, size=cout).astype(np.int32)
    mults, shifts = per_channel(cout, 0.05)
    oh = ref.conv_output_size(h, kh, stride[0], padding[0], dilation[0])
    ow = ref.conv_output_size(w, kw, stride[1], padding[1], dilation[1])
    packed = pack_s4(wt)
    sizes = list(wt.shape)
    if error == "bytes":
        packed = packed[:-1]
    elif error == "shape":
        sizes = [cout, kh, kw, 1]       # the OHWI sizes of a conv, not [1, KH, KW, Cout]
    b = ProgramBuilder()
    xv = act4(b, x.shape)
    out = act4(b, (n, oh, ow, cout))
    b.call("ptec::quantized_depthwise_conv2d_w4.out", input=xv, weight=b.constant(packed), weight_sizes=sizes,
           bias=b.constant(bias), stride=list(stride), padding=list(padding), dilation=list(dilation),
           depth_multiplier=dm, input_offset=9, output_offset=-6, requantize_multipliers=b.constant(mults),
           requantize_shifts=b.constant(shifts), activation_min=-120, activation_max=125, scratch=b.scratch(0),
           out=out)
    if error:
        messages = {"bytes": "ceil(prod(weight_sizes)/2) bytes", "shape": "[1, KH, KW, Cout]"}
        return finish(b, "depthwise_w4 bad " + error, [xv], out, [as_input(x)], error=messages[error])
    want = ref.quantized_depthwise_conv2d(x, wt, bias, stride, padding, dilation, dm, 9, -6, mults, shifts, -120,
                                          125)
    return finish(b, f"depthwise_w4 cin {cin} multiplier {dm}", [xv], out, [as_input(x)], want)


def layer_norm_case(error=None):
    """ptec's int8 layer norm over rows of 24: random rows, a row of one
    repeated value with eps_term 0 (variance 0: the kernel divides by 1),
    a row of alternating -128 and 127; gammas of both signs and one 0."""
    n = 24
    x = i8((2, 4, n))
    x[0, 1, :] = 37
    x[1, 2, :] = np.where(np.arange(n) % 2, 127, -128)
    gamma = rng.uniform(-2.0, 2.0, size=n)
    gamma[3] = 0.0
    mults, shifts = zip(*[ref.quantize_multiplier(g / (0.05 * 65536)) for g in gamma])
    mults, shifts = np.array(mults, np.int32), np.array(shifts, np.int32)
    bias = rng.integers(-40, 40, size=n).astype(np.int32)
    eps_term = 0
    shape = x.shape
    if error == "eps":
        eps_term = -1
    elif error == "rows":
        shape = (2, 4, n + 1)
        x = i8(shape)
    b = ProgramBuilder()
    xv, out = b.tensor(I8, shape), b.tensor(I8, shape)
    b.call("ptec::quantized_layer_norm.out", input=xv, normalized_numel=n, input_zero_point=-3, eps_term=eps_term,
           requantize_multipliers=b.constant(mults), requantize_shifts=b.constant(shifts),
           bias=b.constant(bias[:-1] if error == "bias" else bias), output_zero_point=4, activation_min=-120,
           activation_max=125, out=out)
    if error:
        messages = {"eps": "eps_term", "rows": "normalized_numel", "bias": "arg 6: per-channel"}
        return finish(b, "layer_norm bad " + error, [xv], out, [x], error=messages[error])
    want = ref.quantized_layer_norm(x, n, -3, eps_term, mults, shifts, bias, 4, -120, 125)
    return finish(b, "layer_norm", [xv], out, [x], want)


def svdf_case(rank=3, error=None):
    """ptec::quantized_svdf over 9 frames from a zero state (reset_state):
    5 units of the given rank, 11 features, memory 6; a frame of -128s and
    one of 127s; one unit's bias close to 2^31, so that its int32 sum wraps
    as on the target (rank 3), or no bias and memory 1 (rank 1)."""
    units, size, frames = 5, 11, 9
    memory = 6 if rank == 3 else 1
    rows = units * rank
    x = i8((1, frames, size))
    x[0, 2, :], x[0, 5, :] = -128, 127
    wf, wt = i8((rows, size)), i8((rows, memory))
    bias = None
    if rank == 3:
        bias = rng.integers(-200000, 200000, size=units).astype(np.int32)
        bias[1] = 2147483000
    state_shape, rank_arg, f_shift, const_state = (rows, memory), rank, -9, False
    o_shift = -10 if rank == 3 else -4
    if error == "rank":
        rank_arg = 4
    elif error == "state":
        state_shape = (rows, memory + 1)
    elif error == "shift":
        f_shift = 32
    elif error == "constant_state":
        const_state = True
    b = ProgramBuilder()
    xv, out = b.tensor(I8, x.shape), b.tensor(I8, (1, frames, units))
    state = b.constant(np.zeros(state_shape, np.int8)) if const_state else b.tensor(I8, state_shape)
    b.call("ptec::quantized_svdf.out", input=xv, weights_feature=b.constant(wf), weights_time=b.constant(wt),
           bias=None if bias is None else b.constant(bias), activation_state=state, rank=rank_arg, input_offset=7,
           feature_multiplier=1518500250, feature_shift=f_shift, output_offset=-5, output_multiplier=1277112391,
           output_shift=o_shift, activation_min=-126, activation_max=120, reset_state=True, out=out)
    if error:
        messages = {"rank": "rank must divide", "state": "activation_state", "shift": "shift must be in [-31, 31]",
                    "constant_state": "writable"}
        return finish(b, "svdf bad " + error, [xv], out, [x], error=messages[error])
    want = ref.quantized_svdf(x, wf, wt, bias, np.ones((rows, memory), np.int8), rank, 7, 1518500250, -9, -5,
                              1277112391, o_shift, -126, 120, True)
    return finish(b, "svdf rank %d" % rank, [xv], out, [x], want.reshape(1, frames, units))


def depthwise_case(cin, dm):
    h, w, kh, kw, stride, padding = 9, 5, 3, 4, (2, 2), (1, 1)
    x = i8((1, h, w, cin))
    wt = i8((1, kh, kw, cin * dm))
    bias = rng.integers(-5000, 5000, size=cin * dm).astype(np.int32)
    mults, shifts = per_channel(cin * dm, 0.004)
    oh = ref.conv_output_size(h, kh, stride[0], padding[0], 1)
    ow = ref.conv_output_size(w, kw, stride[1], padding[1], 1)
    b = ProgramBuilder()
    xv, out = act4(b, x.shape), act4(b, (1, oh, ow, cin * dm))
    conv_call(b, xv, wt, bias, stride, padding, (1, 1), mults, shifts, out, op="depthwise", dm=dm)
    want = ref.quantized_depthwise_conv2d(x, wt, bias, stride, padding, (1, 1), dm, 9, -6, mults, shifts, -120,
                                          125)
    return finish(b, "depthwise cin %d dm %d" % (cin, dm), [xv], out, [as_input(x)], want)


def expand_depthwise_case(n, h, w, cin, e, kh, stride, dilation):
    """ptec::quantized_expand_depthwise against the numpy reference of the
    two layers, run whole: a 1x1 expansion (its clamp a ReLU6's) and a
    depthwise of multiplier 1."""
    pad = dilation * (kh - 1) // 2
    x = i8((n, h, w, cin))
    ew, dw = i8((e, 1, 1, cin)), i8((1, kh, kh, e))
    eb = rng.integers(-3000, 3000, size=e).astype(np.int32)
    bias = rng.integers(-5000, 5000, size=e).astype(np.int32)
    em, es = per_channel(e, 0.003)
    mults, shifts = per_channel(e, 0.004)
    oh = ref.conv_output_size(h, kh, stride, pad, dilation)
    ow = ref.conv_output_size(w, kh, stride, pad, dilation)
    b = ProgramBuilder()
    xv, out = act4(b, x.shape), act4(b, (n, oh, ow, e))
    b.call("ptec::quantized_expand_depthwise.out", input=xv, weight=b.constant(dw), bias=b.constant(bias),
           stride=[stride, stride], padding=[pad, pad], dilation=[dilation, dilation], input_offset=4,
           output_offset=-6, requantize_multipliers=b.constant(mults), requantize_shifts=b.constant(shifts),
           activation_min=-120, activation_max=125, expand_weight=b.constant(ew), expand_bias=b.constant(eb),
           expand_input_offset=9, expand_output_offset=-4, expand_multipliers=b.constant(em),
           expand_shifts=b.constant(es), expand_min=-4, expand_max=90, out=out)
    want = ref.quantized_expand_depthwise(x, dw, bias, (stride, stride), (pad, pad), (dilation, dilation), 4, -6,
                                          mults, shifts, -120, 125, ew, eb, 9, -4, em, es, -4, 90)
    return finish(b, "expand depthwise %dx%d stride %d dilation %d" % (kh, kh, stride, dilation), [xv], out,
                  [as_input(x)], want)


def transpose_conv_case():
    n, h, w, cin, cout, kh, kw = 1, 4, 3, 5, 3, 3, 4
    stride, padding, output_padding = (2, 3), (1, 2), (1, 0)
    x = i8((n, h, w, cin))
    wt = i8((cout, kh, kw, cin))
    mults, shifts = per_channel(cout, 0.004)
    oh = ref.transpose_conv_output_size(h, kh, stride[0], padding[0], output_padding[0])
    ow = ref.transpose_conv_output_size(w, kw, stride[1], padding[1], output_padding[1])
    b = ProgramBuilder()
    xv, out = act4(b, x.shape), act4(b, (n, oh, ow, cout))
    conv_call(b, xv, wt, None, stride, padding, (1, 1), mults, shifts, out, op="transpose",
              output_padding=output_padding)
    want = ref.quantized_transpose_conv2d(x, wt, None, stride, padding, output_padding, (1, 1), 9, -6, mults,
                                          shifts, -120, 125)
    return finish(b, "transpose conv", [xv], out, [as_input(x)], want)


def bmm_case(error=None):
    lhs, rhs_t = i8((2, 3, 11)), i8((2, 4, 11 if error is None else 10))
    m, s = ref.quantize_multiplier(0.004)
    b = ProgramBuilder()
    vl, vr, out = b.tensor(I8, lhs.shape), b.tensor(I8, rhs_t.shape), b.tensor(I8, (2, 3, 4))
    b.call("cortex_m::quantized_batch_matmul.out", lhs=vl, lhs_zero_point=3, rhs_transposed=vr, rhs_zero_point=-1,
           output_zero_point=7, output_multiplier=m, output_shift=s, scratch=b.scratch(0), out=out)
    if error:
        return finish(b, "bmm bad K", [vl, vr], out, [lhs, rhs_t], error="B and K")
    return finish(b, "batch matmul", [vl, vr], out, [lhs, rhs_t],
                  ref.quantized_batch_matmul(lhs, 3, rhs_t, -1, 7, m, s))


def pool_case(op, ceil_mode=False, error=None):
    x = i8((2, 7, 8, 5))
    kernel, stride, padding = (3, 2), (2, 3), (1, 1)
    if error == "padding":
        kernel, padding = (1, 1), (1, 0)
    oh = ref.pool_output_size(7, kernel[0], stride[0], padding[0], ceil_mode)
    ow = ref.pool_output_size(8, kernel[1], stride[1], padding[1], ceil_mode)
    b = ProgramBuilder()
    xv, out = act4(b, x.shape), act4(b, (2, oh, ow, 5))
    if op == "avg":
        b.call("cortex_m::quantized_avg_pool2d.out", input=xv, kernel_size=list(kernel), stride=list(stride),
               padding=list(padding), ceil_mode=ceil_mode, zero_point=-128, multiplier=1 << 30, shift=0,
               scratch=b.scratch(20), out=out)
        if error:
            return finish(b, "avgpool bad padding", [xv], out, [as_input(x)], error="padding")
        want = ref.quantized_avg_pool2d(x, kernel, stride, padding, ceil_mode, 0, 0, 0)
    else:
        b.call("cortex_m::quantized_max_pool2d.out", input=xv, kernel_size=list(kernel), stride=list(stride),
               padding=list(padding), dilation=[2, 1] if error == "dilation" else [1, 1], ceil_mode=ceil_mode,
               input_zero_point=4, output_zero_point=4, activation_min=-50, activation_max=100, out=out)
        if error:
            return finish(b, "maxpool bad dilation", [xv], out, [as_input(x)], error="dilation")
        want = ref.quantized_max_pool2d(x, kernel, stride, padding, (1, 1), ceil_mode, 4, 4, -50, 100)
    return finish(b, "%spool ceil %s" % (op, ceil_mode), [xv], out, [as_input(x)], want)


def softmax_case(shape, dim=-1, output_zp=-128, error=None):
    x = (rng.integers(-30, 30, size=shape) + 20).astype(np.int8)
    m, s, diff_min = ref.softmax_parameters(0.09)
    b = ProgramBuilder()
    xv, out = b.tensor(I8, shape), b.tensor(I8, shape)
    b.call("cortex_m::softmax.out", input=xv, dim=dim, input_zero_point=20, output_zero_point=output_zp,
           input_multiplier=m, input_shift=s, diff_min=diff_min, out=out)
    if error:
        return finish(b, "softmax bad " + error, [xv], out, [x], error=error)
    return finish(b, "softmax %s" % (shape,), [xv], out, [x], ref.softmax(x, -1, 20, -128, m, s, diff_min))


def transpose_case(shape, perm, error=None):
    x = i8(shape)
    b = ProgramBuilder()
    out_shape = [shape[p] for p in perm] if error is None else list(shape)
    xv, out = b.tensor(I8, shape), b.tensor(I8, out_shape)
    b.call("cortex_m::transpose.out", input=xv, perm=list(perm), out=out)
    if error:
        return finish(b, "transpose bad perm", [xv], out, [x], error=error)
    return finish(b, "transpose %s %s" % (shape, perm), [xv], out, [x], ref.transpose(x, perm))


def pad_case(layout):
    if layout == "channels_last":
        x = i8((1, 3, 4, 5))
        pre, post = [0, 1, 2, 1], [1, 0, 1, 2]
        b = ProgramBuilder()
        xv = act4(b, x.shape)
        out_nhwc = tuple(d + p + q for d, p, q in zip(x.shape, pre, post))
        out = act4(b, out_nhwc)
        inputs = [as_input(x)]
    else:
        x = i8((3, 4))
        pre, post = [0, 0, 1, 2], [0, 0, 2, 0]
        b = ProgramBuilder()
        xv, out = b.tensor(I8, x.shape), b.tensor(I8, (6, 6))
        inputs = [x]
    b.call("cortex_m::pad.out", input=xv, pre_pad=pre, post_pad=post, pad_value=-9, out=out)
    return finish(b, "pad " + layout, [xv], out, inputs, ref.pad(x, pre, post, -9))


def error_cases():
    cases = [quantize_case(8, error_dtype=3), conv_case("layout"), conv_case("geometry"), conv_case("shift"),
             bmm_case("K"), pool_case("avg", error="padding"), pool_case("max", error="dilation"),
             softmax_case((2, 3), dim=0, error="last dim"), transpose_case((2, 3), [0, 0], error="permutation")]
    cases.append(softmax_case((2, 3), output_zp=-127, error="-128"))
    # add on int16 tensors
    b = ProgramBuilder()
    x, y, out = b.tensor(I16, (4,)), b.tensor(I16, (4,)), b.tensor(I16, (4,))
    b.call("cortex_m::quantized_add.out", self=x, self_zero_point=0, self_multiplier=1 << 30, self_shift=0,
           other=y, other_zero_point=0, other_multiplier=1 << 30, other_shift=0, output_zero_point=0,
           output_multiplier=1 << 30, output_shift=0, activation_min=-128, activation_max=127, out=out)
    cases.append(finish(b, "add int16", [x, y], out, [np.zeros(4, np.int16)] * 2, error="int8"))
    # add with an inverted activation range
    b = ProgramBuilder()
    x, y, out = b.tensor(I8, (4,)), b.tensor(I8, (4,)), b.tensor(I8, (4,))
    b.call("cortex_m::quantized_add.out", self=x, self_zero_point=0, self_multiplier=1 << 30, self_shift=0,
           other=y, other_zero_point=0, other_multiplier=1 << 30, other_shift=0, output_zero_point=0,
           output_multiplier=1 << 30, output_shift=0, activation_min=10, activation_max=-10, out=out)
    cases.append(finish(b, "add inverted activation", [x, y], out, [np.zeros(4, np.int8)] * 2, error="activation"))
    # mul with shapes that neither match nor channel-broadcast
    b = ProgramBuilder()
    x, y, out = b.tensor(I8, (2, 3)), b.tensor(I8, (3, 2)), b.tensor(I8, (2, 3))
    b.call("cortex_m::quantized_mul.out", self=x, self_zero_point=0, other=y, other_zero_point=0,
           output_zero_point=0, output_multiplier=1 << 30, output_shift=0, out=out)
    cases.append(finish(b, "mul bad shapes", [x, y], out, [np.zeros((2, 3), np.int8), np.zeros((3, 2), np.int8)],
                        error="broadcast"))
    # div with broadcasting
    b = ProgramBuilder()
    x, y, out = b.tensor(I8, (2, 3)), b.tensor(I8, (1, 3)), b.tensor(I8, (2, 3))
    b.call("cortex_m::quantized_div.out", self=x, self_zero_point=0, other=y, other_zero_point=0,
           output_zero_point=0, output_scale=1.0, out=out)
    cases.append(finish(b, "div broadcast", [x, y], out, [np.zeros((2, 3), np.int8), np.zeros((1, 3), np.int8)],
                        error="equal shapes"))
    # LUT of 255 entries
    b = ProgramBuilder()
    x, out = b.tensor(I8, (4,)), b.tensor(I8, (4,))
    b.call("cortex_m::quantized_activation.out", input=x, lut=b.constant(np.zeros(255, np.int8)), out=out)
    cases.append(finish(b, "lut size", [x], out, [np.zeros(4, np.int8)], error="256"))
    # minimum with shapes that do not broadcast
    b = ProgramBuilder()
    x, y, out = b.tensor(I8, (2, 3)), b.tensor(I8, (2, 2)), b.tensor(I8, (2, 3))
    b.call("cortex_m::minimum.out", self=x, other=y, out=out)
    cases.append(finish(b, "minimum bad shapes", [x, y], out, [np.zeros((2, 3), np.int8), np.zeros((2, 2), np.int8)],
                        error="broadcast"))
    # linear whose weights do not match the input features
    b = ProgramBuilder()
    x, out = b.tensor(I8, (1, 8)), b.tensor(I8, (1, 4))
    b.call("cortex_m::quantized_linear.out", input=x, weights=b.constant(np.zeros((4, 7), np.int8)), bias=None,
           kernel_sum=None, input_offset=0, filter_offset=0, output_offset=0, requantize_multipliers=[1 << 30],
           requantize_shifts=[0], activation_max=127, activation_min=-128, out=out)
    cases.append(finish(b, "linear features", [x], out, [np.zeros((1, 8), np.int8)], error="in_features"))
    # depthwise with a depth multiplier that does not give Cout
    b = ProgramBuilder()
    xv, out = act4(b, (1, 4, 4, 3)), act4(b, (1, 2, 2, 6))
    mults, shifts = per_channel(6, 0.01)
    conv_call(b, xv, np.zeros((1, 3, 3, 6), np.int8), None, (1, 1), (0, 0), (1, 1), mults, shifts, out,
              op="depthwise", dm=3)
    cases.append(finish(b, "depthwise multiplier", [xv], out, [np.zeros((1, 3, 4, 4), np.int8)],
                        error="depth_multiplier"))
    # pad with a negative entry
    b = ProgramBuilder()
    x, out = b.tensor(I8, (3, 4)), b.tensor(I8, (3, 4))
    b.call("cortex_m::pad.out", input=x, pre_pad=[0, 0, -1, 0], post_pad=[0, 0, 1, 0], pad_value=0, out=out)
    cases.append(finish(b, "pad negative", [x], out, [np.zeros((3, 4), np.int8)], error=">= 0"))
    # packed 4-bit weights whose sizes do not add up
    cases += [linear_w4_case(e) for e in ("bytes", "rank", "zero")]
    cases += [conv_w4_case(e) for e in ("bytes", "rank", "negative", "overflow")]
    cases += [depthwise_w4_case(error=e) for e in ("bytes", "shape")]
    cases += [layer_norm_case(e) for e in ("eps", "rows", "bias")]
    return cases


# ---------------------------------------------------------------------------
# 16-bit activations (ptec::*_a16): int16 in and out, int8 weights, int64 bias

def i16(shape):
    return rng.integers(-32768, 32768, size=shape, dtype=np.int64).astype(np.int16)


def per_channel_a16(cout, scale):
    pairs = [ref.quantize_multiplier(scale * (1 + 0.1 * i)) for i in range(cout)]
    return (np.array([p[0] for p in pairs], np.int32), np.array([min(7, p[1]) for p in pairs], np.int32))


def conv_a16_case(error=None):
    n, h, w, cin, cout, groups = 2, 6, 5, 6, 4, 2
    kh, kw, stride, padding, dilation = 3, 2, (2, 1), (1, 2), (1, 2)
    x = i16((n, h, w, cin))
    wt = i8((cout, kh, kw, cin // groups))
    bias = rng.integers(-(1 << 40), 1 << 40, size=cout).astype(np.int64)
    bias[0] = -(1 << 47)
    mults, shifts = per_channel_a16(cout, 1e-3)
    oh = ref.conv_output_size(h, kh, stride[0], padding[0], dilation[0])
    ow = ref.conv_output_size(w, kw, stride[1], padding[1], dilation[1])
    b = ProgramBuilder()
    xv = act4(b, x.shape, I16 if error != "dtype" else I8)
    out = act4(b, (n, oh, ow, cout), I16)
    if error == "shift":
        shifts = shifts.copy()
        shifts[2] = 8
    if error == "bias":
        bias = bias.astype(np.int32)
    b.call("ptec::quantized_conv2d_a16.out", input=xv, weight=b.constant(wt), bias=b.constant(bias),
           stride=list(stride), padding=list(padding), dilation=list(dilation),
           requantize_multipliers=b.constant(mults), requantize_shifts=b.constant(shifts), activation_min=-30000,
           activation_max=31000, scratch=b.scratch(0), out=out)
    if error:
        messages = {"dtype": "int16", "shift": "[-31, 7]", "bias": "int64"}
        zeros = np.zeros(nchw(x.shape), np.int8 if error == "dtype" else np.int16)
        return finish(b, "conv a16 bad " + error, [xv], out, [zeros], error=messages[error])
    want = ref.quantized_conv2d_a16(x, wt, bias, stride, padding, dilation, mults, shifts, -30000, 31000)
    return finish(b, "conv a16 groups batch", [xv], out, [as_input(x)], want)


def depthwise_a16_case(cin, dm):
    h, w, kh, kw, stride, padding = 7, 5, 3, 3, (2, 1), (1, 1)
    x = i16((1, h, w, cin))
    wt = i8((1, kh, kw, cin * dm))
    bias = rng.integers(-(1 << 30), 1 << 30, size=cin * dm).astype(np.int64)
    mults, shifts = per_channel_a16(cin * dm, 2e-3)
    oh = ref.conv_output_size(h, kh, stride[0], padding[0], 1)
    ow = ref.conv_output_size(w, kw, stride[1], padding[1], 1)
    b = ProgramBuilder()
    xv, out = act4(b, x.shape, I16), act4(b, (1, oh, ow, cin * dm), I16)
    b.call("ptec::quantized_depthwise_conv2d_a16.out", input=xv, weight=b.constant(wt), bias=b.constant(bias),
           stride=list(stride), padding=list(padding), dilation=[1, 1], depth_multiplier=dm,
           requantize_multipliers=b.constant(mults), requantize_shifts=b.constant(shifts),
           activation_min=-32768, activation_max=32767, scratch=b.scratch(0), out=out)
    want = ref.quantized_depthwise_conv2d_a16(x, wt, bias, stride, padding, (1, 1), dm, mults, shifts, -32768, 32767)
    return finish(b, "depthwise a16 cin %d dm %d" % (cin, dm), [xv], out, [as_input(x)], want)


def linear_a16_case(error=None):
    x = i16((2, 3, 17))
    w = i8((9, 17))
    bias = rng.integers(-(1 << 35), 1 << 35, size=9).astype(np.int64)
    m, s = ref.quantize_multiplier(4e-3)
    b = ProgramBuilder()
    xv, out = b.tensor(I16, x.shape), b.tensor(I16, (2, 3, 9))
    amin = -40000 if error == "activation" else -20000
    b.call("ptec::quantized_linear_a16.out", input=xv, weights=b.constant(w), bias=b.constant(bias),
           requantize_multipliers=[m], requantize_shifts=[s], activation_max=25000, activation_min=amin, out=out)
    if error:
        return finish(b, "linear a16 bad " + error, [xv], out, [x], error="-32768 <= min")
    want = ref.quantized_linear_a16(x, w, bias, [m], [s], 25000, -20000)
    return finish(b, "linear a16", [xv], out, [x], want)


def add_mul_a16_case(op, mode, error=None):
    shape = (2, 3, 4, 5)
    big = i16(shape)
    small = i16((1, 1, 1, 5)) if mode != "same" else i16(shape)
    b = ProgramBuilder()
    vb, vs, out = act4(b, shape, I16 if error != "dtype" else I8), act4(b, small.shape, I16), act4(b, shape, I16)
    first, second = (vs, vb) if mode == "swapped" else (vb, vs)
    x1, x2 = (small, big) if mode == "swapped" else (big, small)
    if op == "add":
        s1, s2, so = 0.05, 0.08, 0.1
        common = 2 * max(s1, s2)
        (m1, sh1), (m2, sh2) = ref.quantize_multiplier(s1 / common), ref.quantize_multiplier(s2 / common)
        mo, sho = ref.quantize_multiplier(common / (so * (1 << 15)))
        b.call("ptec::quantized_add_a16.out", self=first, self_multiplier=m1, self_shift=sh1, other=second,
               other_multiplier=m2, other_shift=sh2, output_multiplier=mo, output_shift=sho,
               activation_min=-20000, activation_max=30000, out=out)
        want = ref.quantized_add_a16(x1, m1, sh1, x2, m2, sh2, mo, sho, -20000, 30000)
    else:
        mo, sho = ref.quantize_multiplier(0.05 * 0.08 / 0.1)
        b.call("ptec::quantized_mul_a16.out", self=first, other=second, output_multiplier=mo, output_shift=sho,
               out=out)
        want = ref.quantized_mul_a16(x1, x2, mo, sho)
    if error:
        return finish(b, "%s a16 bad %s" % (op, error), [first, second], out,
                      [np.zeros(nchw(shape), np.int8), np.zeros(nchw(shape), np.int16)], error="int16")
    return finish(b, "%s a16 %s" % (op, mode), [first, second], out, [as_input(x1), as_input(x2)], want)


def pool_a16_case(op, ceil_mode=False, error=None):
    x = i16((2, 7, 8, 5))
    kernel, stride, padding = (3, 2), (2, 3), (1, 1)
    if error == "geometry":
        kernel, padding = (300, 300), (0, 0)
    oh = max(ref.pool_output_size(7, kernel[0], stride[0], padding[0], ceil_mode), 1)
    ow = max(ref.pool_output_size(8, kernel[1], stride[1], padding[1], ceil_mode), 1)
    b = ProgramBuilder()
    xv, out = act4(b, x.shape, I16), act4(b, (2, oh, ow, 5), I16)
    if op == "avg":
        b.call("ptec::quantized_avg_pool2d_a16.out", input=xv, kernel_size=list(kernel), stride=list(stride),
               padding=list(padding), ceil_mode=ceil_mode, multiplier=1 << 30, shift=0, scratch=b.scratch(0),
               out=out)
        if error:
            return finish(b, "avgpool a16 bad " + error, [xv], out, [as_input(x)], error="geometry")
        want = ref.quantized_avg_pool2d_a16(x, kernel, stride, padding, ceil_mode, 0, 0)
    else:
        b.call("ptec::quantized_max_pool2d_a16.out", input=xv, kernel_size=list(kernel), stride=list(stride),
               padding=list(padding), dilation=[1, 2] if error == "dilation" else [1, 1], ceil_mode=ceil_mode,
               activation_min=-20000, activation_max=20000, out=out)
        if error:
            return finish(b, "maxpool a16 bad " + error, [xv], out, [as_input(x)], error="dilation")
        want = ref.quantized_max_pool2d_a16(x, kernel, stride, padding, (1, 1), ceil_mode, -20000, 20000)
    return finish(b, "%spool a16 ceil %s" % (op, ceil_mode), [xv], out, [as_input(x)], want)


def softmax_a16_case(shape, error=None):
    x = (rng.integers(-3000, 3000, size=shape) + 1000).astype(np.int16)
    exp_lut, one_lut = ref.softmax_s16_tables()
    if error:
        one_lut = one_lut[:512]
    m, s = ref.quantize_multiplier(1e-3 * 65535 / 10)
    b = ProgramBuilder()
    xv, out = b.tensor(I16, shape), b.tensor(I16, shape)
    b.call("ptec::softmax_a16.out", input=xv, dim=-1, input_multiplier=m, input_shift=s,
           exp_lut=b.constant(exp_lut), one_by_one_lut=b.constant(one_lut), out=out)
    if error:
        return finish(b, "softmax a16 bad table", [xv], out, [x], error="513")
    return finish(b, "softmax a16 %s" % (shape,), [xv], out, [x], ref.softmax_a16(x, -1, m, s, exp_lut, one_lut))


def a16_cases():
    cases = [conv_a16_case(), depthwise_a16_case(7, 1), depthwise_a16_case(3, 2), linear_a16_case()]
    for op in ("add", "mul"):
        for mode in ("same", "broadcast", "swapped"):
            cases.append(add_mul_a16_case(op, mode))
    cases += [pool_a16_case("avg"), pool_a16_case("avg", ceil_mode=True), pool_a16_case("max"),
              softmax_a16_case((3, 19)), softmax_a16_case((2, 1, 3, 5)),
              softmax_a16_case((4, 1))]  # rows of one value: 1.0 saturates to 32767
    return cases


def a16_error_cases():
    return [conv_a16_case("dtype"), conv_a16_case("shift"), conv_a16_case("bias"), linear_a16_case("activation"),
            add_mul_a16_case("add", "same", error="dtype"), add_mul_a16_case("mul", "same", error="dtype"),
            pool_a16_case("avg", error="geometry"), pool_a16_case("max", error="dilation"),
            softmax_a16_case((2, 3), error="table")]


def softmax_masked_case(mask_kind, error=None):
    """ptec's masked softmax over [2 heads, 6, 9] scores (own random stream).
    "causal": one [6, 9] mask for both heads, causal over the last 6 keys
    plus a padded key 0, the row maximum placed on a masked position (the
    maximum must skip it), row 0 fully masked (all -128) and row 1 with one
    position left (probability 1 -> 127). "per_head": a [12, 9] mask, a
    row per head and query. Errors: a mask byte of 2, mask rows that do
    not divide the rows, a mask that is not constant, input_shift 32."""
    g = np.random.default_rng(1234 + len(mask_kind))
    heads, q, k = 2, 6, 9
    x = g.integers(-128, 128, size=(heads, q, k)).astype(np.int8)
    if mask_kind == "causal":
        mask = np.triu(np.ones((q, k), bool), k=k - q + 1)
        mask[:, 0] = True
        mask[0, :] = True
        mask[1, :] = True
        mask[1, 4] = False
        # row 3 (causal: keys 7, 8 masked): the unmasked scores low, a masked
        # one at 127 that must not be the maximum (a maximum 250 steps too
        # high leaves every exp term below the sum's resolution)
        x[:, 3, :7] = g.integers(-128, -110, size=(heads, 7))
        x[:, 3, 8] = 127
    else:
        mask = g.random((heads * q, k)) < 0.4
    m, s, diff_min = ref.softmax_parameters(0.07)
    mask_arg = mask.astype(np.uint8)
    b = ProgramBuilder()
    xv, out = b.tensor(I8, x.shape), b.tensor(I8, x.shape)
    if error == "byte":
        mask_arg = mask_arg.copy()
        mask_arg[2, 3] = 2
    if error == "rows":
        mask_arg = np.zeros((5, k), np.uint8)
    mv = (b.tensor(ScalarType.BOOL, list(mask_arg.shape)) if error == "constant"
          else b.constant(mask_arg, scalar_type=ScalarType.BOOL))
    b.call("ptec::quantized_softmax_masked.out", input=xv, mask=mv, input_multiplier=m,
           input_shift=32 if error == "shift" else s, diff_min=diff_min, out=out)
    if error:
        messages = {"byte": "0 or 1", "rows": "mask_rows dividing", "constant": "constant tensor",
                    "shift": "input_shift"}
        return finish(b, "softmax masked bad " + error, [xv], out, [x], error=messages[error])
    want = ref.quantized_softmax_masked(x, mask, m, s, diff_min)
    if mask_kind == "causal":
        assert (want[:, 0] == -128).all() and (want[:, 1, 4] == 127).all()
    return finish(b, "softmax masked " + mask_kind, [xv], out, [x], want)


def masked_softmax_cases():
    return ([softmax_masked_case("causal"), softmax_masked_case("per_head")] +
            [softmax_masked_case("causal", e) for e in ("byte", "rows", "constant", "shift")])


# ---------------------------------------------------------------------------
# ptec::quantized_lstm (own random stream: the cases above keep theirs)

lstm_rng = np.random.default_rng(15)


def lstm_args(inputs, hidden, input_zp=-5, output_zp=3, gate_scale=1.0, cell_scale_power=-11, cell_clip=0,
              input_to_cell=None, output=None):
    """Weights, effective biases and requantizations as an AOT would derive
    them from float scales (input 1/64, hidden 1/128, cell 2^power; weights
    sized so that gates span a few units, times gate_scale). input_to_cell
    and output override those two real multipliers."""
    s_x, s_h = 1.0 / 64, 1.0 / 128
    wx = lstm_rng.integers(-127, 128, size=(4 * hidden, inputs)).astype(np.int8)
    wh = lstm_rng.integers(-127, 128, size=(4 * hidden, hidden)).astype(np.int8)
    s_wx = gate_scale * 2.0 / (127 * np.sqrt(inputs))
    s_wh = gate_scale * 2.0 / (127 * np.sqrt(hidden))
    bias = lstm_rng.integers(-800, 800, size=4 * hidden)
    bx = (bias - input_zp * wx.astype(np.int64).sum(axis=1)).astype(np.int32)
    bh = (-output_zp * wh.astype(np.int64).sum(axis=1)).astype(np.int32)
    pairs = [ref.quantize_multiplier(s_x * s_wx * 4096)] * 4 + [ref.quantize_multiplier(s_h * s_wh * 4096)] * 4
    cell = 2.0 ** cell_scale_power
    args = dict(input_weights=wx, hidden_weights=wh, input_effective_bias=bx, hidden_effective_bias=bh,
                gate_multipliers=np.array([m for m, _ in pairs], np.int32),
                gate_shifts=np.array([sh for _, sh in pairs], np.int32))
    args["forget_to_cell_multiplier"], args["forget_to_cell_shift"] = ref.quantize_multiplier(2.0 ** -15)
    args["input_to_cell_multiplier"], args["input_to_cell_shift"] = ref.quantize_multiplier(
        input_to_cell or 2.0 ** -30 / cell)
    args["output_multiplier"], args["output_shift"] = ref.quantize_multiplier(output or 2.0 ** -30 / s_h)
    args.update(cell_clip=cell_clip, cell_scale_power=cell_scale_power, output_zero_point=output_zp)
    return args


def lstm_case(name, shape, hidden, batch_first=False, error=None, x=None, **kw):
    args = lstm_args(shape[-1], hidden, **kw)
    if x is None:
        x = lstm_rng.integers(-128, 128, size=shape).astype(np.int8)
    out_shape = tuple(shape[:-1]) + (hidden,)
    initial_hidden = None
    if error == "rows":
        args["input_weights"] = args["input_weights"][:-1]
    elif error == "hidden_weights":
        args["hidden_weights"] = args["hidden_weights"][:, :-1]
    elif error == "bias":
        args["hidden_effective_bias"] = args["hidden_effective_bias"][:-1]
    elif error == "shift":
        args["gate_shifts"] = args["gate_shifts"].copy()
        args["gate_shifts"][5] = 32
    elif error == "power":
        args["cell_scale_power"] = 3
    elif error == "out":
        out_shape = tuple(shape[:-1]) + (hidden + 1,)
    elif error == "clip":
        args["cell_clip"] = -1
    b = ProgramBuilder()
    xv, out = b.tensor(I8, shape), b.tensor(I8, out_shape)
    if error == "state":
        initial_hidden = b.constant(np.zeros((1, hidden), np.int8))
    call = {k: (b.constant(v) if isinstance(v, np.ndarray) else v) for k, v in args.items()}
    b.call("ptec::quantized_lstm.out", input=xv, batch_first=batch_first, initial_hidden=initial_hidden,
           initial_cell=None, out=out, **call)
    if error:
        messages = {"rows": "4 * hidden_size", "hidden_weights": "hidden_weights must be", "bias": "arg 4: per-channel",
                    "shift": "shift must be in [-31, 31]", "power": "arg 14", "out": "out must be contiguous",
                    "clip": "arg 13", "state": "given together"}
        return finish(b, "lstm bad " + error, [xv], out, [x], error=messages[error])
    want = ref.quantized_lstm(x, batch_first=batch_first, initial_hidden=None, initial_cell=None, **args)
    return finish(b, "lstm " + name, [xv], out, [x], want)


def lstm_cases():
    """Sequences [T, I], [T, B, I] and [B, T, I]; hidden 1 and input 1;
    gates driven into saturation (int16 clamps, table ends); a clipped
    cell; the cell scale's extremes (tanh's left shift -15 and 14)."""
    x_edges = np.tile(np.array([-128, 127, 0, -128, 127, 127, -128], np.int8)[:, None], (1, 3))
    return [lstm_case("sequence", (9, 5), 6), lstm_case("time major", (4, 2, 3), 5),
            lstm_case("batch first", (3, 4, 7), 4, batch_first=True), lstm_case("one unit", (6, 1), 1),
            lstm_case("saturated", (7, 3), 5, x=x_edges, gate_scale=40.0, input_zp=0, output_zp=-128),
            lstm_case("clipped cell", (8, 4), 5, gate_scale=6.0, cell_clip=900, cell_scale_power=-13),
            lstm_case("cell 2^-27", (5, 4), 3, gate_scale=3.0, cell_scale_power=-27, input_to_cell=2.0 ** -15,
                      output=2.0 ** -15),
            lstm_case("cell 2^2", (5, 4), 3, gate_scale=3.0, cell_scale_power=2, input_to_cell=2.0 ** -26)]


def lstm_state_case(name, shape, hidden, batch_first=False, error=None, **kw):
    """The streaming form: initial_hidden / initial_cell state tensors
    (planned, with random initial values: h on the output's int8 grid, c
    anywhere in int16) read as the starting state and overwritten with the
    final h and c. Two calls share the state in one execute: the program's
    output is the second call's, on the state the first left, so it shows
    both the read (from the initial values) and the write-back of h and c.
    The expected bytes: the reference run twice, the state carried."""
    args = lstm_args(shape[-1], hidden, **kw)
    x1 = lstm_rng.integers(-128, 128, size=shape).astype(np.int8)
    x2 = lstm_rng.integers(-128, 128, size=shape).astype(np.int8)
    batches = 1 if len(shape) == 2 else (shape[0] if batch_first else shape[1])
    h0 = lstm_rng.integers(-128, 128, size=(batches, hidden)).astype(np.int8)
    c0 = lstm_rng.integers(-20000, 20000, size=(batches, hidden)).astype(np.int16)
    out_shape = tuple(shape[:-1]) + (hidden,)
    b = ProgramBuilder()
    xv1, xv2 = b.tensor(I8, shape), b.tensor(I8, shape)
    mid, out = b.tensor(I8, out_shape), b.tensor(I8, out_shape)
    h_shape, c_dtype = (batches, hidden), I16
    if error == "hidden_shape":
        h_shape = (batches + 1, hidden)
    elif error == "cell_dtype":
        c_dtype = I8
    hv = b.state(I8, h_shape, np.zeros(h_shape, np.int8).tobytes())
    cv = b.state(c_dtype, (batches, hidden), np.zeros((batches, hidden), np.int16 if c_dtype == I16 else np.int8)
                 .tobytes())
    if not error:
        hv = b.state(I8, (batches, hidden), h0.tobytes())
        cv = b.state(I16, (batches, hidden), c0.tobytes())
    elif error == "constant_cell":
        cv = b.constant(np.zeros((batches, hidden), np.int16))
    elif error == "aliased":
        hv = mid               # the output as the hidden state
    call = {k: (b.constant(v) if isinstance(v, np.ndarray) else v) for k, v in args.items()}
    b.call("ptec::quantized_lstm.out", input=xv1, batch_first=batch_first, initial_hidden=hv, initial_cell=cv,
           out=mid, **call)
    b.call("ptec::quantized_lstm.out", input=xv2, batch_first=batch_first, initial_hidden=hv, initial_cell=cv,
           out=out, **call)
    if error:
        messages = {"hidden_shape": "initial_hidden must be a writable contiguous int8",
                    "cell_dtype": "expected an int16 tensor", "constant_cell": "initial_cell must be a writable",
                    "aliased": "must not overlap input or out"}
        return finish(b, "lstm state bad " + error, [xv1, xv2], out, [x1, x2], error=messages[error])
    _, h1, c1 = ref.lstm_sequence(x1, batch_first=batch_first, initial_hidden=h0, initial_cell=c0, **args)
    want = ref.quantized_lstm(x2, batch_first=batch_first, initial_hidden=h1, initial_cell=c1, **args)
    return finish(b, "lstm state " + name, [xv1, xv2], out, [x1, x2], want)


def lstm_state_cases():
    return [lstm_state_case("sequence", (5, 4), 6), lstm_state_case("time major", (3, 2, 5), 4),
            lstm_state_case("batch first", (2, 3, 3), 5, batch_first=True),
            lstm_state_case("clipped cell", (4, 3), 3, gate_scale=6.0, cell_clip=900, cell_scale_power=-13)]


def lstm_state_error_cases():
    return [lstm_state_case("", (1, 3), 3, error=e)
            for e in ("hidden_shape", "cell_dtype", "constant_cell", "aliased")]


def lstm_error_cases():
    return [lstm_case("", (4, 3), 2, error=e)
            for e in ("rows", "hidden_weights", "bias", "shift", "power", "out", "clip", "state")]


# ---------------------------------------------------------------------------
# ptec::quantized_lstm_a16 (own random stream, appended after every other case)

lstm16_rng = np.random.default_rng(16)


def lstm_a16_args(inputs, hidden, gate_scale=1.0, cell_scale_power=-11, cell_clip=0, input_to_cell=None,
                  output=None, bias_bound=1 << 20, hidden_bias=True, rng=None, input_weight_fill=None):
    """int8 weights, int64 effective biases and requantizations as an AOT
    would derive them from float scales: input 4/32767, hidden and output
    1/32767 (int16 grids, zero point 0), cell 2^power; weights sized so that
    gates span a few units, times gate_scale."""
    rng = lstm16_rng if rng is None else rng
    s_x, s_h = 4.0 / 32767, 1.0 / 32767
    wx = rng.integers(-127, 128, size=(4 * hidden, inputs)).astype(np.int8)
    if input_weight_fill is not None:
        wx[:] = input_weight_fill
    wh = rng.integers(-127, 128, size=(4 * hidden, hidden)).astype(np.int8)
    s_wx = gate_scale * 2.0 / (127 * np.sqrt(inputs))
    s_wh = gate_scale * 2.0 / (127 * np.sqrt(hidden))
    bx = rng.integers(-bias_bound, bias_bound, size=4 * hidden).astype(np.int64)
    bh = rng.integers(-bias_bound, bias_bound, size=4 * hidden).astype(np.int64) if hidden_bias else None
    pairs = [ref.quantize_multiplier(s_x * s_wx * 4096)] * 4 + [ref.quantize_multiplier(s_h * s_wh * 4096)] * 4
    cell = 2.0 ** cell_scale_power
    args = dict(input_weights=wx, hidden_weights=wh, input_effective_bias=bx, hidden_effective_bias=bh,
                gate_multipliers=np.array([m for m, _ in pairs], np.int32),
                gate_shifts=np.array([sh for _, sh in pairs], np.int32))
    args["forget_to_cell_multiplier"], args["forget_to_cell_shift"] = ref.quantize_multiplier(2.0 ** -15)
    args["input_to_cell_multiplier"], args["input_to_cell_shift"] = ref.quantize_multiplier(
        input_to_cell or 2.0 ** -30 / cell)
    args["output_multiplier"], args["output_shift"] = ref.quantize_multiplier(output or 2.0 ** -30 / s_h)
    args.update(cell_clip=cell_clip, cell_scale_power=cell_scale_power)
    return args


def lstm_a16_case(name, shape, hidden, batch_first=False, error=None, x=None, gate_shifts=None, **kw):
    args = lstm_a16_args(shape[-1], hidden, **kw)
    if gate_shifts is not None:
        args["gate_shifts"] = np.array(gate_shifts, np.int32)
    if x is None:
        x = kw.get("rng", lstm16_rng).integers(-32768, 32768, size=shape).astype(np.int16)
    out_shape = tuple(shape[:-1]) + (hidden,)
    in_dtype, out_dtype = I16, I16
    if error == "rows":
        args["input_weights"] = args["input_weights"][:-1]
    elif error == "hidden_weights":
        args["hidden_weights"] = args["hidden_weights"][:, :-1]
    elif error == "bias_dtype":
        args["input_effective_bias"] = args["input_effective_bias"].astype(np.int32)
    elif error == "hidden_bias":
        args["hidden_effective_bias"] = args["hidden_effective_bias"][:-1]
    elif error == "shift":
        args["gate_shifts"] = args["gate_shifts"].copy()
        args["gate_shifts"][6] = 8
    elif error == "power":
        args["cell_scale_power"] = -28
    elif error == "out":
        out_shape = tuple(shape[:-1]) + (hidden + 1,)
    elif error == "clip":
        args["cell_clip"] = 32768
    elif error == "input_dtype":
        in_dtype = I8
        x = x.astype(np.int8)
    elif error == "out_dtype":
        out_dtype = I8
    b = ProgramBuilder()
    xv, out = b.tensor(in_dtype, shape), b.tensor(out_dtype, out_shape)
    call = {k: (b.constant(v) if isinstance(v, np.ndarray) else v) for k, v in args.items()}
    b.call("ptec::quantized_lstm_a16.out", input=xv, batch_first=batch_first, out=out, **call)
    if error:
        messages = {"rows": "4 * hidden_size", "hidden_weights": "hidden_weights must be",
                    "bias_dtype": "arg 3: bias must hold one contiguous int64",
                    "hidden_bias": "arg 4: bias must hold one contiguous int64",
                    "shift": "[-31, 7] for int16 activations",
                    "power": "arg 14", "out": "out must be contiguous int16", "clip": "arg 13",
                    "input_dtype": "arg 0", "out_dtype": "arg 16"}
        return finish(b, "lstm_a16 bad " + error, [xv], out, [x], error=messages[error])
    want = ref.quantized_lstm_a16(x, batch_first=batch_first, **args)
    return finish(b, "lstm_a16 " + name, [xv], out, [x], want)


def lstm_a16_cases():
    """Sequences [T, I], [T, B, I] and [B, T, I]; hidden 1 and input 1;
    no hidden bias; gates driven into saturation (int16 clamps, table ends);
    biases beyond the 64-bit requantization's 2^48 (saturated); the largest
    and smallest gate shifts; a clipped cell; the cell scale's extremes."""
    x_edges = np.tile(np.array([-32768, 32767, 0, -32768, 32767, 32767, -32768], np.int16)[:, None], (1, 3))
    return [lstm_a16_case("sequence", (9, 5), 6), lstm_a16_case("time major", (4, 2, 3), 5),
            lstm_a16_case("batch first", (3, 4, 7), 4, batch_first=True),
            lstm_a16_case("one unit", (6, 1), 1, hidden_bias=False),
            lstm_a16_case("saturated", (7, 3), 5, x=x_edges, gate_scale=40.0),
            lstm_a16_case("bias beyond 2^48", (5, 3), 4, bias_bound=1 << 60),
            lstm_a16_case("shifts 7 and -31", (5, 3), 4, gate_shifts=[7, -31, 7, -31, -31, 7, -31, 7]),
            lstm_a16_case("clipped cell", (8, 4), 5, gate_scale=6.0, cell_clip=900, cell_scale_power=-13),
            lstm_a16_case("cell 2^-27", (5, 4), 3, gate_scale=3.0, cell_scale_power=-27,
                          input_to_cell=2.0 ** -15, output=2.0 ** -15),
            lstm_a16_case("cell 2^2", (5, 4), 3, gate_scale=3.0, cell_scale_power=2, input_to_cell=2.0 ** -26)]


lstm16v_rng = np.random.default_rng(1616)  # the variant cases below: a stream of their own


def lstm_a16_variant_cases():
    """What the DSP and Helium builds' gate sums (the s16 fully connected
    layer's dot product) do differently: rows in pairs (odd 4 * hidden per
    gate side: a row alone), eight lanes with a predicated tail (input and
    hidden sizes off multiples of 4 and 8), int32 blocks of 508 products
    (input sizes 507 .. 1017; -32768 * -128 = 2^22 everywhere, so a block
    that wrapped would turn the gates' sign)."""
    r = lstm16v_rng
    cases = [lstm_a16_case("variant sizes %d %d" % (i, h), (3, 2, i), h, rng=r)
             for i, h in ((1, 3), (7, 9), (9, 5), (17, 8), (33, 11))]
    for inputs in (507, 508, 509, 1016, 1017):
        x = np.full((2, inputs), -32768, np.int16)
        x[1, : inputs // 2] = 32767
        cases.append(lstm_a16_case("variant K %d" % inputs, (2, inputs), 3, x=x, rng=r, input_weight_fill=-128,
                                   gate_scale=0.05))
    cases.append(lstm_a16_case("variant K 509 random", (3, 509), 5, rng=r))
    return cases


def lstm_a16_error_cases():
    return [lstm_a16_case("", (4, 3), 2, error=e)
            for e in ("rows", "hidden_weights", "bias_dtype", "hidden_bias", "shift", "power", "out",
                      "clip", "input_dtype", "out_dtype")]


def all_cases():
    cases = [quantize_case(8), quantize_case(16), quantize_ties_case(), dequantize_case(8), dequantize_case(16),
             div_ties_case()]
    for op in ("add", "mul"):
        for mode in ("same", "broadcast", "swapped"):
            cases.append(add_mul_case(op, mode))
    cases += [div_case(8), div_case(16), activation_case()]
    for op in ("minimum", "maximum"):
        cases += [min_max_case(op, "contiguous"), min_max_case(op, "channels_last")]
    cases += [linear_case("bias"), linear_case("kernel_sum"), linear_w4_case(), conv_w4_case(), layer_norm_case(),
              depthwise_w4_case(), depthwise_w4_case(1, 8), depthwise_w4_case(7, 1),
              conv_case(), depthwise_case(7, 1),
              depthwise_case(1, 9), depthwise_case(3, 2), transpose_conv_case(), bmm_case(),
              pool_case("avg"), pool_case("avg", ceil_mode=True), pool_case("max"),
              softmax_case((3, 19)), softmax_case((2, 1, 3, 5)), transpose_case((2, 3), [0, 1]),
              transpose_case((2, 3), [1, 0]), transpose_case((2, 3, 4, 5), [3, 1, 0, 2]),
              transpose_case((4, 5, 6), [-1, 0, 1]), pad_case("channels_last"), pad_case("contiguous")]
    cases = (cases + error_cases() + a16_cases() + a16_error_cases() + masked_softmax_cases() + lstm_cases()
             + lstm_error_cases())
    # appended last, so that the cases above keep their random draws
    cases = cases + [svdf_case(3), svdf_case(1)] + [svdf_case(error=e) for e in
                                                     ("rank", "state", "shift", "constant_state")]
    return (cases + lstm_a16_cases() + lstm_a16_error_cases() + lstm_state_cases() + lstm_state_error_cases()
            + lstm_a16_variant_cases() + [expand_depthwise_case(2, 11, 7, 5, 24, 3, 2, 1),
                                          expand_depthwise_case(1, 13, 6, 3, 16, 5, 1, 2)])


def run_case(case, ptec_run, workdir, index):
    base = os.path.join(workdir, "case%02d" % index)
    write_program(case.builder.build(), base + ".pte")
    args = [ptec_run, base + ".pte", "--output-dir", base + "-out"]
    for i, x in enumerate(case.inputs):
        # raw bytes: the program fixes the shape and dtype
        with open("%s-in%d.bin" % (base, i), "wb") as f:
            f.write(np.ascontiguousarray(x).tobytes())
        args += ["--input", "%s-in%d.bin" % (base, i)]
    proc = subprocess.run(args, capture_output=True, text=True)
    if case.error is not None:
        if proc.returncode == 0:
            return "ran, expected a load error mentioning %r" % case.error
        if proc.returncode < 0 or proc.returncode > 100:
            return "crashed (exit %d): %s" % (proc.returncode, proc.stderr.strip())
        if case.error not in proc.stderr:
            return "error message lacks %r: %s" % (case.error, proc.stderr.strip())
        phase = proc.stderr.lower()
        if not any(word in phase for word in ("requirements", "load", "prepare")):
            return "error did not come from preparing the method: %s" % proc.stderr.strip()
        return None
    if proc.returncode != 0:
        return "exit %d: %s" % (proc.returncode, proc.stderr.strip())
    # The bytes as stored (the .npy is in logical order; expected is stored order).
    with open(os.path.join(base + "-out", "output0.bin"), "rb") as f:
        got = f.read()
    want = np.ascontiguousarray(case.expected)
    if got != want.tobytes():
        diff = np.flatnonzero(np.frombuffer(got, np.uint8) != np.frombuffer(want.tobytes(), np.uint8))
        return "output differs in %d bytes, first at %d" % (len(diff), diff[0] if len(diff) else -1)
    return None


ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def run_case_qemu(case, target, elf, workdir, index):
    """The same check as run_case, on QEMU: outputs come back as
    "@out<i> <offset> <hex>" lines of the runner firmware."""
    base = os.path.join(workdir, "case%02d" % index)
    write_program(case.builder.build(), base + ".pte")
    args = [os.path.join(ROOT, "scripts", "run_qemu.sh"), "--target", target, "--elf", elf, "--model", base + ".pte"]
    if case.inputs:
        with open(base + "-inputs.bin", "wb") as f:  # the input slot holds all inputs in order
            for x in case.inputs:
                f.write(np.ascontiguousarray(x).tobytes())
        args += ["--input", base + "-inputs.bin"]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120)
    text = proc.stdout + proc.stderr
    if case.error is not None:
        if proc.returncode == 0:
            return "ran, expected a load error mentioning %r" % case.error
        if case.error not in text:
            return "error message lacks %r: %s" % (case.error, text.strip()[-500:])
        return None
    if proc.returncode != 0:
        return "firmware exit %d: %s" % (proc.returncode, text.strip()[-800:])
    got = bytearray()
    for m in re.finditer(r"^@out0 ([0-9a-f]+) ([0-9a-f]*)$", proc.stdout, re.M):
        got += bytes.fromhex(m.group(2))
    want = np.ascontiguousarray(case.expected).tobytes()
    if bytes(got) != want:
        return "firmware output differs: %s != %s" % (bytes(got).hex()[:64], want.hex()[:64])
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ptec-run")
    parser.add_argument("--qemu-target", choices=CORES)
    parser.add_argument("--runner-elf", help="the fixed-address runner firmware for --qemu-target")
    parser.add_argument("--keep", help="keep the programs in this directory")
    args = parser.parse_args()
    if bool(args.ptec_run) == bool(args.qemu_target) or (args.qemu_target and not args.runner_elf):
        parser.error("give either --ptec-run, or --qemu-target with --runner-elf")
    workdir = args.keep or tempfile.mkdtemp(prefix="ptec-kernel-e2e-")
    os.makedirs(workdir, exist_ok=True)
    failures = 0
    cases = all_cases()
    try:
        for i, case in enumerate(cases):
            if args.qemu_target:
                problem = run_case_qemu(case, args.qemu_target, args.runner_elf, workdir, i)
            else:
                problem = run_case(case, args.ptec_run, workdir, i)
            if problem:
                failures += 1
                print("FAIL %-32s %s" % (case.name, problem))
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    print("kernel_ops_e2e%s: %d cases (%d error cases), %d failed" % (
        " on " + args.qemu_target if args.qemu_target else "", len(cases), sum(c.error is not None for c in cases), failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
