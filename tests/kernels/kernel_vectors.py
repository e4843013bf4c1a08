#!/usr/bin/python3
"""Random differential test: the C math layer against ptec.reference.

Generates random cases for every cortex_m operator, computes the expected
bytes with the numpy reference, writes them to a case file, and runs the C
harness (tests/kernels/kernel_vector_harness.c) on it. Every output must
match byte for byte.

Case file: records of
    u32 op, u32 n_ints, i32 ints[n_ints], u32 n_blobs, (u32 len, bytes)*, u32 len, expected bytes
all little-endian. The op numbers and int layouts are mirrored in the
harness.

Usage: kernel_vectors.py --harness PATH [--cases N] [--seed S] [--keep FILE]
       kernel_vectors.py --qemu-target CORE --firmware ELF [...]
The second form runs the cases on the emulated core: the firmware
(tests/kernels/kernel_vector_firmware.c) finds the case file at the program
slot, where scripts/run_qemu.sh places it.
"""

import argparse
import math
import os
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from ptec.reference import cortex_m as ref  # noqa: E402
from ptec.targets import CORES  # noqa: E402

OPS = ["quantize_s8", "quantize_s16", "dequantize_s8", "dequantize_s16", "add", "mul", "div_s8",
       "div_s16", "lut", "minimum", "maximum", "fully_connected", "conv", "depthwise_conv",
       "transpose_conv", "batch_matmul", "avgpool", "maxpool", "softmax", "transpose", "pad", "conv_s4",
       "fully_connected_s4",
       # 16-bit activations (ptec::*_a16), appended so the int8 and s4 cases keep their numbers
       "conv_s16", "depthwise_conv_s16", "fully_connected_s16", "add_s16", "mul_s16", "avgpool_s16",
       "maxpool_s16", "softmax_s16",
       # ptec's masked softmax (attention masks), appended likewise
       "softmax_masked",
       # in-place depthwise and pointwise convolutions (--ptec-runtime-only), appended likewise
       "depthwise_in_place", "pointwise_in_place",
       # packed 4-bit depthwise (ptec::quantized_depthwise_conv2d_w4), appended likewise
       "depthwise_conv_s4"]
OP_ID = {name: i for i, name in enumerate(OPS)}


def f32_bits(value):
    return struct.unpack("<i", struct.pack("<f", value))[0]


class Writer:
    def __init__(self):
        self.parts = []
        self.counts = {}

    def case(self, op, ints, blobs, expected):
        ints = [int(v) for v in ints]
        for v in ints:
            assert -(1 << 31) <= v < (1 << 31), (op, v)
        out = [struct.pack("<II", OP_ID[op], len(ints)), struct.pack("<%di" % len(ints), *ints),
               struct.pack("<I", len(blobs))]
        for blob in blobs:
            data = b"" if blob is None else np.ascontiguousarray(blob).tobytes()
            out.append(struct.pack("<I", len(data)))
            out.append(data)
        expected = np.ascontiguousarray(expected).tobytes()
        out.append(struct.pack("<I", len(expected)))
        out.append(expected)
        self.parts.append(b"".join(out))
        self.counts[op] = self.counts.get(op, 0) + 1

    def data(self):
        return b"".join(self.parts)


# ---------------------------------------------------------------------------
# random parameter helpers

class Gen:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def int(self, lo, hi):
        """Uniform in [lo, hi]."""
        return int(self.rng.integers(lo, hi + 1))

    def chance(self, p):
        return self.rng.random() < p

    def choice(self, items):
        return items[self.int(0, len(items) - 1)]

    def i8(self, shape):
        kind = self.int(0, 5)
        if kind == 0:  # extremes only
            return self.rng.choice(np.array([-128, 127, 0, -1], np.int8), size=shape)
        return self.rng.integers(-128, 128, size=shape, dtype=np.int64).astype(np.int8)

    def zero_point(self):
        return self.choice([-128, 127, 0, self.int(-128, 127), self.int(-128, 127)])

    def offset(self):
        """-zp for an int8 zero point: [-127, 128]."""
        return -self.zero_point() if self.chance(0.9) else self.choice([-127, 128])

    def activation(self):
        if self.chance(0.5):
            return -128, 127
        lo = self.int(-128, 127)
        hi = self.int(lo, 127)
        return lo, hi

    def quant(self, typical_scale=None):
        """(multiplier, shift): usually from a real scale, sometimes extreme."""
        k = self.int(0, 9)
        if k == 0:
            return self.choice([(1 << 30), (1 << 31) - 1, 0, -(1 << 31), -self.int(1, (1 << 31) - 1),
                                self.int(0, (1 << 31) - 1)]), self.int(-31, 31)
        if k == 1:
            return self.int(1 << 30, (1 << 31) - 1), self.choice([-31, -30, 30, 31, 0, -1, 1])
        scale = typical_scale if typical_scale is not None else 2.0 ** self.rng.uniform(-12, 2)
        scale *= 2.0 ** self.rng.uniform(-1.5, 1.5)
        m, s = ref.quantize_multiplier(scale)
        return m, max(-31, min(31, s))

    def per_channel(self, count, typical_scale):
        ms, ss = [], []
        for _ in range(count):
            m, s = self.quant(typical_scale)
            ms.append(m)
            ss.append(s)
        return np.array(ms, np.int32), np.array(ss, np.int32)

    def bias(self, count, magnitude):
        if self.chance(0.05):
            return self.rng.integers(-(1 << 31), 1 << 31, size=count, dtype=np.int64).astype(np.int32)
        return self.rng.integers(-magnitude, magnitude + 1, size=count, dtype=np.int64).astype(np.int32)


# ---------------------------------------------------------------------------
# per-operator case makers

def make_quantize(g, w, bits):
    n = g.int(1, 300)
    x = (g.rng.standard_normal(n) * 10.0 ** g.rng.uniform(-3, 3)).astype(np.float32)
    scale = float(np.float32(10.0 ** g.rng.uniform(-4, 2)))
    if g.chance(0.3):  # exact ties in the product
        x = (np.round(g.rng.uniform(-300, 300, n)) + 0.5).astype(np.float32) * np.float32(scale)
    if g.chance(0.1):
        x[:4] = np.array([np.inf, -np.inf, np.nan, 1e30], np.float32)[: min(4, n)]
    if g.chance(0.1):  # subnormal inputs with a tiny scale: 1/scale up to ~2^126
        scale = float(np.float32(2.0 ** g.rng.uniform(-126, -90)))
        x[: min(8, n)] = (g.rng.uniform(-1, 1, min(8, n)) * 2.0 ** -126).astype(np.float32)
    info = np.iinfo(np.int8 if bits == 8 else np.int16)
    qmin = g.int(info.min, info.min + 3) if g.chance(0.2) else int(info.min)
    qmax = g.int(info.max - 3, info.max) if g.chance(0.2) else int(info.max)
    zp = g.int(qmin, qmax)
    zq = zp
    if g.chance(0.05):  # zero points the fast paths leave to the reference loop
        zq = g.choice([1 << 24, -(1 << 24), (1 << 24) - 1, 1 << 29, -(1 << 29)])
    q = ref.quantize_per_tensor(x, scale, zq, qmin, qmax, 1 if bits == 8 else 2)
    w.case("quantize_s%d" % bits, [f32_bits(scale), zq, qmin, qmax], [x], q)
    # dequantize of random data with the same parameters
    qd = g.rng.integers(qmin, qmax + 1, size=n, dtype=np.int64).astype(info.dtype)
    y = ref.dequantize_per_tensor(qd, scale, zp, qmin, qmax)
    w.case("dequantize_s%d" % bits, [f32_bits(scale), zp, qmin, qmax], [qd], y.astype(np.float32))


def acc_scale(g, taps, offset_a=0, offset_b=0):
    """A requantization scale that maps a sum of `taps` products of offset
    int8 values to roughly +-50, so that outputs spread over the range."""
    taps = max(taps, 1)
    rms_a, rms_b = math.hypot(74.0, offset_a), math.hypot(74.0, offset_b)
    return 50.0 / (rms_a * rms_b * math.sqrt(taps) + taps * abs(offset_a * offset_b))


def random_nhwc(g, max_side=6, max_c=20):
    return (g.int(1, 2), g.int(1, max_side), g.int(1, max_side), g.int(1, max_c))


def make_add_mul(g, w, op):
    shape = random_nhwc(g)
    large = g.i8(shape)
    broadcast = g.chance(0.4)
    small = g.i8((1, 1, 1, shape[3]) if broadcast else shape)
    zp1, zp2, zpo = g.zero_point(), g.zero_point(), g.zero_point()
    swap = g.chance(0.5)  # the small operand may be either input of the op
    if op == "add":
        s1, s2 = (2.0 ** g.rng.uniform(-8, 0) for _ in range(2))
        so = max(s1, s2) * 2.0 ** g.rng.uniform(-1, 1.5)
        (m1, sh1), (m2, sh2), (mo, sho) = ref.add_parameters(s1, s2, so)
        if g.chance(0.15):
            m1, sh1 = g.quant()
            m2, sh2 = g.quant()
            mo, sho = g.quant()
        sho = max(-31, min(31, sho))
        amin, amax = g.activation()
        if swap:
            expected = ref.quantized_add(small, zp2, m2, sh2, large, zp1, m1, sh1, zpo, mo, sho, amin, amax)
        else:
            expected = ref.quantized_add(large, zp1, m1, sh1, small, zp2, m2, sh2, zpo, mo, sho, amin, amax)
        w.case("add", [-zp1, -zp2, m1, sh1, m2, sh2, zpo, mo, sho, amin, amax, small.size],
               [large, small], expected)
    else:
        mo, sho = g.quant(acc_scale(g, 1))
        if swap:
            expected = ref.quantized_mul(small, zp2, large, zp1, zpo, mo, sho)
        else:
            expected = ref.quantized_mul(large, zp1, small, zp2, zpo, mo, sho)
        w.case("mul", [-zp1, -zp2, zpo, mo, sho, small.size], [large, small], expected)


def make_div(g, w, bits):
    n = g.int(1, 200)
    dtype = np.int8 if bits == 8 else np.int16
    info = np.iinfo(dtype)
    a = g.rng.integers(info.min, info.max + 1, size=n, dtype=np.int64).astype(dtype)
    b = g.rng.integers(info.min, info.max + 1, size=n, dtype=np.int64).astype(dtype)
    zp1, zp2, zpo = (g.choice([int(info.min), int(info.max), 0, g.int(info.min, info.max)])
                     for _ in range(3))
    b[: n // 4] = zp2  # zero denominators
    scale = float(np.float32(10.0 ** g.rng.uniform(-3, 2)))
    if g.chance(0.3):  # quotients landing on .5 ties
        scale = 0.5
    expected = ref.quantized_div(a, zp1, b, zp2, zpo, scale)
    w.case("div_s%d" % bits, [zp1, zp2, zpo, f32_bits(scale)], [a, b], expected)


def make_lut(g, w):
    x = g.i8(g.int(1, 500))
    lut = g.i8(256)
    w.case("lut", [], [x, lut], ref.quantized_activation(x, lut))


def broadcast_shapes(g):
    out = [g.int(1, 4) for _ in range(4)]
    a = [d if g.chance(0.6) else 1 for d in out]
    b = [d if g.chance(0.6) else 1 for d in out]
    if g.chance(0.2):
        b = [1, 1, 1, 1]
    # the real output is the broadcast of a and b
    out = [max(x, y) for x, y in zip(a, b)]
    return a, b, out


def make_min_max(g, w, op):
    a_dims, b_dims, out_dims = broadcast_shapes(g)
    a = g.i8(a_dims)
    b = g.i8(b_dims)
    expected = ref.minimum(a, b) if op == "minimum" else ref.maximum(a, b)
    w.case(op, a_dims + b_dims + out_dims, [a, b], expected)


def make_fully_connected(g, w):
    batches, cin, cout = g.int(1, 4), g.int(1, 70), g.int(1, 20)
    x = g.i8((batches, cin))
    weights = g.i8((cout, cin))
    ioff = g.offset()
    foff = 0 if g.chance(0.7) else g.offset()
    ooff = g.zero_point()
    m, s = g.quant(acc_scale(g, cin, ioff, foff))
    amin, amax = g.activation()
    bias = g.bias(cout, 20000) if g.chance(0.8) else None
    kernel_sum = None
    if g.chance(0.4):
        kernel_sum = ref.kernel_sum_from_bias(weights, bias, ioff, foff)
        expected = ref.quantized_linear(x, weights, None, kernel_sum, ioff, foff, ooff, [m], [s], amax, amin)
        # both forms must agree
        assert np.array_equal(expected, ref.quantized_linear(x, weights, bias, None, ioff, foff, ooff,
                                                             [m], [s], amax, amin))
    else:
        expected = ref.quantized_linear(x, weights, bias, None, ioff, foff, ooff, [m], [s], amax, amin)
    w.case("fully_connected",
           [batches, cin, cout, ioff, foff, ooff, m, s, amin, amax, bias is not None, kernel_sum is not None],
           [x, weights, bias, kernel_sum], expected)


def conv_geometry(g, max_side=9):
    """(h, w, kh, kw, stride, padding, dilation) with a positive output size."""
    while True:
        h, w = g.int(1, max_side), g.int(1, max_side)
        shape_kind = g.int(0, 4)
        if shape_kind == 0:
            kh, kw = 1, 1
        elif shape_kind == 1:
            kh, kw = h, w  # full-size kernel
        else:
            kh, kw = g.int(1, 5), g.int(1, 5)
        stride = (g.int(1, 4), g.int(1, 4))  # may exceed the kernel
        dilation = (g.int(1, 3), g.int(1, 3)) if g.chance(0.3) else (1, 1)
        padding = (g.int(0, 3), g.int(0, 3)) if g.chance(0.6) else (0, 0)
        oh = ref.conv_output_size(h, kh, stride[0], padding[0], dilation[0])
        ow = ref.conv_output_size(w, kw, stride[1], padding[1], dilation[1])
        if oh >= 1 and ow >= 1:
            return h, w, kh, kw, stride, padding, dilation, oh, ow


def write_conv(w, x, weight, bias, stride, padding, dilation, ioff, ooff, mults, shifts, amin, amax, op="conv"):
    """A conv case (random or edge): the reference's output and the harness's ints, sizes from the arrays."""
    expected = ref.quantized_conv2d(x, weight, bias, stride, padding, dilation, ioff, ooff, mults, shifts,
                                    amin, amax)
    n, h, wd, cin = x.shape
    cout, kh, kw, cin_g = weight.shape
    oh, ow = expected.shape[1:3]
    ints = [n, h, wd, cin, cout, kh, kw, cin_g, n, oh, ow, cout, stride[0], stride[1], padding[0], padding[1],
            dilation[0], dilation[1], ioff, ooff, amin, amax, bias is not None]
    w.case(op, ints, [x, weight, bias, mults, shifts], expected)


def write_depthwise(w, x, weight, bias, stride, padding, dilation, dm, ioff, ooff, mults, shifts, amin, amax,
                    op="depthwise_conv"):
    """A depthwise case, as write_conv."""
    expected = ref.quantized_depthwise_conv2d(x, weight, bias, stride, padding, dilation, dm, ioff, ooff,
                                              mults, shifts, amin, amax)
    n, h, wd, cin = x.shape
    _, kh, kw, cout = weight.shape
    oh, ow = expected.shape[1:3]
    ints = [n, h, wd, cin, 1, kh, kw, cout, n, oh, ow, cout, stride[0], stride[1], padding[0], padding[1],
            dilation[0], dilation[1], ioff, ooff, amin, amax, bias is not None, dm]
    w.case(op, ints, [x, weight, bias, mults, shifts], expected)


def make_conv(g, w):
    h, wd, kh, kw, stride, padding, dilation, oh, ow = conv_geometry(g)
    groups = g.choice([1, 1, 1, 2, 3])
    cin_g, cout_g = g.choice([g.int(1, 9), g.int(1, 9), g.int(10, 40)]), g.choice([g.int(1, 7), g.int(1, 7), g.int(8, 24)])
    cin, cout = cin_g * groups, cout_g * groups
    n = g.int(1, 3)
    x = g.i8((n, h, wd, cin))
    weight = g.i8((cout, kh, kw, cin_g))
    bias = g.bias(cout, 30000) if g.chance(0.8) else None
    mults, shifts = g.per_channel(cout, acc_scale(g, kh * kw * cin_g))
    ioff, ooff = g.offset(), g.zero_point()
    amin, amax = g.activation()
    write_conv(w, x, weight, bias, stride, padding, dilation, ioff, ooff, mults, shifts, amin, amax)


def make_depthwise(g, w):
    h, wd, kh, kw, stride, padding, dilation, oh, ow = conv_geometry(g)
    cin = g.choice([g.int(1, 21), g.int(1, 21), g.int(22, 70)])
    dm = g.choice([1, 1, 2, 3, g.int(1, 8)])
    if g.chance(0.1):
        cin, dm = 1, g.int(1, 40)  # the Cin = 1 "conv" of DS-CNN's first layer
    cout = cin * dm
    n = 1 if g.chance(0.8) else 2
    x = g.i8((n, h, wd, cin))
    weight = g.i8((1, kh, kw, cout))
    bias = g.bias(cout, 30000) if g.chance(0.8) else None
    mults, shifts = g.per_channel(cout, acc_scale(g, kh * kw))
    ioff, ooff = g.offset(), g.zero_point()
    amin, amax = g.activation()
    write_depthwise(w, x, weight, bias, stride, padding, dilation, dm, ioff, ooff, mults, shifts, amin, amax)


def make_in_place(g, w):
    """A depthwise and a pointwise layer whose out has the input's dims, each
    written twice: out of place, and in place (the harness copies the input
    into out and computes there); both must give the reference's bytes.
    Kernels up to 7 rows over images from 1 row cover the padding edges
    (windows cut at the top and bottom, padding deeper than the image)."""
    n = 1 if g.chance(0.7) else 2
    h, wd = g.int(1, 7), g.int(1, 7)
    kh, kw = g.choice([1, 3, 3, 5, 7]), g.choice([1, 3, 3, 5])
    dilation = (g.int(1, 2), g.int(1, 2)) if g.chance(0.3) else (1, 1)
    padding = (dilation[0] * (kh - 1) // 2, dilation[1] * (kw - 1) // 2)
    c = g.choice([g.int(1, 21), g.int(1, 21), g.int(22, 40)])
    x = g.i8((n, h, wd, c))
    weight = g.i8((1, kh, kw, c))
    bias = g.bias(c, 30000) if g.chance(0.8) else None
    mults, shifts = g.per_channel(c, acc_scale(g, kh * kw))
    ioff, ooff = g.offset(), g.zero_point()
    amin, amax = g.activation()
    for op in ("depthwise_conv", "depthwise_in_place"):
        write_depthwise(w, x, weight, bias, (1, 1), padding, dilation, 1, ioff, ooff, mults, shifts, amin, amax,
                        op=op)
    groups = g.choice([1, 1, 1, 2])
    c = g.choice([g.int(1, 12), g.int(13, 40)]) * groups
    x = g.i8((n, h, wd, c))
    weight = g.i8((c, 1, 1, c // groups))
    bias = g.bias(c, 30000) if g.chance(0.8) else None
    mults, shifts = g.per_channel(c, acc_scale(g, c // groups))
    ioff, ooff = g.offset(), g.zero_point()
    amin, amax = g.activation()
    for op in ("conv", "pointwise_in_place"):
        write_conv(w, x, weight, bias, (1, 1), (0, 0), (1, 1), ioff, ooff, mults, shifts, amin, amax, op=op)


def make_transpose_conv(g, w):
    while True:
        h, wd = g.int(1, 6), g.int(1, 6)
        kh, kw = g.int(1, 5), g.int(1, 5)
        stride = (g.int(1, 4), g.int(1, 4))
        padding = (g.int(0, 3), g.int(0, 3))
        dilation = (g.int(1, 2), g.int(1, 2)) if g.chance(0.2) else (1, 1)
        output_padding = (g.int(0, stride[0] - 1), g.int(0, stride[1] - 1)) if g.chance(0.2) else (0, 0)
        oh = ref.transpose_conv_output_size(h, kh, stride[0], padding[0], output_padding[0], dilation[0])
        ow = ref.transpose_conv_output_size(wd, kw, stride[1], padding[1], output_padding[1], dilation[1])
        if oh >= 1 and ow >= 1:
            break
    cin, cout = g.int(1, 20), g.int(1, 10)
    n = g.int(1, 2)
    x = g.i8((n, h, wd, cin))
    weight = g.i8((cout, kh, kw, cin))
    bias = g.bias(cout, 30000) if g.chance(0.8) else None
    taps = max(1, kh * kw * cin // (stride[0] * stride[1]))
    mults, shifts = g.per_channel(cout, acc_scale(g, taps))
    ioff, ooff = g.offset(), g.zero_point()
    amin, amax = g.activation()
    expected = ref.quantized_transpose_conv2d(x, weight, bias, stride, padding, output_padding, dilation,
                                              ioff, ooff, mults, shifts, amin, amax)
    ints = [n, h, wd, cin, cout, kh, kw, cin, n, oh, ow, cout, stride[0], stride[1], padding[0], padding[1],
            dilation[0], dilation[1], ioff, ooff, amin, amax, bias is not None]
    w.case("transpose_conv", ints, [x, weight, bias, mults, shifts], expected)


def make_batch_matmul(g, w):
    b, m, n, k = g.int(1, 3), g.int(1, 9), g.int(1, 9), g.int(1, 40)
    lhs, rhs_t = g.i8((b, m, k)), g.i8((b, n, k))
    loff, roff, ooff = g.offset(), g.offset(), g.zero_point()
    mult, shift = g.quant(acc_scale(g, k, loff, roff))
    expected = ref.quantized_batch_matmul(lhs, loff, rhs_t, roff, ooff, mult, shift)
    w.case("batch_matmul", [b, m, n, k, loff, roff, ooff, mult, shift], [lhs, rhs_t], expected)


def pool_geometry(g, ceil_allowed):
    while True:
        h, wd = g.int(1, 9), g.int(1, 9)
        if g.chance(0.2):
            kh, kw = h, wd
        else:
            kh, kw = g.int(1, min(h, 4) + 1), g.int(1, min(wd, 4) + 1)
        stride = (g.int(1, 4), g.int(1, 4))
        padding = (g.int(0, kh // 2), g.int(0, kw // 2))
        ceil_mode = ceil_allowed and g.chance(0.4)
        oh = ref.pool_output_size(h, kh, stride[0], padding[0], ceil_mode)
        ow = ref.pool_output_size(wd, kw, stride[1], padding[1], ceil_mode)
        if oh >= 1 and ow >= 1:
            return h, wd, (kh, kw), stride, padding, ceil_mode, oh, ow


def make_pool(g, w, op):
    h, wd, kernel, stride, padding, ceil_mode, oh, ow = pool_geometry(g, op == "avgpool")
    n, c = g.int(1, 2), g.int(1, 19)
    x = g.i8((n, h, wd, c))
    ints = [n, h, wd, c, n, oh, ow, c, kernel[0], kernel[1], stride[0], stride[1], padding[0], padding[1]]
    if op == "avgpool":
        try:
            expected = ref.quantized_avg_pool2d(x, kernel, stride, padding, ceil_mode, 0, 0, 0)
        except ValueError:
            return
        w.case("avgpool", ints, [x], expected)
    else:
        amin, amax = g.activation()
        zp = g.zero_point()
        expected = ref.quantized_max_pool2d(x, kernel, stride, padding, (1, 1), False, zp, zp, amin, amax)
        w.case("maxpool", ints + [amin, amax], [x], expected)


def make_softmax(g, w):
    rows, size = g.int(1, 6), g.choice([1, 2, g.int(1, 40), g.int(1, 300)])
    x = g.i8((rows, size))
    if g.chance(0.5):  # a narrow spread gives non-trivial probabilities
        x = (g.rng.integers(-20, 20, size=(rows, size)) + g.int(-100, 100)).astype(np.int8)
    scale = 2.0 ** g.rng.uniform(-8, 0)
    mult, shift, diff_min = ref.softmax_parameters(scale)
    if g.chance(0.1):
        diff_min = -g.int(0, 255)
    expected = ref.softmax(x, -1, 0, -128, mult, shift, diff_min)
    w.case("softmax", [rows, size, mult, shift, diff_min], [x], expected)


def make_transpose(g, w):
    rank = g.int(1, 4)
    sizes = [g.int(1, 6) for _ in range(rank)]
    perm = [int(p) for p in g.rng.permutation(rank)]
    x = g.i8(sizes)
    expected = ref.transpose(x, perm)
    w.case("transpose", [rank] + sizes + [1] * (4 - rank) + perm + [0] * (4 - rank), [x], expected)


def make_pad(g, w):
    dims = [g.int(1, 2), g.int(1, 5), g.int(1, 5), g.int(1, 7)]
    if g.chance(0.1):
        dims[g.int(0, 3)] = 0
    pre = [g.int(0, 2) if g.chance(0.6) else 0 for _ in range(4)]
    post = [g.int(0, 2) if g.chance(0.6) else 0 for _ in range(4)]
    value = g.int(-128, 127)
    x = g.i8(dims)
    expected = ref.pad(x, pre, post, value)
    w.case("pad", dims + pre + post + [value], [x], expected)


# ---------------------------------------------------------------------------
# packed 4-bit weights (ptec::quantized_conv2d_w4, _linear_w4): the weights
# are drawn in [-8, 7], packed here the way CMSIS-NN's s4 kernels read them
# (element 2i in the low nibble of byte i, 2i+1 in the high nibble, rows
# not padded), and the expected bytes come from the int8 reference on the
# unpacked weights

S4_SCALE = 74.0 / 4.6  # acc_scale assumes int8 weights (rms 74); int4 ones have rms ~4.6


def i4(g, shape):
    if g.chance(0.15):  # the extremes only
        return g.rng.choice(np.array([-8, 7], np.int8), size=shape)
    return g.rng.integers(-8, 8, size=shape, dtype=np.int64).astype(np.int8)


def pack_s4(weights):
    flat = np.asarray(weights, np.int64).reshape(-1)
    assert flat.size == 0 or (flat.min() >= -8 and flat.max() <= 7)
    nibbles = [int(v) & 0xF for v in flat] + [0] * (flat.size % 2)
    return np.array([lo | hi << 4 for lo, hi in zip(nibbles[0::2], nibbles[1::2])], np.uint8).view(np.int8)


def write_conv_s4(w, x, weight, bias, stride, padding, dilation, ioff, ooff, mults, shifts, amin, amax):
    expected = ref.quantized_conv2d(x, weight, bias, stride, padding, dilation, ioff, ooff, mults, shifts,
                                    amin, amax)
    n, h, wd, cin = x.shape
    cout, kh, kw, cin_g = weight.shape
    oh, ow = expected.shape[1:3]
    ints = [n, h, wd, cin, cout, kh, kw, cin_g, n, oh, ow, cout, stride[0], stride[1], padding[0], padding[1],
            dilation[0], dilation[1], ioff, ooff, amin, amax, bias is not None]
    w.case("conv_s4", ints, [x, pack_s4(weight), bias, mults, shifts], expected)


def conv_s4_case(g, w, n, h, wd, cin, cout, groups, kernel, stride, padding, dilation, edge=False):
    kh, kw = kernel
    if ref.conv_output_size(h, kh, stride[0], padding[0], dilation[0]) < 1 or \
            ref.conv_output_size(wd, kw, stride[1], padding[1], dilation[1]) < 1:
        return
    cin_g = cin // groups
    x = g.i8((n, h, wd, cin))
    weight = i4(g, (cout, kh, kw, cin_g))
    bias = g.bias(cout, 30000) if g.chance(0.8) else None
    scale = acc_scale(g, kh * kw * cin_g) * S4_SCALE
    if edge:
        ioff, ooff = edge_offsets(g)
        mults, shifts = edge_quant(g, cout, scale)
    else:
        ioff, ooff = g.offset(), g.zero_point()
        mults, shifts = g.per_channel(cout, scale)
    amin, amax = g.activation()
    write_conv_s4(w, x, weight, bias, stride, padding, dilation, ioff, ooff, mults, shifts, amin, amax)


def make_conv_s4(g, w):
    h, wd, kh, kw, stride, padding, dilation, oh, ow = conv_geometry(g)
    groups = g.choice([1, 1, 1, 2, 3])
    cin_g, cout_g = g.choice([g.int(1, 9), g.int(1, 9), g.int(10, 40)]), g.choice([g.int(1, 7), g.int(1, 7), g.int(8, 24)])
    conv_s4_case(g, w, g.int(1, 3), h, wd, cin_g * groups, cout_g * groups, groups, (kh, kw), stride, padding,
                 dilation)


def fully_connected_s4_case(g, w, batches, cin, cout, edge=False):
    x = g.i8((batches, cin))
    weights = i4(g, (cout, cin))
    ioff, ooff = edge_offsets(g) if edge else (g.offset(), g.zero_point())
    m, s = g.quant(acc_scale(g, cin, ioff) * S4_SCALE)
    amin, amax = g.activation()
    bias = g.bias(cout, 20000) if edge or g.chance(0.8) else None
    expected = ref.quantized_linear(x, weights, bias, None, ioff, 0, ooff, [m], [s], amax, amin)
    w.case("fully_connected_s4", [batches, cin, cout, ioff, ooff, m, s, amin, amax, bias is not None],
           [x, pack_s4(weights), bias], expected)


def make_fully_connected_s4(g, w):
    fully_connected_s4_case(g, w, g.int(1, 4), g.int(1, 70), g.int(1, 20))


def make_s4_edges(g, w):
    # Pointwise, k = Cin: odd k starts every other row mid-byte; k and
    # Cout around multiples of 4 (DSP blocks) and 16 (Helium blocks).
    for cin in (1, 2, 3, 4, 5, 7, 15, 16, 17, 31, 32, 33, 65):
        cout = g.choice([1, 2, 3, 4, 5, 7, 8, 15, 16, 17])
        conv_s4_case(g, w, g.int(1, 2), g.int(1, 5), g.int(1, 5), cin, cout, 1, (1, 1), (1, 1), (0, 0), (1, 1),
                     edge=True)
    # Odd k = KH * KW * Cin/groups with groups whose first row is mid-byte
    # (odd rows per group), padding, stride, dilation, batches.
    for _ in range(24):
        groups = g.choice([1, 1, 2, 3, 4])
        cin = groups * g.choice([1, 3, 5, 7, 9, 17])
        cout = groups * g.choice([1, 3, 4, 5, 7, 13, 16])
        kernel = g.choice([(1, 3), (3, 3), (3, 1), (5, 3), (2, 3), (2, 2)])
        conv_s4_case(g, w, g.int(1, 3), g.int(1, 7), g.choice([1, 3, 5, 7]), cin, cout, groups, kernel,
                     (g.int(1, 2), g.int(1, 2)), (g.int(0, 2), g.int(0, 2)), (1, 1) if g.chance(0.6) else (2, 2),
                     edge=True)
    # Fully connected: features around multiples of 4 and 16, odd Cin.
    for cin in (1, 2, 3, 4, 5, 7, 15, 16, 17, 31, 32, 33, 64, 65):
        fully_connected_s4_case(g, w, g.int(1, 3), cin, g.choice([1, 2, 3, 4, 5, 7, 8, 12, 16, 17]), edge=True)
    # All weights at the extremes, both input offset ends, identity requantization.
    for ioff in (128, -127):
        x = g.i8((2, 3, 3, 5))
        weight = g.rng.choice(np.array([-8, 7], np.int8), size=(3, 3, 3, 5))
        mults, shifts = np.full(3, 1 << 30, np.int32), np.full(3, -4, np.int32)
        write_conv_s4(w, x, weight, None, (1, 1), (1, 1), (1, 1), ioff, 0, mults, shifts, -128, 127)
        xf, wf = g.i8((2, 9)), g.rng.choice(np.array([-8, 7], np.int8), size=(5, 9))
        expected = ref.quantized_linear(xf, wf, None, None, ioff, 0, 0, [1 << 30], [-4], 127, -128)
        w.case("fully_connected_s4", [2, 9, 5, ioff, 0, 1 << 30, -4, -128, 127, False], [xf, pack_s4(wf), None],
               expected)


def depthwise_s4_case(g, w, n, h, wd, cin, dm, kernel, stride, padding, dilation, edge=False):
    """A packed 4-bit depthwise case (ptec_nn_depthwise_conv_s4): the IHWO
    weights [1, KH, KW, Cout] flattened and packed as pack_s4 does
    (CMSIS-NN's arm_depthwise_conv_s4 layout); the expected bytes are the
    int8 depthwise reference's on the unpacked weights."""
    kh, kw = kernel
    if ref.conv_output_size(h, kh, stride[0], padding[0], dilation[0]) < 1 or \
            ref.conv_output_size(wd, kw, stride[1], padding[1], dilation[1]) < 1:
        return
    cout = cin * dm
    x = g.i8((n, h, wd, cin))
    weight = i4(g, (1, kh, kw, cout))
    bias = g.bias(cout, 30000) if g.chance(0.8) else None
    scale = acc_scale(g, kh * kw) * S4_SCALE
    if edge:
        ioff, ooff = edge_offsets(g)
        mults, shifts = edge_quant(g, cout, scale)
    else:
        ioff, ooff = g.offset(), g.zero_point()
        mults, shifts = g.per_channel(cout, scale)
    amin, amax = g.activation()
    write_depthwise_s4(w, x, weight, bias, stride, padding, dilation, dm, ioff, ooff, mults, shifts, amin, amax)


def write_depthwise_s4(w, x, weight, bias, stride, padding, dilation, dm, ioff, ooff, mults, shifts, amin, amax):
    expected = ref.quantized_depthwise_conv2d(x, weight, bias, stride, padding, dilation, dm, ioff, ooff,
                                              mults, shifts, amin, amax)
    n, h, wd, cin = x.shape
    _, kh, kw, cout = weight.shape
    oh, ow = expected.shape[1:3]
    ints = [n, h, wd, cin, 1, kh, kw, cout, n, oh, ow, cout, stride[0], stride[1], padding[0], padding[1],
            dilation[0], dilation[1], ioff, ooff, amin, amax, bias is not None, dm]
    w.case("depthwise_conv_s4", ints, [x, pack_s4(weight), bias, mults, shifts], expected)


def make_depthwise_s4(g, w):
    h, wd, kh, kw, stride, padding, dilation, oh, ow = conv_geometry(g)
    cin = g.choice([g.int(1, 21), g.int(1, 21), g.int(22, 70)])
    dm = g.choice([1, 1, 2, 3, g.int(1, 8)])
    if g.chance(0.1):
        cin, dm = 1, g.int(1, 40)  # one input channel: the DSP and Helium builds run it as a convolution
    depthwise_s4_case(g, w, 1 if g.chance(0.8) else 2, h, wd, cin, dm, (kh, kw), stride, padding, dilation)


def make_depthwise_s4_edges(g, w):
    # Odd KH * KW * Cout (the last byte's high nibble unused), odd channel
    # counts (every other tap row starts mid-byte), channels around the
    # DSP (4) and Helium (16) blocks, multipliers > 1, one input channel.
    for cin in (1, 2, 3, 4, 5, 7, 15, 16, 17, 31, 33):
        for dm in (1, g.choice([2, 3, 5])):
            kernel = g.choice([(3, 3), (1, 3), (3, 1), (5, 5), (2, 3), (1, 1)])
            depthwise_s4_case(g, w, g.int(1, 2), g.int(1, 7), g.int(1, 7), cin, dm, kernel,
                              (g.int(1, 2), g.int(1, 2)), (g.int(0, 2), g.int(0, 2)),
                              (1, 1) if g.chance(0.7) else (2, 2), edge=True)
    # DS-CNN's first layer shape (one channel, a 10x4 window, 64 outputs)
    # and a 3x3 multiplier-1 layer on a wide image (the Helium row loops).
    depthwise_s4_case(g, w, 1, 12, 6, 1, 64, (10, 4), (2, 2), (4, 1), (1, 1), edge=True)
    depthwise_s4_case(g, w, 1, 5, 19, 23, 1, (3, 3), (1, 1), (1, 1), (1, 1), edge=True)
    # All weights at the extremes, both input offset ends, identity requantization.
    for ioff in (128, -127):
        x = g.i8((1, 4, 5, 7))
        weight = g.rng.choice(np.array([-8, 7], np.int8), size=(1, 3, 3, 7))
        mults, shifts = np.full(7, 1 << 30, np.int32), np.full(7, -4, np.int32)
        write_depthwise_s4(w, x, weight, None, (1, 1), (1, 1), (1, 1), 1, ioff, 0, mults, shifts, -128, 127)


# ---------------------------------------------------------------------------
# shapes aimed at the DSP and Helium variants' edge paths (ptec_nn_isa.h)

def edge_quant(g, count, typical_scale):
    """Per-channel pairs with the extremes the vector requantization must
    get right: a multiplier of -2^31 (VQRDMULH saturates it), large
    positive shifts (left shifts that wrap) and the largest right shift."""
    mults, shifts = g.per_channel(count, typical_scale)
    kind = g.int(0, 3)
    if kind == 0:
        mults[g.int(0, count - 1)] = -(1 << 31)
        shifts[g.int(0, count - 1)] = g.int(1, 31)
    elif kind == 1:
        shifts[:] = [g.choice([31, 30, 5, 1, 0, -1, -31]) for _ in range(count)]
    return mults, shifts


def fast_quant(g, count, typical_scale):
    """Per-channel pairs that all take the DSP kernels' short requantization
    (ptec_nn_requant_fast_ok: shift <= -2, multiplier not -2^31), with the
    extreme multipliers and shifts it allows."""
    mults, shifts = g.per_channel(count, typical_scale)
    for i in range(count):
        if shifts[i] > -2 or mults[i] == -(1 << 31):
            mults[i] = g.choice([(1 << 31) - 1, -((1 << 31) - 1), 1 << 30, -(1 << 30), 1, -1, 0,
                                 g.int(-(1 << 31) + 1, (1 << 31) - 1)])
            shifts[i] = g.choice([-2, -3, -31, g.int(-31, -2)])
    return mults, shifts


def short_quant(g, count, typical_scale):
    """Per-channel pairs that all take the Helium gemm's short requantization
    (ptec_nn_requant_short_ok_mve: shift <= -1, multiplier not -2^31): the
    random pairs that qualify, the rest replaced by the extremes it allows
    (shift -1, whose ties are half the values, and -31; multipliers
    +-(2^31 - 1), +-1, 0) and by small scales that keep outputs unclamped."""
    mults, shifts = g.per_channel(count, typical_scale)
    for i in range(count):
        if shifts[i] > -1 or mults[i] == -(1 << 31) or g.chance(0.3):
            kind = g.int(0, 2)
            if kind == 0:
                mults[i] = g.choice([(1 << 31) - 1, -((1 << 31) - 1), 1, -1, 0, g.int(-(1 << 31) + 1, (1 << 31) - 1)])
                shifts[i] = g.choice([-1, -31, g.int(-31, -1)])
            else:
                mults[i] = g.choice([1 << 30, -(1 << 30), g.int(1 << 29, (1 << 31) - 1)])
                shifts[i] = g.choice([-1, -1, -2, -3, -8])
    return mults, shifts


def short_quant_but_one(g, count, typical_scale):
    """short_quant with one channel just outside it: shift 0 or a multiplier
    of -2^31 (the whole layer then takes the general requantization)."""
    mults, shifts = short_quant(g, count, typical_scale)
    i = g.int(0, count - 1)
    if g.chance(0.5):
        # a small multiplier keeps that channel's outputs unclamped, so the
        # short form's rounding (wrong at shift 0 for negative values) shows
        shifts[i] = 0
        mults[i] = g.choice([1 << 14, -(1 << 14), g.int(1 << 12, 1 << 17)])
    else:
        mults[i] = -(1 << 31)
    return mults, shifts


def edge_offsets(g):
    """Input offsets from the zero points -128 and 127 (offsets 128, -127)
    and output zero points at both ends, else random."""
    ioff = g.choice([128, -127, g.offset()])
    ooff = g.choice([-128, 127, g.zero_point()])
    return ioff, ooff


def conv_edge_case(g, w, n, h, wd, cin, cout, groups, kernel, stride, padding, dilation, quant=edge_quant):
    kh, kw = kernel
    oh = ref.conv_output_size(h, kh, stride[0], padding[0], dilation[0])
    ow = ref.conv_output_size(wd, kw, stride[1], padding[1], dilation[1])
    if oh < 1 or ow < 1:
        return
    cin_g = cin // groups
    x = g.i8((n, h, wd, cin))
    weight = g.i8((cout, kh, kw, cin_g))
    bias = g.bias(cout, 30000) if g.chance(0.8) else None
    ioff, ooff = edge_offsets(g)
    mults, shifts = quant(g, cout, acc_scale(g, kh * kw * cin_g))
    amin, amax = g.activation()
    write_conv(w, x, weight, bias, stride, padding, dilation, ioff, ooff, mults, shifts, amin, amax)


def depthwise_edge_case(g, w, n, h, wd, cin, dm, kernel, stride, padding, dilation, quant=edge_quant):
    kh, kw = kernel
    oh = ref.conv_output_size(h, kh, stride[0], padding[0], dilation[0])
    ow = ref.conv_output_size(wd, kw, stride[1], padding[1], dilation[1])
    if oh < 1 or ow < 1:
        return
    cout = cin * dm
    x = g.i8((n, h, wd, cin))
    weight = g.i8((1, kh, kw, cout))
    bias = g.bias(cout, 30000) if g.chance(0.8) else None
    ioff, ooff = edge_offsets(g)
    mults, shifts = quant(g, cout, acc_scale(g, kh * kw))
    amin, amax = g.activation()
    write_depthwise(w, x, weight, bias, stride, padding, dilation, dm, ioff, ooff, mults, shifts, amin, amax)


def make_variant_edges(g, w):
    # Pointwise (the direct column path): k and Cout around multiples of
    # 4 and 16, odd pixel counts (the DSP kernel works on pixel pairs).
    for cin in (1, 3, 4, 15, 16, 17, 31, 32, 33, 64, 65):
        cout = g.choice([1, 2, 3, 4, 5, 7, 8, 16, 17, 64])
        conv_edge_case(g, w, g.int(1, 2), g.int(1, 5), g.int(1, 5), cin, cout, 1, (1, 1), (1, 1), (0, 0), (1, 1))
    # 1x1 with stride, and 1x1 with padding (gathered columns).
    conv_edge_case(g, w, 1, 5, 5, 16, 8, 1, (1, 1), (2, 2), (0, 0), (1, 1))
    conv_edge_case(g, w, 1, 3, 4, 8, 5, 1, (1, 1), (1, 1), (1, 1), (1, 1))
    # General kernels: padding on every side, odd widths, groups, dilation.
    for _ in range(16):
        groups = g.choice([1, 1, 2, 4])
        cin = groups * g.choice([1, 3, 4, 5, 16, 17])
        cout = groups * g.choice([1, 3, 4, 5, 8, 13])
        kernel = (g.int(1, 4), g.int(1, 4))
        conv_edge_case(g, w, g.int(1, 2), g.int(1, 7), g.choice([1, 3, 5, 7]), cin, cout, groups, kernel,
                       (g.int(1, 2), g.int(1, 2)), (g.int(0, 2), g.int(0, 2)),
                       (1, 1) if g.chance(0.7) else (2, 2))
    # Depthwise, multiplier 1: channel counts around multiples of 4.
    for c in (1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 64, 67):
        depthwise_edge_case(g, w, g.int(1, 2), g.int(1, 6), g.choice([1, 3, 5]), c, 1, (3, 3), (1, 1),
                            (1, 1), (1, 1))
    depthwise_edge_case(g, w, 1, 7, 6, 9, 1, (3, 3), (2, 2), (0, 2), (1, 2))
    # One input channel, several outputs: DS-CNN's first layer (10x4,
    # stride 2, padding 5x1, 64 channels) and smaller relatives.
    depthwise_edge_case(g, w, 1, 49, 10, 1, 64, (10, 4), (2, 2), (5, 1), (1, 1))
    for dm in (2, 3, 4, 5, 17):
        depthwise_edge_case(g, w, g.int(1, 2), g.int(2, 9), g.int(2, 9), 1, dm, (g.int(1, 5), g.int(1, 4)),
                            (g.int(1, 2), g.int(1, 2)), (g.int(0, 3), g.int(0, 2)), (1, 1))
    # Fully connected: feature counts around multiples of 4 and 16.
    for cin in (1, 3, 4, 15, 16, 17, 64, 65):
        batches, cout = g.int(1, 3), g.choice([1, 3, 4, 5, 12])
        x, weights = g.i8((batches, cin)), g.i8((cout, cin))
        ioff, ooff = edge_offsets(g)
        foff = 0 if g.chance(0.7) else g.offset()
        m, s = g.quant(acc_scale(g, cin, ioff, foff))
        amin, amax = g.activation()
        bias = g.bias(cout, 20000)
        expected = ref.quantized_linear(x, weights, bias, None, ioff, foff, ooff, [m], [s], amax, amin)
        w.case("fully_connected", [batches, cin, cout, ioff, foff, ooff, m, s, amin, amax, True, False],
               [x, weights, bias, None], expected)
    # Average pool over channel counts around multiples of 4 and 16,
    # DS-CNN's 25x5 window included.
    for c in (1, 3, 4, 5, 15, 16, 17, 64):
        h, wd = g.int(1, 6), g.int(1, 6)
        kernel = (g.int(1, h), g.int(1, wd))
        n = g.int(1, 2)
        x = g.i8((n, h, wd, c))
        padding = (g.int(0, kernel[0] // 2), g.int(0, kernel[1] // 2))
        oh = ref.pool_output_size(h, kernel[0], 1, padding[0], False)
        ow = ref.pool_output_size(wd, kernel[1], 1, padding[1], False)
        expected = ref.quantized_avg_pool2d(x, kernel, (1, 1), padding, False, 0, 0, 0)
        w.case("avgpool", [n, h, wd, c, n, oh, ow, c, kernel[0], kernel[1], 1, 1, padding[0], padding[1]], [x],
               expected)
    # Max pool over channel counts around multiples of 4 and 16 (the DSP
    # and Helium lane counts), with padding and clamps.
    for c in (3, 4, 5, 15, 16, 17, 33):
        h, wd = g.int(2, 6), g.int(2, 6)
        kernel = (g.int(1, min(h, 3)), g.int(1, min(wd, 3)))
        padding = (g.int(0, kernel[0] // 2), g.int(0, kernel[1] // 2))
        stride = (g.int(1, 2), g.int(1, 2))
        n = g.int(1, 2)
        oh = ref.pool_output_size(h, kernel[0], stride[0], padding[0], False)
        ow = ref.pool_output_size(wd, kernel[1], stride[1], padding[1], False)
        x = g.i8((n, h, wd, c))
        amin, amax = g.activation()
        zp = g.zero_point()
        expected = ref.quantized_max_pool2d(x, kernel, stride, padding, (1, 1), False, zp, zp, amin, amax)
        w.case("maxpool", [n, h, wd, c, n, oh, ow, c, kernel[0], kernel[1], stride[0], stride[1], padding[0],
                           padding[1], amin, amax], [x], expected)
    x = g.i8((1, 25, 5, 64))
    expected = ref.quantized_avg_pool2d(x, (24, 5), (24, 5), (0, 0), False, 0, 0, 0)
    w.case("avgpool", [1, 25, 5, 64, 1, 1, 1, 64, 24, 5, 24, 5, 0, 0], [x], expected)
    # The DSP kernels' short requantization (every channel with shift <= -2):
    # pointwise with odd and even row and pixel counts, gathered columns,
    # groups, depthwise around multiples of 4, DS-CNN's first layer.
    for cin in (1, 3, 4, 5, 16, 17, 64, 65):
        for cout in (2, 3, 5, 8, 17, 64):
            conv_edge_case(g, w, g.int(1, 2), g.int(1, 5), g.int(1, 5), cin, cout, 1, (1, 1), (1, 1), (0, 0),
                           (1, 1), fast_quant)
    for _ in range(12):
        groups = g.choice([1, 1, 2])
        cin = groups * g.choice([1, 3, 4, 5, 16])
        cout = groups * g.choice([1, 2, 3, 5, 8])
        conv_edge_case(g, w, g.int(1, 2), g.int(1, 7), g.choice([1, 3, 5, 7]), cin, cout, groups,
                       (g.int(1, 4), g.int(1, 4)), (g.int(1, 2), g.int(1, 2)), (g.int(0, 2), g.int(0, 2)),
                       (1, 1), fast_quant)
    for c in (1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 64, 67):
        depthwise_edge_case(g, w, g.int(1, 2), g.int(1, 6), g.choice([1, 2, 3, 5]), c, 1, (3, 3), (1, 1),
                            (1, 1), (1, 1), fast_quant)
        depthwise_edge_case(g, w, 1, g.int(1, 6), g.int(1, 6), c, 1, (g.int(1, 3), g.int(1, 4)),
                            (g.int(1, 2), g.int(1, 2)), (g.int(0, 2), g.int(0, 2)), (1, 1), fast_quant)
    depthwise_edge_case(g, w, 1, 25, 5, 64, 1, (3, 3), (1, 1), (1, 1), (1, 1), fast_quant)
    # The DSP 3x3 kernel's moved windows: strides 1 and 2, padding 0 or 1 on
    # each axis, inputs from 3x3, batches.
    for _ in range(24):
        depthwise_edge_case(g, w, g.int(1, 2), g.int(3, 8), g.int(3, 8), g.choice([4, 5, 8, 11, 12, 64]), 1, (3, 3),
                            (g.int(1, 2), g.int(1, 2)), (g.int(0, 1), g.int(0, 1)), (1, 1), fast_quant)
    depthwise_edge_case(g, w, 1, 49, 10, 1, 64, (10, 4), (2, 2), (5, 1), (1, 1), fast_quant)
    # The Helium gemm: four-row groups with a predicated last block
    # (k % 16), odd row and pixel counts, the short requantization (every
    # shift <= -1) and its edge (one shift 0 or multiplier -2^31).
    for quant in (short_quant, short_quant_but_one, edge_quant):
        for cin in (1, 8, 15, 16, 17, 40, 48, 64, 65):
            cout = g.choice([3, 4, 5, 8, 12, 13, 64])
            conv_edge_case(g, w, g.int(1, 2), g.int(1, 5), g.choice([1, 2, 3, 5]), cin, cout, 1, (1, 1), (1, 1),
                           (0, 0), (1, 1), quant)
        # Gathered columns whose kernel rows fit one vector (the Helium
        # im2col's predicated rows) or not: one or few channels, padding on
        # every side up to windows wholly in the padding, dilated rows.
        for _ in range(10):
            cin = g.choice([1, 1, 2, 3, 5])
            kernel = (g.int(1, 5), g.int(1, 6))
            conv_edge_case(g, w, g.int(1, 2), g.int(1, 9), g.int(1, 9), cin, g.choice([4, 5, 8, 9]), 1, kernel,
                           (g.int(1, 2), g.int(1, 2)), (g.int(0, 3), g.int(0, 3)), (g.int(1, 2), 1), quant)
        # One input channel: the transposed filter's channel counts around
        # multiples of 8 (the Helium scatter), DS-CNN's first layer.
        for dm in (3, 8, 9, 17, 64, 67):
            depthwise_edge_case(g, w, 1, g.int(2, 12), g.int(2, 10), 1, dm, (g.int(1, 10), g.int(1, 4)),
                                (g.int(1, 2), g.int(1, 2)), (g.int(0, 5), g.int(0, 2)), (1, 1), quant)
        depthwise_edge_case(g, w, 1, 49, 10, 1, 64, (10, 4), (2, 2), (5, 1), (1, 1), quant)
    # Helium depthwise, multiplier 1, with the short requantization and its
    # edge: 16-channel blocks and the 4-channel rest.
    for quant in (short_quant, short_quant_but_one):
        for c in (16, 17, 20, 32, 64, 67):
            depthwise_edge_case(g, w, g.int(1, 2), g.int(1, 6), g.choice([1, 3, 5]), c, 1, (3, 3),
                                (g.int(1, 2), g.int(1, 2)), (g.int(0, 1), g.int(0, 1)), (1, 1), quant)
        depthwise_edge_case(g, w, 1, 25, 5, 64, 1, (3, 3), (1, 1), (1, 1), (1, 1), quant)



def fold_quant(g, count, typical_scale):
    """fast_quant within the DSP gemm assembly's folded requantization
    (ptec_nn_requant_fold_ok: every shift also >= -24), both ends often."""
    mults, shifts = fast_quant(g, count, typical_scale)
    for i in range(count):
        if shifts[i] < -24 or g.chance(0.2):
            shifts[i] = g.choice([-2, -24, g.int(-24, -2)])
    return mults, shifts


def fold_quant_but_one(g, count, typical_scale):
    """fold_quant with one shift of -25: the layer leaves the assembly."""
    mults, shifts = fold_quant(g, count, typical_scale)
    shifts[g.int(0, count - 1)] = -25
    return mults, shifts


def make_fold_edges(g, w):
    """The DSP gemm's assembly (ptec_nn_rows_dot2_q15_dsp.c, rows2_asm):
    k from 1 to 65 (no 4-block loop below 16; single blocks; k % 4 values),
    odd and even row and pixel counts, the whole int8 range and clamps, and
    the shift bound of the folded output offset."""
    for cin in (1, 2, 3, 4, 5, 8, 12, 15, 16, 17, 20, 28, 31, 33, 40, 64, 65):
        for cout in (2, 3, 5, 17, 64):
            quant = fold_quant if g.chance(0.8) else fold_quant_but_one
            conv_edge_case(g, w, g.int(1, 2), g.int(1, 5), g.int(1, 5), cin, cout, 1, (1, 1), (1, 1), (0, 0),
                           (1, 1), quant)
    for _ in range(8):
        conv_edge_case(g, w, 1, g.int(2, 7), g.int(2, 7), g.choice([1, 3, 4]), g.choice([2, 5, 8]), 1,
                       (g.int(1, 4), g.int(1, 4)), (g.int(1, 2), g.int(1, 2)), (g.int(0, 2), g.int(0, 2)), (1, 1),
                       fold_quant)
    conv_edge_case(g, w, 1, 25, 5, 64, 64, 1, (1, 1), (1, 1), (0, 0), (1, 1), fold_quant)
    depthwise_edge_case(g, w, 1, 49, 10, 1, 64, (10, 4), (2, 2), (5, 1), (1, 1), fold_quant)
    # Sums near 2^31 times multipliers near 2^31: at shift -24 the folded
    # high word stays in int32 for every output offset; at -25 with offset
    # 127 (or -128 and negative sums) it would wrap, so that shift must
    # take the general form. Outputs saturate at the offset's end.
    for shift, ooff, sign in ((-24, 127, 1), (-25, 127, 1), (-24, -128, -1), (-25, -128, -1), (-25, 127, -1)):
        cin, cout, pixels = 5, 4, 3
        x = g.i8((1, 1, pixels, cin))
        weight = np.clip(g.i8((cout, 1, 1, cin)), -4, 4).astype(np.int8)
        bias = np.full(cout, sign * ((1 << 31) - (1 << 16)), np.int64).astype(np.int32)
        mults = np.full(cout, (1 << 31) - 1, np.int32)
        shifts = np.full(cout, shift, np.int32)
        write_conv(w, x, weight, bias, (1, 1), (0, 0), (1, 1), 0, ooff, mults, shifts, -128, 127)
    # Output offsets and bounds outside int8 (the C API takes any int32;
    # the reference clamps, then keeps the low byte): not the assembly's.
    for ooff, amin, amax in ((128, -128, 127), (-129, -128, 127), (0, -129, 127), (0, -128, 128), (0, -300, 300),
                             (200, -300, 300)):
        cin, cout = g.choice([8, 16, 20]), g.choice([2, 5])
        x = g.i8((1, 2, 3, cin))
        weight = g.i8((cout, 1, 1, cin))
        mults, shifts = fold_quant(g, cout, acc_scale(g, cin))
        write_conv(w, x, weight, g.bias(cout, 30000), (1, 1), (0, 0), (1, 1), g.offset(), ooff, mults, shifts,
                   amin, amax)


# ---------------------------------------------------------------------------
# 16-bit activations with 8-bit weights (ptec::*_a16). Drawn from a Gen of
# their own after every int8 case, so that the int8 cases stay as they were.

I16_MIN, I16_MAX = -32768, 32767
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


def i16(g, shape):
    kind = g.int(0, 5)
    if kind == 0:  # extremes only
        return g.rng.choice(np.array([I16_MIN, I16_MAX, 0, -1], np.int16), size=shape)
    if kind == 1:  # small values: outputs that are not all saturated
        return g.rng.integers(-300, 301, size=shape, dtype=np.int64).astype(np.int16)
    return g.rng.integers(I16_MIN, I16_MAX + 1, size=shape, dtype=np.int64).astype(np.int16)


def activation_s16(g):
    if g.chance(0.5):
        return I16_MIN, I16_MAX
    lo = g.int(I16_MIN, I16_MAX)
    return lo, g.int(lo, I16_MAX)


def quant_s16(g, typical_scale):
    """(multiplier, shift) with shift in [-31, 7], the 64-bit requantization's
    range: usually from a real scale, sometimes at the extremes (multipliers
    that REDUCE_MULTIPLIER holds at 0x7FFF, negative ones, 0)."""
    k = g.int(0, 9)
    if k == 0:
        return g.choice([0x7FFF0000, (1 << 31) - 1, 0x7FFEFFFF, 1 << 30, 0, -(1 << 31), -1, 1 << 15,
                         (1 << 15) - 1, g.int(-(1 << 31), (1 << 31) - 1)]), g.int(-31, 7)
    if k == 1:
        return g.int(1 << 30, (1 << 31) - 1), g.choice([-31, -30, 7, 6, 0, -1, 1])
    m, sh = ref.quantize_multiplier(typical_scale * 2.0 ** g.rng.uniform(-1.5, 1.5))
    return m, max(-31, min(7, sh))


def per_channel_s16(g, count, typical_scale):
    pairs = [quant_s16(g, typical_scale) for _ in range(count)]
    return np.array([m for m, _ in pairs], np.int32), np.array([sh for _, sh in pairs], np.int32)


def bias_s64(g, count, magnitude):
    """int64 bias: usually small, sometimes at CMSIS-NN's +-2^47 domain edge,
    sometimes at the int64 extremes (saturated at +-(2^48 - 1))."""
    kind = g.int(0, 9)
    if kind == 0:
        return g.rng.choice(np.array([(1 << 47) - 1, -(1 << 47), (1 << 48) - 1, -(1 << 48), 1 << 48,
                                      INT64_MIN, INT64_MAX, 0], np.int64), size=count)
    if kind == 1:
        return g.rng.integers(-(1 << 47), 1 << 47, size=count, dtype=np.int64)
    return g.rng.integers(-magnitude, magnitude + 1, size=count, dtype=np.int64)


def s16_scale(taps):
    """Maps a sum of `taps` int16 * int8 products to roughly +-10000."""
    return 10000.0 / (18900.0 * 74.0 * math.sqrt(max(taps, 1)))


def write_conv_s16(w, x, weight, bias, stride, padding, dilation, mults, shifts, amin, amax):
    expected = ref.quantized_conv2d_a16(x, weight, bias, stride, padding, dilation, mults, shifts, amin, amax)
    n, h, wd, cin = x.shape
    cout, kh, kw, cin_g = weight.shape
    oh, ow = expected.shape[1:3]
    ints = [n, h, wd, cin, cout, kh, kw, cin_g, n, oh, ow, cout, stride[0], stride[1], padding[0], padding[1],
            dilation[0], dilation[1], amin, amax, bias is not None]
    w.case("conv_s16", ints, [x, weight, bias, mults, shifts], expected)


def write_depthwise_s16(w, x, weight, bias, stride, padding, dilation, dm, mults, shifts, amin, amax):
    expected = ref.quantized_depthwise_conv2d_a16(x, weight, bias, stride, padding, dilation, dm, mults, shifts,
                                                  amin, amax)
    n, h, wd, cin = x.shape
    _, kh, kw, cout = weight.shape
    oh, ow = expected.shape[1:3]
    ints = [n, h, wd, cin, 1, kh, kw, cout, n, oh, ow, cout, stride[0], stride[1], padding[0], padding[1],
            dilation[0], dilation[1], amin, amax, bias is not None, dm]
    w.case("depthwise_conv_s16", ints, [x, weight, bias, mults, shifts], expected)


def conv_s16_case(g, w, n, h, wd, cin, cout, groups, kernel, stride, padding, dilation, x=None, weight=None):
    kh, kw = kernel
    if ref.conv_output_size(h, kh, stride[0], padding[0], dilation[0]) < 1 or \
            ref.conv_output_size(wd, kw, stride[1], padding[1], dilation[1]) < 1:
        return
    cin_g = cin // groups
    x = i16(g, (n, h, wd, cin)) if x is None else x
    weight = g.i8((cout, kh, kw, cin_g)) if weight is None else weight
    bias = bias_s64(g, cout, 1 << 24) if g.chance(0.8) else None
    mults, shifts = per_channel_s16(g, cout, s16_scale(kh * kw * cin_g))
    amin, amax = activation_s16(g)
    write_conv_s16(w, x, weight, bias, stride, padding, dilation, mults, shifts, amin, amax)


def depthwise_s16_case(g, w, n, h, wd, cin, dm, kernel, stride, padding, dilation):
    kh, kw = kernel
    if ref.conv_output_size(h, kh, stride[0], padding[0], dilation[0]) < 1 or \
            ref.conv_output_size(wd, kw, stride[1], padding[1], dilation[1]) < 1:
        return
    cout = cin * dm
    x = i16(g, (n, h, wd, cin))
    weight = g.i8((1, kh, kw, cout))
    bias = bias_s64(g, cout, 1 << 24) if g.chance(0.8) else None
    mults, shifts = per_channel_s16(g, cout, s16_scale(kh * kw))
    amin, amax = activation_s16(g)
    write_depthwise_s16(w, x, weight, bias, stride, padding, dilation, dm, mults, shifts, amin, amax)


def fully_connected_s16_case(g, w, batches, cin, cout, x=None, weights=None):
    x = i16(g, (batches, cin)) if x is None else x
    weights = g.i8((cout, cin)) if weights is None else weights
    m, sh = quant_s16(g, s16_scale(cin))
    amin, amax = activation_s16(g)
    bias = bias_s64(g, cout, 1 << 24) if g.chance(0.8) else None
    expected = ref.quantized_linear_a16(x, weights, bias, [m], [sh], amax, amin)
    w.case("fully_connected_s16", [batches, cin, cout, m, sh, amin, amax, bias is not None], [x, weights, bias],
           expected)


def make_a16(g, w):
    # conv: random geometry, groups, batches
    h, wd, kh, kw, stride, padding, dilation, _, _ = conv_geometry(g)
    groups = g.choice([1, 1, 1, 2, 3])
    cin_g, cout_g = g.choice([g.int(1, 9), g.int(10, 40)]), g.choice([g.int(1, 7), g.int(8, 24)])
    conv_s16_case(g, w, g.int(1, 3), h, wd, cin_g * groups, cout_g * groups, groups, (kh, kw), stride, padding,
                  dilation)
    # depthwise
    h, wd, kh, kw, stride, padding, dilation, _, _ = conv_geometry(g)
    cin = g.choice([g.int(1, 21), g.int(22, 70)])
    dm = g.choice([1, 1, 2, 3, g.int(1, 8)])
    if g.chance(0.1):
        cin, dm = 1, g.int(1, 40)
    depthwise_s16_case(g, w, 1 if g.chance(0.8) else 2, h, wd, cin, dm, (kh, kw), stride, padding, dilation)
    # fully connected
    fully_connected_s16_case(g, w, g.int(1, 4), g.int(1, 70), g.int(1, 20))
    # add and mul: element-wise or one operand [1,1,1,C], either side
    shape = random_nhwc(g)
    large = i16(g, shape)
    small = i16(g, (1, 1, 1, shape[3]) if g.chance(0.4) else shape)
    swap = g.chance(0.5)
    first, second = (small, large) if swap else (large, small)
    s1, s2 = (2.0 ** g.rng.uniform(-8, 0) for _ in range(2))
    so = max(s1, s2) * 2.0 ** g.rng.uniform(-1, 1.5)
    common = 2.0 * max(s1, s2)
    (m1, sh1), (m2, sh2) = ref.quantize_multiplier(s1 / common), ref.quantize_multiplier(s2 / common)
    mo, sho = ref.quantize_multiplier(common / (so * (1 << 15)))
    if g.chance(0.15):
        (m1, sh1), (m2, sh2), (mo, sho) = g.quant(), g.quant(), g.quant()
    sh1, sh2, sho = (max(-31, min(31, v)) for v in (sh1, sh2, sho))
    amin, amax = activation_s16(g)
    if swap:  # the C function takes (large, small): swap the per-input pairs with them
        expected = ref.quantized_add_a16(first, m2, sh2, second, m1, sh1, mo, sho, amin, amax)
    else:
        expected = ref.quantized_add_a16(first, m1, sh1, second, m2, sh2, mo, sho, amin, amax)
    w.case("add_s16", [m1, sh1, m2, sh2, mo, sho, amin, amax, small.size], [large, small], expected)
    mo, sho = g.quant(2.0 ** g.rng.uniform(-20, -12))
    expected = ref.quantized_mul_a16(first, second, mo, sho)
    w.case("mul_s16", [mo, sho, small.size], [large, small], expected)
    # pooling
    for op in ("avgpool_s16", "maxpool_s16"):
        h, wd, kernel, stride, padding, ceil_mode, oh, ow = pool_geometry(g, op == "avgpool_s16")
        n, c = g.int(1, 2), g.int(1, 19)
        x = i16(g, (n, h, wd, c))
        ints = [n, h, wd, c, n, oh, ow, c, kernel[0], kernel[1], stride[0], stride[1], padding[0], padding[1]]
        if op == "avgpool_s16":
            try:
                expected = ref.quantized_avg_pool2d_a16(x, kernel, stride, padding, ceil_mode, 0, 0)
            except ValueError:
                continue
            w.case(op, ints, [x], expected)
        else:
            amin, amax = activation_s16(g)
            expected = ref.quantized_max_pool2d_a16(x, kernel, stride, padding, (1, 1), False, amin, amax)
            w.case(op, ints + [amin, amax], [x], expected)


def make_a16_edges(g, w):
    # Channel counts around multiples of 4, 8 and 16, pointwise and 3x3.
    for cin in (1, 3, 4, 7, 8, 9, 15, 16, 17, 31, 32, 33):
        cout = g.choice([1, 2, 3, 4, 5, 7, 8, 9, 16, 17])
        conv_s16_case(g, w, g.int(1, 2), g.int(1, 5), g.int(1, 5), cin, cout, 1, (1, 1), (1, 1), (0, 0), (1, 1))
        conv_s16_case(g, w, 1, g.int(3, 6), g.int(3, 6), cin, cout, 1, (3, 3), (g.int(1, 2), g.int(1, 2)),
                      (1, 1), (1, 1))
        depthwise_s16_case(g, w, g.int(1, 2), g.int(1, 6), g.choice([1, 3, 5]), cin, g.choice([1, 1, 2, 4]), (3, 3),
                           (1, 1), (1, 1), (1, 1))
        fully_connected_s16_case(g, w, g.int(1, 3), cin, g.choice([1, 3, 4, 5, 8, 16, 17]))
    # Groups, dilation, padding larger than the kernel's reach.
    for _ in range(8):
        groups = g.choice([1, 2, 4])
        conv_s16_case(g, w, g.int(1, 2), g.int(1, 7), g.choice([1, 3, 5, 7]), groups * g.choice([1, 3, 4, 5, 16]),
                      groups * g.choice([1, 3, 4, 8]), groups, (g.int(1, 4), g.int(1, 4)),
                      (g.int(1, 3), g.int(1, 3)), (g.int(0, 3), g.int(0, 3)), (g.choice([1, 2, 3]), g.choice([1, 2])))
    # Sums past 511 and 512 products of -32768 * -128 = 2^22: the int32
    # partial sums must not wrap (2^31 at exactly 512 such products).
    for k in (511, 512, 513, 1030):
        x = np.full((1, 1, 2, k), I16_MIN, np.int16)
        x[0, 0, 1, :] = I16_MAX
        weight = np.full((3, 1, 1, k), -128, np.int8)
        weight[1, :] = 127
        mults = np.array([1 << 30, 0x7FFF0000, 1 << 30], np.int32)
        shifts = np.array([-31, -31, -20], np.int32)
        write_conv_s16(w, x, weight, None, (1, 1), (0, 0), (1, 1), mults, shifts, I16_MIN, I16_MAX)
        fully_connected_s16_case(g, w, 2, k, 3, x=x.reshape(2, k), weights=weight.reshape(3, k))
    conv_s16_case(g, w, 1, 3, 3, 64, 4, 1, (3, 3), (1, 1), (1, 1), (1, 1))  # K = 576
    # Extreme shifts and biases on a tiny conv: every channel a different pair.
    for shift in (-31, -16, 0, 7):
        x = i16(g, (1, 2, 2, 3))
        weight = g.i8((6, 1, 1, 3))
        bias = np.array([(1 << 47) - 1, -(1 << 47), INT64_MAX, INT64_MIN, (1 << 48), 12345], np.int64)
        mults = np.array([1 << 30, (1 << 31) - 1, 0x7FFF0000, -(1 << 31), 0, 0x7FFEFFFF], np.int32)
        write_conv_s16(w, x, weight, bias, (1, 1), (0, 0), (1, 1), mults, np.full(6, shift, np.int32), I16_MIN,
                       I16_MAX)
    # Element-wise extremes: every pair of int16 extremes, extreme shifts.
    values = np.array([I16_MIN, I16_MIN + 1, -1, 0, 1, I16_MAX - 1, I16_MAX], np.int16)
    a, b = np.meshgrid(values, values)
    a, b = a.reshape(1, 1, 7, 7).copy(), b.reshape(1, 1, 7, 7).copy()
    for mo, sho in ((1 << 30, 0), ((1 << 31) - 1, -15), ((1 << 31) - 1, -31), (-(1 << 31), 31), (1 << 30, 31)):
        w.case("mul_s16", [mo, sho, b.size], [a, b], ref.quantized_mul_a16(a, b, mo, sho))
        w.case("add_s16", [mo, sho, mo, sho, 1 << 30, -1, I16_MIN, I16_MAX, b.size], [a, b],
               ref.quantized_add_a16(a, mo, sho, b, mo, sho, 1 << 30, -1, I16_MIN, I16_MAX))
    # Pools over channel counts around multiples of 4, 8, 16; a big window
    # of -32768s (the average's sum near -2^31 with its nudge).
    for c in (1, 3, 4, 7, 8, 9, 15, 16, 17):
        h, wd = g.int(2, 6), g.int(2, 6)
        kernel = (g.int(1, min(h, 3)), g.int(1, min(wd, 3)))
        padding = (g.int(0, kernel[0] // 2), g.int(0, kernel[1] // 2))
        stride = (g.int(1, 2), g.int(1, 2))
        oh = ref.pool_output_size(h, kernel[0], stride[0], padding[0], False)
        ow = ref.pool_output_size(wd, kernel[1], stride[1], padding[1], False)
        x = i16(g, (1, h, wd, c))
        ints = [1, h, wd, c, 1, oh, ow, c, kernel[0], kernel[1], stride[0], stride[1], padding[0], padding[1]]
        w.case("avgpool_s16", ints, [x], ref.quantized_avg_pool2d_a16(x, kernel, stride, padding, False, 0, 0))
        amin, amax = activation_s16(g)
        w.case("maxpool_s16", ints + [amin, amax], [x],
               ref.quantized_max_pool2d_a16(x, kernel, stride, padding, (1, 1), False, amin, amax))
    for fill in (I16_MIN, I16_MAX):
        x = np.full((1, 128, 64, 1), fill, np.int16)
        x[0, 0, 0, 0] = I16_MIN + 1 if fill == I16_MIN else I16_MAX
        w.case("avgpool_s16", [1, 128, 64, 1, 1, 1, 1, 1, 128, 64, 1, 1, 0, 0], [x],
               ref.quantized_avg_pool2d_a16(x, (128, 64), (1, 1), (0, 0), False, 0, 0))


def make_a16_variant_edges(g, w):
    """What the DSP and Helium variants of the a16 conv, linear and
    depthwise kernels do differently: the DSP dot products sum blocks of
    508 products in int32 (runs across filter rows, blocks across runs),
    Helium eight lanes per step with a predicated tail, the depthwise
    variants keep int32 sums per channel for windows of at most 511 taps
    (four channels per step, then a tail)."""
    # Depthwise, depth multiplier 1, channel counts around 4 and 8, random
    # geometry (padding beyond the kernel's reach: windows without taps).
    for c in (1, 2, 3, 4, 5, 7, 8, 9, 12, 13, 16, 17):
        depthwise_s16_case(g, w, g.int(1, 2), g.int(1, 7), g.int(1, 7), c, 1, (g.int(1, 4), g.int(1, 4)),
                           (g.int(1, 3), g.int(1, 3)), (g.int(0, 4), g.int(0, 4)), (g.choice([1, 2]), g.choice([1, 2])))
    # Depthwise windows of 511 taps (the variants' int32 sums) and 512 (the
    # reference's loop; 2^31 for 512 products of -32768 * -128), whole and
    # clipped by padding. Channels: every product 2^22, every product
    # 32767 * -128 (the most negative), random, 2^22 again, -32768 * 127,
    # 2^22 again (each with its own shift).
    for kh, kw in ((7, 73), (16, 32)):
        cout = 6
        x = np.empty((1, kh, kw, cout), np.int16)
        weight = np.empty((1, kh, kw, cout), np.int8)
        x[..., 0], weight[..., 0] = I16_MIN, -128
        x[..., 1], weight[..., 1] = I16_MAX, -128
        x[..., 2] = i16(g, (1, kh, kw))
        weight[..., 2] = g.i8((1, kh, kw))
        x[..., 3], weight[..., 3] = I16_MIN, -128
        x[..., 4], weight[..., 4] = I16_MIN, 127
        x[..., 5], weight[..., 5] = I16_MIN, -128
        mults = np.array([1 << 30, 1 << 30, 0x7FFF0000, 1 << 30, 1 << 30, 1 << 30], np.int32)
        shifts = np.array([-15, -15, -20, -31, -16, -17], np.int32)
        for padding in ((0, 0), (1, 1)):
            write_depthwise_s16(w, x, weight, None, (1, 1), padding, (1, 1), 1, mults, shifts, I16_MIN, I16_MAX)
    # Dot products across the DSP's block of 508 and its multiples, every
    # product 2^22 (K = 508 sums 2^31 - 2^24 in int32): 1x1 convolutions
    # and linear layers: one pixel (row) of 2^22 products, one of the most
    # negative, 32767 * -128.
    for k in (507, 508, 509, 1016, 1017):
        x = np.full((1, 1, 2, k), I16_MIN, np.int16)
        x[0, 0, 1, :] = I16_MAX
        weight = np.full((3, 1, 1, k), -128, np.int8)
        mults = np.array([1 << 30, 0x7FFF0000, 1 << 30], np.int32)
        shifts = np.array([-15, -16, -25], np.int32)
        write_conv_s16(w, x, weight, None, (1, 1), (0, 0), (1, 1), mults, shifts, I16_MIN, I16_MAX)
        fully_connected_s16_case(g, w, 2, k, 3, x=x.reshape(2, k), weights=weight.reshape(3, k))
    # 3x3 windows whose filter rows are runs of 3 * 171 = 513 products
    # (blocks end inside a run) and whose sum, 1539 * 2^22, needs int64;
    # padding 1 clips the border pixels' runs; random values too.
    for fill in (True, False):
        cin, cout = 171, 5
        if fill:
            x = np.full((1, 3, 4, cin), I16_MIN, np.int16)
            weight = np.full((cout, 3, 3, cin), -128, np.int8)
            weight[1] = 127
        else:
            x = i16(g, (1, 3, 4, cin))
            weight = g.i8((cout, 3, 3, cin))
        mults = np.array([1 << 30, 1 << 30, 0x7FFF0000, 1 << 30, 1 << 30], np.int32)
        shifts = np.array([-17, -17, -18, -31, -20], np.int32)
        write_conv_s16(w, x, weight, None, (1, 1), (1, 1), (1, 1), mults, shifts, I16_MIN, I16_MAX)
    # Output channels of odd count per group (the last of a pair alone),
    # dilated columns (one dot product per tap), runs of 1 .. 17 values.
    for _ in range(12):
        groups = g.choice([1, 1, 2, 3])
        conv_s16_case(g, w, g.int(1, 2), g.int(1, 6), g.int(1, 9), groups * g.int(1, 17), groups * g.int(1, 5), groups,
                      (g.int(1, 3), g.int(1, 3)), (g.int(1, 2), g.int(1, 2)), (g.int(0, 2), g.int(0, 2)),
                      (g.choice([1, 2]), g.choice([1, 1, 2])))
        fully_connected_s16_case(g, w, g.int(1, 3), g.int(1, 40), g.int(1, 9))


def make_softmax_s16(g, w):
    rows, size = g.int(1, 6), g.choice([1, 2, g.int(1, 40), g.int(1, 300)])
    x = i16(g, (rows, size))
    if g.chance(0.5):  # a narrow spread gives non-trivial probabilities
        x = (g.rng.integers(-3000, 3000, size=(rows, size)) + g.int(-20000, 20000)).astype(np.int16)
    exp_lut, one_lut = ref.softmax_s16_tables()
    if g.chance(0.15):  # any table: the int16 wraps of the interpolation
        exp_lut = g.rng.integers(I16_MIN, I16_MAX + 1, size=513, dtype=np.int64).astype(np.int16)
        one_lut = g.rng.integers(I16_MIN, I16_MAX + 1, size=513, dtype=np.int64).astype(np.int16)
    m, sh = ref.quantize_multiplier(2.0 ** g.rng.uniform(-12, -4) * 65535 / 10.0)
    if g.chance(0.1):
        m, sh = g.quant()
    expected = ref.softmax_a16(x, -1, m, sh, exp_lut, one_lut)
    w.case("softmax_s16", [rows, size, m, sh], [x, exp_lut, one_lut], expected)


def make_softmax_s16_edges(g, w):
    """Rows whose maximum dominates, where the last narrowing rounds to
    32768 and saturates (CMSIS-NN would wrap it to -1.0): rows of one value,
    rows with every other value at the far end of the int16 range, rows of
    equal values; at the multipliers the compiler picks."""
    exp_lut, one_lut = ref.softmax_s16_tables()
    for size in (1, 2, 3, 17):
        for fill in ("one", "extreme", "equal"):
            rows = g.int(1, 4)
            x = np.full((rows, size), g.int(I16_MIN, I16_MAX), np.int16)
            if fill == "extreme":
                x[:, 0] = I16_MAX
                x[:, 1:] = I16_MIN
            m, sh = ref.quantize_multiplier(2.0 ** g.rng.uniform(-12, -4) * 65535 / 10.0)
            expected = ref.softmax_a16(x, -1, m, sh, exp_lut, one_lut)
            w.case("softmax_s16", [rows, size, m, sh], [x, exp_lut, one_lut], expected)


def make_softmax_masked(g, w):
    """ptec's masked softmax: random masks (some rows fully masked, some
    with one position left), mask_rows dividing the rows."""
    mask_rows = g.int(1, 4)
    rows, size = mask_rows * g.int(1, 3), g.choice([1, 2, g.int(1, 24), g.int(1, 64)])
    x = g.i8((rows, size))
    if g.chance(0.5):  # a narrow spread gives non-trivial probabilities
        x = (g.rng.integers(-20, 20, size=(rows, size)) + g.int(-100, 100)).astype(np.int8)
    mask = g.rng.random((mask_rows, size)) < g.rng.uniform(0.0, 0.9)
    if g.chance(0.2):
        mask[g.int(0, mask_rows - 1)] = True
    scale = 2.0 ** g.rng.uniform(-8, 0)
    mult, shift, diff_min = ref.softmax_parameters(scale)
    if g.chance(0.1):
        diff_min = -g.int(0, 255)
    expected = ref.quantized_softmax_masked(x, mask, mult, shift, diff_min)
    w.case("softmax_masked", [rows, size, mask_rows, mult, shift, diff_min], [x, mask.astype(np.uint8)], expected)


def make_a16_dsp_edges(g, w):
    """What the DSP int16 mul and average pool do differently: mul takes
    pairs (SMULBB, SMULTT) with an odd element alone at the end of each
    broadcast period; the pool sums two channels per word, then an odd
    last channel alone, over windows clipped at every edge."""
    for c in (1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 16, 17):
        shape = (g.int(1, 2), g.int(1, 4), g.int(1, 5), c)
        large = i16(g, shape)
        for small in (i16(g, shape), i16(g, (1, 1, 1, c))):
            first, second = (small, large) if g.chance(0.3) else (large, small)
            mo, sho = g.quant(2.0 ** g.rng.uniform(-20, -12))
            w.case("mul_s16", [mo, sho, small.size], [large, small], ref.quantized_mul_a16(first, second, mo, sho))
        h, wd = g.int(1, 7), g.int(1, 7)
        kernel = (g.int(1, min(h, 4)), g.int(1, min(wd, 4)))
        padding = (g.int(0, kernel[0] // 2), g.int(0, kernel[1] // 2))
        stride = (g.int(1, 3), g.int(1, 3))
        ceil_mode = g.chance(0.4)
        oh = ref.pool_output_size(h, kernel[0], stride[0], padding[0], ceil_mode)
        ow = ref.pool_output_size(wd, kernel[1], stride[1], padding[1], ceil_mode)
        x = i16(g, (g.int(1, 2), h, wd, c))
        try:
            expected = ref.quantized_avg_pool2d_a16(x, kernel, stride, padding, ceil_mode, 0, 0)
        except ValueError:
            continue
        n = x.shape[0]
        w.case("avgpool_s16", [n, h, wd, c, n, oh, ow, c, kernel[0], kernel[1], stride[0], stride[1], padding[0],
                               padding[1]], [x], expected)
    # Whole-image windows of 4096 positions of one extreme (one value off),
    # five channels: the two-channel steps and the odd one, sums near -2^27.
    for fill in (I16_MIN, I16_MAX):
        x = np.full((1, 64, 64, 5), fill, np.int16)
        x[0, 0, 0, :] = I16_MIN + 1 if fill == I16_MIN else I16_MAX - 1
        w.case("avgpool_s16", [1, 64, 64, 5, 1, 1, 1, 5, 64, 64, 1, 1, 0, 0], [x],
               ref.quantized_avg_pool2d_a16(x, (64, 64), (1, 1), (0, 0), False, 0, 0))
    # Products of the int16 extremes in both halves of a word, odd lengths.
    values = np.array([I16_MIN, I16_MIN + 1, -1, 0, 1, I16_MAX - 1, I16_MAX], np.int16)
    a, b = np.meshgrid(values, values)
    a, b = a.reshape(1, 1, 1, 49).copy(), b.reshape(1, 1, 1, 49).copy()
    for mo, sho in ((1 << 30, 0), ((1 << 31) - 1, -15), (-(1 << 31), -14)):
        w.case("mul_s16", [mo, sho, b.size], [a, b], ref.quantized_mul_a16(a, b, mo, sho))


def generate(cases, seed):
    g = Gen(seed)
    w = Writer()
    for _ in range(cases):
        make_quantize(g, w, 8)
        make_quantize(g, w, 16)
        make_add_mul(g, w, "add")
        make_add_mul(g, w, "mul")
        make_div(g, w, 8)
        make_div(g, w, 16)
        make_lut(g, w)
        make_min_max(g, w, "minimum")
        make_min_max(g, w, "maximum")
        make_fully_connected(g, w)
        make_conv(g, w)
        make_depthwise(g, w)
        make_transpose_conv(g, w)
        make_batch_matmul(g, w)
        make_pool(g, w, "avgpool")
        make_pool(g, w, "maxpool")
        make_softmax(g, w)
        make_transpose(g, w)
        make_pad(g, w)
    s4 = Gen(seed + 2)  # its own stream: the other operators' cases stay as they were
    for _ in range(cases):
        make_conv_s4(s4, w)
        make_fully_connected_s4(s4, w)
    make_variant_edges(Gen(seed + 1), w)
    make_s4_edges(Gen(seed + 3), w)
    g16 = Gen(seed + 2)  # the streams the a16 cases were made with (they fit the boards' 256 KB case arena)
    for _ in range(cases):
        make_a16(g16, w)
    make_a16_edges(g16, w)
    g16s = Gen(seed + 3)  # softmax came later: its own stream keeps the other a16 cases as they were
    for _ in range(cases):
        make_softmax_s16(g16s, w)
    gm = Gen(seed + 4)  # the masked softmax: its own stream, after every earlier case
    for _ in range(min(cases, 100)):
        make_softmax_masked(gm, w)
    make_a16_variant_edges(Gen(seed + 5), w)  # the DSP and Helium a16 variants' edges, a stream of their own
    make_a16_dsp_edges(Gen(seed + 6), w)  # the DSP a16 mul and average pool, a stream of their own
    gi = Gen(seed + 7)  # the in-place convolutions: their own stream, after every earlier case
    for _ in range(min(cases, 100)):
        make_in_place(gi, w)
    make_softmax_s16_edges(Gen(seed + 8), w)  # the int16 softmax's saturation: its own stream
    make_fold_edges(Gen(seed + 9), w)  # the DSP gemm's folded requantization: its own stream
    gd = Gen(seed + 10)  # the packed 4-bit depthwise: its own stream, after every earlier case
    for _ in range(min(cases, 100)):
        make_depthwise_s4(gd, w)
    make_depthwise_s4_edges(gd, w)
    return w


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--harness")
    parser.add_argument("--qemu-target", choices=CORES)
    parser.add_argument("--firmware", help="ptec_kernel_vectors.elf for --qemu-target")
    parser.add_argument("--cases", type=int, default=200, help="cases per operator")
    parser.add_argument("--seed", type=int, default=20261121)
    parser.add_argument("--keep", help="also write the case file here")
    args = parser.parse_args()
    if bool(args.harness) == bool(args.qemu_target) or (args.qemu_target and not args.firmware):
        parser.error("give either --harness, or --qemu-target with --firmware")

    start = time.time()
    writer = generate(args.cases, args.seed)
    data = writer.data()
    generated = time.time() - start
    if args.keep:
        with open(args.keep, "wb") as f:
            f.write(data)
    with tempfile.NamedTemporaryFile(suffix=".bin", delete=False) as f:
        f.write(data)
        path = f.name
    if args.qemu_target:
        root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
        command = [os.path.join(root, "scripts", "run_qemu.sh"), "--target", args.qemu_target, "--elf",
                   args.firmware, "--model", path, "--timeout", "300"]
    else:
        command = [args.harness, path]
    try:
        result = subprocess.run(command, capture_output=True, text=True)
    finally:
        os.unlink(path)
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)
    total = sum(writer.counts.values())
    print("kernel_vectors: %d cases (%s), generated in %.1f s, harness exit %d" % (
        total, ", ".join("%s %d" % kv for kv in sorted(writer.counts.items())), generated,
        result.returncode))
    return 0 if result.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
