"""numpy reference for the `cortex_m::` int8 operators (cortex-m-ops.md).

Every function takes plain numpy arrays and the parameters a .pte carries
for the operator, in schema order, and returns the output array. Layout
conventions follow the .pte's physical bytes:

* 4-D activations are NHWC arrays (the .pte's channels-last bytes);
* weights are already in the physical order of spec §1.3 (conv: OHWI,
  depthwise: [1,KH,KW,Cout], transpose conv: OHWI, linear: [out, in],
  batch matmul: rhs transposed [B,N,K]);
* everything else is a contiguous array of its logical shape.

Integer arithmetic is done in int64 and wrapped to int32 exactly where the
spec says the target wraps. Float arithmetic is float32, as on the target.
"""

import math

import numpy as np

INT32_MIN = -(1 << 31)
INT32_MAX = (1 << 31) - 1


# ---------------------------------------------------------------------------
# AOT parameter helpers (spec §1.5, §3.3, §3.15)

def quantize_multiplier(real_scale):
    """(multiplier, shift) with real_scale ~= multiplier * 2**(shift - 31)."""
    if real_scale == 0:
        return 0, 0
    mantissa, exponent = math.frexp(real_scale)
    multiplier = int(round(mantissa * (1 << 31)))
    if multiplier == 1 << 31:
        multiplier = 1 << 30
        exponent += 1
    return multiplier, exponent


def add_parameters(scale_1, scale_2, scale_out):
    """The three (multiplier, shift) pairs of quantized_add."""
    common = 2.0 * max(scale_1, scale_2)
    return (quantize_multiplier(scale_1 / common), quantize_multiplier(scale_2 / common),
            quantize_multiplier(common / (scale_out * (1 << 20))))


def softmax_parameters(input_scale):
    """(multiplier, shift, diff_min) of softmax for an input scale."""
    multiplier, shift = quantize_multiplier(min(input_scale * (1 << 26), float(INT32_MAX)))
    diff_min = -math.floor(31 * (1 << 26) / (1 << shift))
    return multiplier, shift, diff_min


# ---------------------------------------------------------------------------
# Integer primitives (spec §1.6, §3.15)

def wrap32(x):
    """Reduce to 32-bit two's complement."""
    x = np.asarray(x, dtype=np.int64)
    return ((x + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def round_shift(x, exponent):
    """x / 2**exponent rounded half away from zero (exponent >= 0)."""
    x = np.asarray(x, dtype=np.int64)
    exponent = np.asarray(exponent, dtype=np.int64)
    mask = (np.int64(1) << exponent) - 1
    floor = x >> exponent
    remainder = x & mask
    threshold = (mask >> 1) + (x < 0)
    return np.where(exponent == 0, x, floor + (remainder > threshold))


def requantize(value, multiplier, shift):
    """CMSIS-NN's arm_nn_requantize: two roundings, as spec §1.6."""
    value = np.asarray(value, dtype=np.int64)
    multiplier = np.asarray(multiplier, dtype=np.int64)
    shift = np.asarray(shift, dtype=np.int64)
    left = np.maximum(shift, 0)
    right = np.maximum(-shift, 0)
    shifted = wrap32(value << left)
    high = wrap32((shifted * multiplier + (1 << 30)) >> 31)
    return round_shift(high, right)


def saturating_doubling_high_mul(a, b):
    """H(a, b) of spec §3.15: round(a*b / 2**31), ties away from zero."""
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    product = a * b
    nudged = product + np.where(product >= 0, 1 << 30, 1 - (1 << 30))
    quotient = np.where(nudged >= 0, nudged >> 31, -((-nudged) >> 31))
    return np.where((a == INT32_MIN) & (b == INT32_MIN), INT32_MAX, quotient)


_EXP_OF_QUARTER_POWERS = [1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242]


def exp_on_negative_values(v):
    """exp(v / 2**26) in Q0.31 for v <= 0."""
    v = np.asarray(v, dtype=np.int64)
    H = saturating_doubling_high_mul
    f = (v & ((1 << 24) - 1)) - (1 << 24)
    rem = f - v
    x = f * 32 + (1 << 28)
    x2 = H(x, x)
    x3 = H(x2, x)
    x4 = H(x2, x2)
    poly = wrap32(x + round_shift(wrap32(H(wrap32(round_shift(x4, 2) + x3), 715827883) + x2), 1))
    r = wrap32(1895147668 + H(1895147668, poly))
    for k, constant in enumerate(_EXP_OF_QUARTER_POWERS):
        r = np.where((rem >> (24 + k)) & 1 == 1, H(r, constant), r)
    return np.where(v == 0, INT32_MAX, r)


def _saturating_left_shift(v, exponent):
    limit = (1 << (31 - exponent)) - 1
    return np.where(v > limit, INT32_MAX, np.where(v < -limit, INT32_MIN, v << exponent))


def one_over_one_plus_x(v):
    """1 / (1 + v/2**31) in Q0.31 for v in [0, 2**31)."""
    H = saturating_doubling_high_mul
    s = np.int64(v) + INT32_MAX
    half = (s + 1) // 2 if s + 1 >= 0 else -((-(s + 1)) // 2)
    y = wrap32(1515870810 + H(half, -1010580540))
    for _ in range(3):
        error = wrap32((1 << 29) - H(half, y))
        y = wrap32(y + _saturating_left_shift(H(y, error), 2))
    return _saturating_left_shift(y, 1)


def _output_stage(acc, multiplier, shift, output_offset, act_min, act_max):
    y = requantize(acc, multiplier, shift) + output_offset
    return np.clip(y, act_min, act_max).astype(np.int8)


# ---------------------------------------------------------------------------
# quantize / dequantize (§3.1, §3.2)

def quantize_per_tensor(x, scale, zero_point, quant_min, quant_max, dtype=1):
    """float32 -> int8 (dtype 1) or int16 (dtype 2)."""
    x = np.asarray(x, dtype=np.float32)
    inverse = np.float32(1.0) / np.float32(scale)
    with np.errstate(over="ignore", invalid="ignore"):
        rounded = np.rint((inverse * x).astype(np.float32))
    rounded = np.where(np.isnan(rounded), np.float32(0), rounded)
    rounded = np.clip(rounded.astype(np.float64), -2.0 ** 40, 2.0 ** 40).astype(np.int64)
    q = np.clip(rounded + zero_point, quant_min, quant_max)
    return q.astype(np.int8 if dtype == 1 else np.int16)


def dequantize_per_tensor(q, scale, zero_point, quant_min, quant_max, dtype=1):
    q = np.asarray(q)
    return (q.astype(np.int32) - np.int32(zero_point)).astype(np.float32) * np.float32(scale)


# ---------------------------------------------------------------------------
# element-wise (§3.3 - §3.7)

def quantized_add(x1, zp1, mult1, shift1, x2, zp2, mult2, shift2,
                  output_zero_point, output_multiplier, output_shift, act_min, act_max):
    """x1, x2: same shape, or NHWC arrays where one is [1,1,1,C] (or [C])."""
    a = requantize((np.asarray(x1, np.int64) - zp1) << 20, mult1, shift1)
    b = requantize((np.asarray(x2, np.int64) - zp2) << 20, mult2, shift2)
    return _output_stage(wrap32(a + b), output_multiplier, output_shift, output_zero_point,
                         act_min, act_max)


def quantized_mul(x1, zp1, x2, zp2, output_zero_point, output_multiplier, output_shift):
    product = (np.asarray(x1, np.int64) - zp1) * (np.asarray(x2, np.int64) - zp2)
    return _output_stage(product, output_multiplier, output_shift, output_zero_point, -128, 127)


def quantized_div(x1, zp1, x2, zp2, output_zero_point, output_scale):
    """int8 or int16 (same dtype in and out); float32 arithmetic."""
    x1 = np.asarray(x1)
    info = np.iinfo(x1.dtype)
    num = (x1.astype(np.int64) - zp1).astype(np.float32)
    den = (np.asarray(x2).astype(np.int64) - zp2).astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        quotient = np.where(den != 0, num / np.where(den != 0, den, np.float32(1)), np.float32(0))
        scaled = (quotient.astype(np.float32) * np.float32(output_scale)).astype(np.float32)
    # roundf: half away from zero; exact in float64 for any float32 value
    wide = scaled.astype(np.float64)
    rounded = (np.sign(wide) * np.floor(np.abs(wide) + 0.5)).astype(np.float32)
    y = (rounded + np.float32(output_zero_point)).astype(np.float32)
    return np.clip(y.astype(np.float64), info.min, info.max).astype(x1.dtype)


def quantized_activation(x, lut):
    lut = np.asarray(lut, dtype=np.int8).reshape(256)
    return lut[np.asarray(x, np.int64) + 128]


def minimum(a, b):
    return np.minimum(np.asarray(a, np.int8), np.asarray(b, np.int8))


def maximum(a, b):
    return np.maximum(np.asarray(a, np.int8), np.asarray(b, np.int8))


# ---------------------------------------------------------------------------
# linear, matmul (§3.8, §3.12)

def quantized_linear(x, weights, bias, kernel_sum, input_offset, filter_offset, output_offset,
                     requantize_multipliers, requantize_shifts, activation_max, activation_min):
    """x: [..., in]; weights [out, in]; bias or kernel_sum (or neither) may be None."""
    x = np.asarray(x, np.int64)
    w = np.asarray(weights, np.int64) + filter_offset
    if kernel_sum is not None:
        acc = np.asarray(kernel_sum, np.int64).reshape(-1) + x @ w.T
    else:
        acc = (x + input_offset) @ w.T
        if bias is not None:
            acc = acc + np.asarray(bias, np.int64)
    return _output_stage(wrap32(acc), requantize_multipliers[0], requantize_shifts[0],
                         output_offset, activation_min, activation_max)


# ---------------------------------------------------------------------------
# 4-bit packed weights (`ptec::*_w4`, docs/kernels.md): CMSIS-NN's s4 format

def unpack_int4(packed, count):
    """The `count` int4 values of `packed`: element 2i is byte i's low
    nibble, element 2i+1 its high nibble, each sign-extended."""
    b = np.asarray(packed, np.uint8).reshape(-1).astype(np.int16)
    if b.size != (count + 1) // 2:
        raise ValueError(f"{b.size} packed bytes for {count} int4 values")
    nibbles = np.empty(2 * b.size, np.int16)
    nibbles[0::2] = b & 0xF
    nibbles[1::2] = b >> 4
    nibbles[nibbles > 7] -= 16
    return nibbles[:count].astype(np.int8)


def quantized_conv2d_w4(x, weight, weight_sizes, bias, stride, padding, dilation, input_offset,
                        output_offset, requantize_multipliers, requantize_shifts, activation_min,
                        activation_max):
    """quantized_conv2d with the OHWI weight packed two int4 values a byte."""
    w = unpack_int4(weight, int(np.prod(weight_sizes))).reshape([int(v) for v in weight_sizes])
    return quantized_conv2d(x, w, bias, stride, padding, dilation, input_offset, output_offset,
                            requantize_multipliers, requantize_shifts, activation_min, activation_max)


def quantized_depthwise_conv2d_w4(x, weight, weight_sizes, bias, stride, padding, dilation, depth_multiplier,
                                  input_offset, output_offset, requantize_multipliers, requantize_shifts,
                                  activation_min, activation_max):
    """quantized_depthwise_conv2d with the IHWO weight [1, KH, KW, Cout]
    flattened and packed two int4 values a byte (CMSIS-NN's
    arm_depthwise_conv_s4 layout)."""
    w = unpack_int4(weight, int(np.prod(weight_sizes))).reshape([int(v) for v in weight_sizes])
    return quantized_depthwise_conv2d(x, w, bias, stride, padding, dilation, depth_multiplier, input_offset,
                                      output_offset, requantize_multipliers, requantize_shifts, activation_min,
                                      activation_max)


def quantized_linear_w4(x, weights, weight_sizes, bias, input_offset, output_offset,
                        requantize_multipliers, requantize_shifts, activation_max, activation_min):
    """quantized_linear with the [out, in] weights packed two int4 values a
    byte, a bias and no filter offset."""
    w = unpack_int4(weights, int(np.prod(weight_sizes))).reshape([int(v) for v in weight_sizes])
    return quantized_linear(x, w, bias, None, input_offset, 0, output_offset, requantize_multipliers,
                            requantize_shifts, activation_max, activation_min)


# ---------------------------------------------------------------------------
# int8 layer norm (`ptec::quantized_layer_norm`, docs/kernels.md)

def _isqrt(v):
    """floor(sqrt(v)) of non-negative Python ints, elementwise."""
    return np.array([math.isqrt(int(a)) for a in np.ravel(v)], np.int64).reshape(np.shape(v))


def quantized_layer_norm(x, normalized_numel, input_zero_point, eps_term, requantize_multipliers,
                         requantize_shifts, bias, output_zero_point, activation_min, activation_max):
    """Rows of normalized_numel int8 values: the normalized value
    (n*d - sum d) / floor(sqrt(n*sum d^2 - (sum d)^2 + eps_term)) in Q16,
    rounded half away from zero, requantized per element, plus bias[i] and
    the output zero point, clamped."""
    n = int(normalized_numel)
    x = np.asarray(x, np.int64)
    d = x.reshape(-1, n) - int(input_zero_point)
    s1 = d.sum(axis=1, keepdims=True)
    v = n * (d * d).sum(axis=1, keepdims=True) - s1 * s1 + int(eps_term)
    r = np.maximum(_isqrt(v), 1)
    num = (n * d - s1) * (1 << 16)
    t = np.sign(num) * ((np.abs(num) + r // 2) // r)       # half away from zero
    q = requantize(t, np.asarray(requantize_multipliers, np.int64).reshape(1, n),
                   np.asarray(requantize_shifts, np.int64).reshape(1, n))
    y = q + np.asarray(bias, np.int64).reshape(1, n) + int(output_zero_point)
    return np.clip(y, activation_min, activation_max).astype(np.int8).reshape(x.shape)


# ---------------------------------------------------------------------------
# SVDF (`ptec::quantized_svdf`, docs/kernels.md "SVDF"): TFLite's SVDF with
# an int8 state and int8 time weights (CMSIS-NN arm_svdf_s8's numerics)

def svdf_frames(x, weights_feature, weights_time, bias, state, rank, input_offset, feature_multiplier,
                feature_shift, output_offset, output_multiplier, output_shift, activation_min,
                activation_max):
    """(output [frames, units] int8, the state after the last frame).
    Per frame: the state's columns age by one (column m takes column m+1),
    the newest column is the feature filter's requantized output (zero
    point 0, clamped to int8), each unit sums its rank rows' time-filter
    dot products and its bias (int32, wrapping), requantized to the output."""
    wf = np.asarray(weights_feature, np.int64)
    wt = np.asarray(weights_time, np.int64)
    rows, size = wf.shape
    units = rows // int(rank)
    frames = np.asarray(x, np.int64).reshape(-1, size)
    s = np.asarray(state, np.int64).reshape(rows, wt.shape[1]).copy()
    b = np.zeros(units, np.int64) if bias is None else np.asarray(bias, np.int64).reshape(units)
    out = np.zeros((frames.shape[0], units), np.int64)
    for t, frame in enumerate(frames):
        feature = wf @ (frame + int(input_offset))
        s = np.concatenate([s[:, 1:], np.clip(requantize(feature, feature_multiplier, feature_shift),
                                               -128, 127)[:, None]], axis=1)
        per_row = (wt * s).sum(axis=1)
        acc = wrap32(per_row.reshape(units, int(rank)).sum(axis=1) + b)
        out[t] = np.clip(requantize(acc, output_multiplier, output_shift) + int(output_offset),
                         activation_min, activation_max)
    return out.astype(np.int8), s.astype(np.int8)


def quantized_svdf(x, weights_feature, weights_time, bias, activation_state, rank, input_offset,
                   feature_multiplier, feature_shift, output_offset, output_multiplier, output_shift,
                   activation_min, activation_max, reset_state):
    """The output of ptec::quantized_svdf: from a zero state when
    reset_state, else from activation_state as given."""
    state = np.zeros_like(np.asarray(activation_state)) if reset_state else activation_state
    y, _ = svdf_frames(x, weights_feature, weights_time, bias, state, rank, input_offset, feature_multiplier,
                       feature_shift, output_offset, output_multiplier, output_shift, activation_min,
                       activation_max)
    return y


def kernel_sum_from_bias(weights, bias, input_offset, filter_offset=0):
    """The MVE export's kernel_sum [1, out] for a bias (may be None)."""
    w = np.asarray(weights, np.int64) + filter_offset
    sums = input_offset * w.sum(axis=1)
    if bias is not None:
        sums = sums + np.asarray(bias, np.int64)
    return wrap32(sums).astype(np.int32).reshape(1, -1)


def quantized_batch_matmul(lhs, lhs_zero_point, rhs_transposed, rhs_zero_point,
                           output_zero_point, output_multiplier, output_shift):
    """lhs [B,M,K], rhs_transposed [B,N,K]; the 'zero points' are offsets (added)."""
    a = np.asarray(lhs, np.int64) + lhs_zero_point
    b = np.asarray(rhs_transposed, np.int64) + rhs_zero_point
    acc = np.einsum("bmk,bnk->bmn", a, b)
    return _output_stage(wrap32(acc), output_multiplier, output_shift, output_zero_point, -128, 127)


# ---------------------------------------------------------------------------
# convolutions (§3.9 - §3.11)

def conv_output_size(size, kernel, stride, padding, dilation):
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def _shifted_input(x, input_offset, padding, extent_h, extent_w):
    """x + input_offset with real-zero padding, big enough for extent_h x extent_w."""
    n, h, w, c = x.shape
    ph, pw = padding
    canvas = np.zeros((n, max(extent_h, h + ph), max(extent_w, w + pw), c), dtype=np.int64)
    canvas[:, ph:ph + h, pw:pw + w, :] = np.asarray(x, np.int64) + input_offset
    return canvas


def _conv_taps(x, input_offset, kh, kw, stride, padding, dilation, depth_multiplier=1):
    """The output height and width, and for each tap (ky, kx) the [N, OH, OW, C] slice of
    x + input_offset (real-zero padding) it multiplies; channel o of a depthwise
    conv reads input channel o // depth_multiplier."""
    _, h, w, _ = x.shape
    sh, sw = stride
    dh, dw = dilation
    oh = conv_output_size(h, kh, sh, padding[0], dh)
    ow = conv_output_size(w, kw, sw, padding[1], dw)
    xs = _shifted_input(x, input_offset, padding, (oh - 1) * sh + dh * (kh - 1) + 1,
                        (ow - 1) * sw + dw * (kw - 1) + 1)
    xs = np.repeat(xs, depth_multiplier, axis=3)
    taps = [(ky, kx, xs[:, ky * dh: ky * dh + (oh - 1) * sh + 1: sh,
                        kx * dw: kx * dw + (ow - 1) * sw + 1: sw, :])
            for ky in range(kh) for kx in range(kw)]
    return oh, ow, taps


def _conv_output(acc, bias, requantize_multipliers, requantize_shifts, output_offset,
                 activation_min, activation_max):
    """Bias, then the per-channel output stage of §3.9 - §3.11."""
    if bias is not None:
        acc = acc + np.asarray(bias, np.int64)
    return _output_stage(wrap32(acc), np.asarray(requantize_multipliers),
                         np.asarray(requantize_shifts), output_offset, activation_min,
                         activation_max)


def _conv_acc(x, weight, input_offset, stride, padding, dilation) -> np.ndarray:
    """The int64 accumulator [N, OH, OW, Cout] of a grouped conv: x NHWC
    (offset by input_offset), weight OHWI [Cout, KH, KW, Cin/groups]."""
    n, _, _, cin = x.shape
    cout, kh, kw, cin_g = weight.shape
    groups = cin // cin_g
    cout_g = cout // groups
    oh, ow, taps = _conv_taps(x, input_offset, kh, kw, stride, padding, dilation)
    wt = np.asarray(weight, np.int64)
    acc = np.zeros((n, oh, ow, cout), dtype=np.int64)
    for ky, kx, patch in taps:
        for g in range(groups):
            acc[..., g * cout_g:(g + 1) * cout_g] += np.einsum(
                "nhwc,oc->nhwo", patch[..., g * cin_g:(g + 1) * cin_g],
                wt[g * cout_g:(g + 1) * cout_g, ky, kx, :])
    return acc


def _depthwise_acc(x, weight, input_offset, stride, padding, dilation, depth_multiplier) -> np.ndarray:
    """The int64 accumulator [N, OH, OW, Cout] of a depthwise conv: x NHWC
    (offset by input_offset), weight [1, KH, KW, Cout], Cout = Cin * depth_multiplier."""
    n = x.shape[0]
    _, kh, kw, cout = weight.shape
    oh, ow, taps = _conv_taps(x, input_offset, kh, kw, stride, padding, dilation, depth_multiplier)
    wt = np.asarray(weight, np.int64)[0]
    acc = np.zeros((n, oh, ow, cout), dtype=np.int64)
    for ky, kx, patch in taps:
        acc += patch * wt[ky, kx]
    return acc


def quantized_conv2d(x, weight, bias, stride, padding, dilation, input_offset, output_offset,
                     requantize_multipliers, requantize_shifts, activation_min, activation_max):
    """x NHWC int8, weight OHWI [Cout, KH, KW, Cin/groups]; returns NHWC."""
    acc = _conv_acc(x, weight, input_offset, stride, padding, dilation)
    return _conv_output(acc, bias, requantize_multipliers, requantize_shifts, output_offset,
                        activation_min, activation_max)


def quantized_depthwise_conv2d(x, weight, bias, stride, padding, dilation, depth_multiplier,
                               input_offset, output_offset, requantize_multipliers,
                               requantize_shifts, activation_min, activation_max):
    """x NHWC, weight [1, KH, KW, Cout] with Cout = Cin * depth_multiplier."""
    acc = _depthwise_acc(x, weight, input_offset, stride, padding, dilation, depth_multiplier)
    return _conv_output(acc, bias, requantize_multipliers, requantize_shifts, output_offset,
                        activation_min, activation_max)


def quantized_expand_depthwise(x, weight, bias, stride, padding, dilation, input_offset,
                               output_offset, requantize_multipliers, requantize_shifts,
                               activation_min, activation_max, expand_weight, expand_bias,
                               expand_input_offset, expand_output_offset, expand_multipliers,
                               expand_shifts, expand_min, expand_max):
    """ptec's fused inverted-residual pair (docs/kernels.md): the 1x1
    expansion, whole, then the depthwise (multiplier 1) on its int8 output;
    the C kernel never holds the expanded tensor, this oracle does."""
    expanded = quantized_conv2d(x, expand_weight, expand_bias, (1, 1), (0, 0), (1, 1),
                                expand_input_offset, expand_output_offset, expand_multipliers,
                                expand_shifts, expand_min, expand_max)
    return quantized_depthwise_conv2d(expanded, weight, bias, stride, padding, dilation, 1,
                                      input_offset, output_offset, requantize_multipliers,
                                      requantize_shifts, activation_min, activation_max)


def transpose_conv_output_size(size, kernel, stride, padding, output_padding, dilation=1):
    return (size - 1) * stride - 2 * padding + dilation * (kernel - 1) + output_padding + 1


def quantized_transpose_conv2d(x, weight, bias, stride, padding, output_padding, dilation,
                               input_offset, output_offset, requantize_multipliers,
                               requantize_shifts, activation_min, activation_max):
    """x NHWC, weight OHWI [Cout, KH, KW, Cin]; the correct scatter formula of §3.11."""
    n, h, w, cin = x.shape
    cout, kh, kw, _ = weight.shape
    sh, sw = stride
    ph, pw = padding
    dh, dw = dilation
    oh = transpose_conv_output_size(h, kh, sh, ph, output_padding[0], dh)
    ow = transpose_conv_output_size(w, kw, sw, pw, output_padding[1], dw)
    # Scatter onto an unpadded canvas, then crop `padding` off the top/left.
    full_h = max((h - 1) * sh + dh * (kh - 1) + 1, ph + oh)
    full_w = max((w - 1) * sw + dw * (kw - 1) + 1, pw + ow)
    canvas = np.zeros((n, full_h, full_w, cout), dtype=np.int64)
    xo = np.asarray(x, np.int64) + input_offset
    wt = np.asarray(weight, np.int64)
    for ky in range(kh):
        for kx in range(kw):
            contribution = np.einsum("nhwc,oc->nhwo", xo, wt[:, ky, kx, :])
            canvas[:, ky * dh: ky * dh + (h - 1) * sh + 1: sh,
                   kx * dw: kx * dw + (w - 1) * sw + 1: sw, :] += contribution
    return _conv_output(canvas[:, ph:ph + oh, pw:pw + ow, :], bias, requantize_multipliers,
                        requantize_shifts, output_offset, activation_min, activation_max)


# ---------------------------------------------------------------------------
# pooling (§3.13, §3.14)

def pool_output_size(size, kernel, stride, padding, ceil_mode=False):
    numerator = size + 2 * padding - kernel
    out = numerator // stride + 1
    if ceil_mode:
        if numerator % stride != 0:
            out += 1
        if (out - 1) * stride >= size + padding:
            out -= 1
    return out


def _windows(x, kernel, stride, padding, out_h, out_w, fill):
    """Yields (values, inside) slices [N, OH, OW, C] for every kernel tap."""
    n, h, w, c = x.shape
    kh, kw = kernel
    sh, sw = stride
    ph, pw = padding
    ext_h = max(ph + h, (out_h - 1) * sh + kh)
    ext_w = max(pw + w, (out_w - 1) * sw + kw)
    values = np.full((n, ext_h, ext_w, c), fill, dtype=np.int64)
    values[:, ph:ph + h, pw:pw + w, :] = x
    inside = np.zeros((1, ext_h, ext_w, 1), dtype=np.int64)
    inside[:, ph:ph + h, pw:pw + w, :] = 1
    for ky in range(kh):
        for kx in range(kw):
            sl = (slice(None), slice(ky, ky + (out_h - 1) * sh + 1, sh),
                  slice(kx, kx + (out_w - 1) * sw + 1, sw), slice(None))
            yield values[sl], inside[sl]


def _window_average(x, kernel_size, stride, padding, ceil_mode):
    """Per window, the sum of the raw values at in-bounds positions divided
    by their count, rounded half away from zero (both average pools)."""
    n, h, w, c = x.shape
    oh = pool_output_size(h, kernel_size[0], stride[0], padding[0], ceil_mode)
    ow = pool_output_size(w, kernel_size[1], stride[1], padding[1], ceil_mode)
    total = np.zeros((n, oh, ow, c), dtype=np.int64)
    count = np.zeros((1, oh, ow, 1), dtype=np.int64)
    for values, inside in _windows(np.asarray(x, np.int64), kernel_size, stride, padding, oh, ow, 0):
        total += values
        count += inside
    if np.any(count == 0):
        raise ValueError("a pooling window lies entirely in the padding")
    nudged = np.where(total > 0, total + count // 2, total - count // 2)
    quotient = np.sign(nudged) * (np.abs(nudged) // count)  # C division truncates
    return quotient


def _window_maximum(x, kernel_size, stride, padding, ceil_mode):
    """Per window, the largest raw value at an in-bounds position."""
    n, h, w, c = x.shape
    oh = pool_output_size(h, kernel_size[0], stride[0], padding[0], ceil_mode)
    ow = pool_output_size(w, kernel_size[1], stride[1], padding[1], ceil_mode)
    best = np.full((n, oh, ow, c), -1 << 40, dtype=np.int64)
    for values, _ in _windows(np.asarray(x, np.int64), kernel_size, stride, padding, oh, ow,
                              -1 << 40):
        best = np.maximum(best, values)
    return best


def quantized_avg_pool2d(x, kernel_size, stride, padding, ceil_mode, zero_point, multiplier,
                         shift):
    """Averages raw int8 values over in-bounds positions; zero_point, multiplier, shift unused."""
    return np.clip(_window_average(x, kernel_size, stride, padding, ceil_mode), -128, 127).astype(np.int8)


def quantized_max_pool2d(x, kernel_size, stride, padding, dilation, ceil_mode, input_zero_point,
                         output_zero_point, activation_min, activation_max):
    best = _window_maximum(x, kernel_size, stride, padding, ceil_mode)
    return np.clip(best, activation_min, activation_max).astype(np.int8)


# ---------------------------------------------------------------------------
# softmax (§3.15)

def softmax(x, dim, input_zero_point, output_zero_point, input_multiplier, input_shift, diff_min):
    """Softmax over the last dim; output scale 1/256, zero point -128."""
    x = np.asarray(x, np.int64)
    if dim not in (-1, x.ndim - 1):
        raise ValueError("softmax runs over the last dim only")
    rows = x.reshape(-1, x.shape[-1])
    out = np.empty(rows.shape, dtype=np.int8)
    H = saturating_doubling_high_mul
    for r, row in enumerate(rows):
        diff = row - row.max()
        keep = diff >= diff_min
        exps = exp_on_negative_values(H(wrap32(diff << input_shift), input_multiplier))
        total = int(wrap32(np.sum(np.where(keep, round_shift(exps, 12), 0))))
        headroom = 32 - int(total & 0xFFFFFFFF).bit_length()
        fraction = int(wrap32((total << headroom) - (1 << 31)))
        reciprocal = int(one_over_one_plus_x(fraction))
        bits = 12 - headroom + 23
        probs = round_shift(H(reciprocal, exps), bits)
        out[r] = np.where(keep, np.clip(probs - 128, -128, 127), -128)
    return out.reshape(x.shape)


def quantized_softmax_masked(x, mask, input_multiplier, input_shift, diff_min):
    """ptec's masked softmax (docs/kernels.md "masked softmax"), from its
    rule: a masked position is -infinity, so each row's unmasked positions
    get the int8 softmax of the row made of them alone, and masked ones get
    probability 0 (-128); a row with nothing unmasked is all -128. Row r of
    x's [rows, last] view takes mask row r % mask_rows."""
    x = np.asarray(x, np.int64)
    mask = np.asarray(mask).astype(bool)
    rows = x.reshape(-1, x.shape[-1])
    if mask.ndim != 2 or mask.shape[1] != rows.shape[1] or rows.shape[0] % mask.shape[0]:
        raise ValueError("mask must be [mask_rows, row_size] with mask_rows dividing the rows")
    out = np.full(rows.shape, -128, dtype=np.int8)
    for r, row in enumerate(rows):
        keep = ~mask[r % mask.shape[0]]
        if keep.any():
            out[r, keep] = softmax(row[keep], -1, 0, -128, input_multiplier, input_shift, diff_min)
    return out.reshape(x.shape)


# ---------------------------------------------------------------------------
# data movement (§3.16, §3.17)

def transpose(x, perm):
    return np.ascontiguousarray(np.transpose(np.asarray(x, np.int8), perm))


def pad(x, pre_pad, post_pad, pad_value):
    """x in physical order (NHWC for channels-last); pads apply to the 4
    right-aligned physical dims. Returns the 4-D padded array."""
    x = np.asarray(x, np.int8)
    x4 = x.reshape((1,) * (4 - x.ndim) + x.shape)
    widths = [(int(a), int(b)) for a, b in zip(pre_pad, post_pad)]
    return np.pad(x4, widths, mode="constant", constant_values=np.int8(pad_value))


# ---------------------------------------------------------------------------
# 16-bit activations with 8-bit weights: the `ptec::*_a16` operators
# (docs/kernels.md, "16-bit activations"; CMSIS-NN's s16 kernels). int16
# tensors are symmetric (zero point 0), so there are no offsets; the
# conv-family accumulator is exact, plus an int64 bias.

S64_LIMIT = (1 << 48) - 1


def reduce_multiplier(multiplier):
    """CMSIS-NN's REDUCE_MULTIPLIER: the Q31 multiplier rounded to Q15,
    multipliers >= 0x7FFF0000 held at 0x7FFF."""
    m = int(multiplier)
    return (m + (1 << 15)) >> 16 if m < 0x7FFF0000 else 0x7FFF


def requantize_s64(acc, bias, multipliers, shifts, act_min, act_max):
    """acc (int64 [..., C]) + bias (int64 [C] or None), saturated to
    +-(2^48 - 1), times the reduced multiplier / 2^(15 - shift) rounded half
    up (TFLite's MultiplyByQuantizedMultiplier for int64), clamped to the
    activation range; per channel along the last axis. Done in Python ints,
    so that nothing here can overflow."""
    total = np.asarray(acc, np.int64).astype(object)
    if bias is not None:
        total = total + np.asarray(bias, np.int64).reshape(-1).astype(object)
    channels = total.shape[-1]
    mults = np.broadcast_to(np.asarray(multipliers, np.int64).reshape(-1), (channels,))
    shifts = np.broadcast_to(np.asarray(shifts, np.int64).reshape(-1), (channels,))
    if np.any(shifts < -31) or np.any(shifts > 7):
        raise ValueError("shift must be in [-31, 7]")
    reduced = np.array([reduce_multiplier(m) for m in mults], dtype=object)
    right = np.array([15 - int(sh) for sh in shifts], dtype=object)
    half = np.array([1 << (15 - int(sh) - 1) for sh in shifts], dtype=object)
    v = np.minimum(np.maximum(total, -S64_LIMIT), S64_LIMIT)
    r = (v * reduced + half) >> right
    out = np.minimum(np.maximum(r, act_min), act_max).astype(np.int64)
    return out.astype(np.int16)


def quantized_conv2d_a16(x, weight, bias, stride, padding, dilation, requantize_multipliers,
                         requantize_shifts, activation_min, activation_max):
    """x NHWC int16, weight OHWI int8 [Cout, KH, KW, Cin/groups], bias int64."""
    acc = _conv_acc(x, weight, 0, stride, padding, dilation)
    return requantize_s64(acc, bias, requantize_multipliers, requantize_shifts, activation_min,
                          activation_max)


def quantized_depthwise_conv2d_a16(x, weight, bias, stride, padding, dilation, depth_multiplier,
                                   requantize_multipliers, requantize_shifts, activation_min,
                                   activation_max):
    """x NHWC int16, weight [1, KH, KW, Cout] int8, Cout = Cin * depth_multiplier."""
    acc = _depthwise_acc(x, weight, 0, stride, padding, dilation, depth_multiplier)
    return requantize_s64(acc, bias, requantize_multipliers, requantize_shifts, activation_min,
                          activation_max)


def quantized_linear_a16(x, weights, bias, requantize_multipliers, requantize_shifts,
                         activation_max, activation_min):
    """x int16 [..., in]; weights int8 [out, in]; bias int64 [out] or None."""
    x = np.asarray(x, np.int64)
    acc = x @ np.asarray(weights, np.int64).T
    return requantize_s64(acc, bias, requantize_multipliers[0], requantize_shifts[0],
                          activation_min, activation_max)


def quantized_add_a16(x1, mult1, shift1, x2, mult2, shift2, output_multiplier, output_shift,
                      activation_min, activation_max):
    """CMSIS-NN arm_elementwise_add_s16: each input * 2^15 to a common
    scale, summed in (wrapping) int32, requantized and clamped."""
    a = requantize(np.asarray(x1, np.int64) << 15, mult1, shift1)
    b = requantize(np.asarray(x2, np.int64) << 15, mult2, shift2)
    total = requantize(wrap32(a + b), output_multiplier, output_shift)
    return np.clip(total, activation_min, activation_max).astype(np.int16)


def quantized_mul_a16(x1, x2, output_multiplier, output_shift):
    """CMSIS-NN arm_elementwise_mul_s16: the int32 product, requantized."""
    product = np.asarray(x1, np.int64) * np.asarray(x2, np.int64)
    return np.clip(requantize(product, output_multiplier, output_shift), -32768, 32767).astype(np.int16)


def quantized_avg_pool2d_a16(x, kernel_size, stride, padding, ceil_mode, multiplier, shift):
    """Averages raw int16 values over in-bounds positions, rounded half away
    from zero; multiplier and shift unused."""
    return np.clip(_window_average(x, kernel_size, stride, padding, ceil_mode), -32768, 32767).astype(np.int16)


def quantized_max_pool2d_a16(x, kernel_size, stride, padding, dilation, ceil_mode, activation_min,
                             activation_max):
    best = _window_maximum(x, kernel_size, stride, padding, ceil_mode)
    return np.clip(best, activation_min, activation_max).astype(np.int16)


def _wrap16(v):
    """v modulo 2^16 as a signed int16 value (CMSIS-NN's int16 narrowings)."""
    return ((int(v) + 32768) & 0xFFFF) - 32768


def _lut16(lut, v):
    """A 513-entry table at the int16 value v: entry 256 + floor(v / 128),
    plus the (int16) slope to the next entry times (v mod 128) / 128,
    rounded half up, every int16 intermediate wrapping as in CMSIS-NN."""
    index = 256 + (v >> 7)
    offset = v & 0x7F
    slope = _wrap16(int(lut[index + 1]) - int(lut[index]))
    return _wrap16(int(lut[index]) + _wrap16((slope * offset + 64) >> 7))


def softmax_a16(x, dim, input_multiplier, input_shift, exp_lut, one_by_one_lut):
    """CMSIS-NN arm_softmax_s16 over the last dim; output scale 1/32768,
    zero point 0. Rows whose table sum is below 2 (hostile tables only)
    give zeros. Each output saturates to int16 (CMSIS-NN wraps it: a row
    whose maximum dominates can round to 32768, 1.0, which would wrap to
    -1.0)."""
    x = np.asarray(x, np.int64)
    if dim not in (-1, x.ndim - 1):
        raise ValueError("softmax runs over the last dim only")
    exp_lut = [int(v) for v in np.asarray(exp_lut).reshape(-1)]
    one_lut = [int(v) for v in np.asarray(one_by_one_lut).reshape(-1)]
    rows = x.reshape(-1, x.shape[-1])
    out = np.zeros(rows.shape, np.int16)
    for r, row in enumerate(rows):
        scaled = requantize(row - row.max(), input_multiplier, input_shift)
        symmetric = np.clip(wrap32(scaled + 32767), -32768, 32767)
        exps = [_lut16(exp_lut, int(v)) for v in symmetric]
        total = sum(exps)
        if total < 2:
            continue
        headroom = 32 - total.bit_length()
        shifted = ((total << (headroom - 1)) + (1 << 13)) >> 14
        reciprocal = _lut16(one_lut, _wrap16(shifted - 98304))
        out[r] = [min(max(((e * reciprocal >> (30 - headroom)) + 1) >> 1, -32768), 32767) for e in exps]
    return out.reshape(x.shape)


def softmax_s16_tables():
    """513-entry int16 tables of the shape TFLite builds for int16 softmax:
    exp(x) for x in [-10, 0] and 1 / (1 + x) for x in [0, 1], in Q0.15
    (an approximation of TFLite's gen_lut, good enough for tests: kernel
    and reference use the same tables)."""
    steps = np.arange(513) / 512.0
    exp_lut = np.clip(np.round(32767.0 * np.exp(-10.0 + 10.0 * steps)), -32768, 32767).astype(np.int16)
    one_lut = np.clip(np.round(32767.0 / (1.0 + steps)), -32768, 32767).astype(np.int16)
    return exp_lut, one_lut


# ---------------------------------------------------------------------------
# LSTM (docs/kernels.md "LSTM"; CMSIS-NN arm_lstm_unidirectional_s8)

# CMSIS-NN's sigmoid table (arm_nntables.c, sigmoid_table_uint16): about
# 65536 * sigmoid(k / 24), k = 0..255.
LSTM_SIGMOID_TABLE = np.array([
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149, 40794, 41432, 42064, 42688,
    43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369, 47911, 48443, 48964, 49475, 49975, 50464, 50942, 51409,
    51865, 52311, 52745, 53169, 53581, 53983, 54374, 54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433,
    57724, 58007, 58280, 58544, 58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370, 60565, 60753, 60935, 61110,
    61279, 61441, 61599, 61750, 61896, 62036, 62172, 62302, 62428, 62549, 62666, 62778, 62886, 62990, 63090, 63186,
    63279, 63368, 63454, 63536, 63615, 63691, 63765, 63835, 63903, 63968, 64030, 64090, 64148, 64204, 64257, 64308,
    64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652, 64687, 64721, 64754, 64786, 64816, 64845, 64873, 64900,
    64926, 64950, 64974, 64997, 65019, 65039, 65060, 65079, 65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208,
    65221, 65234, 65246, 65258, 65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360, 65367,
    65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433, 65438, 65442, 65445, 65449,
    65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474, 65476, 65479, 65481, 65483, 65485, 65488, 65489, 65491,
    65493, 65495, 65497, 65498, 65500, 65501, 65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513,
    65514, 65515, 65516, 65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522, 65523, 65523, 65524, 65524,
    65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528, 65528, 65528, 65529, 65529, 65529, 65529, 65530, 65530,
    65530, 65530, 65531, 65531, 65531, 65531, 65531, 65532, 65532, 65532, 65532, 65532, 65532, 65533, 65533, 65533,
    65533, 65533, 65533, 65533, 65533, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65535,
], np.int64)


def activation_s16(x, left_shift, tanh):
    """CMSIS-NN arm_nn_activation_s16: sigmoid (or tanh) of the int16 x read
    as Q3.12 after a scaling by 2^left_shift, to Q0.15, by the 256-entry
    table with 9 (sigmoid) or 8 (tanh) fraction bits between entries."""
    x = np.asarray(x, np.int64)
    if left_shift >= 0:
        v = x * (3 << left_shift)
    else:
        r = -left_shift
        v = (3 * x + (1 << (r - 1))) >> r
    bits = 8 if tanh else 9
    m = np.abs(v)
    u = m >> bits
    inside = u < 255
    ui = np.where(inside, u, 0)
    lo = LSTM_SIGMOID_TABLE[ui]
    hi = LSTM_SIGMOID_TABLE[ui + 1]
    frac = m & ((1 << bits) - 1)
    top = (0xFFFF << 8) if tanh else (0x7FFF << 10)
    s = np.where(inside, lo * (1 << bits) + frac * (hi - lo), top)
    if tanh:
        y = np.where(v >= 0, (s - (1 << 23) + 128) // 256, ((1 << 23) - s + 127) // 256)
    else:
        y = np.where(v >= 0, (s + 512) // 1024, ((1 << 25) - s + 511) // 1024)
    return y.astype(np.int64)


def _sat16(v):
    return np.clip(v, -32768, 32767)


def lstm_sequence(x, input_weights, hidden_weights, input_effective_bias, hidden_effective_bias,
                  gate_multipliers, gate_shifts, forget_to_cell_multiplier, forget_to_cell_shift,
                  input_to_cell_multiplier, input_to_cell_shift, output_multiplier, output_shift,
                  cell_clip, cell_scale_power, output_zero_point, batch_first, initial_hidden=None,
                  initial_cell=None):
    """(out int8, final h int8 [B, H], final c int16 [B, H]) of one
    unidirectional LSTM layer: int8 in and out, int16 gates and cell.
    x is [T, I], [T, B, I] or (batch_first) [B, T, I]; gates in PyTorch's
    order i, f, g, o. No initial state: h and c start at zero and the
    hidden term is skipped at t = 0. A given state (both tensors, [B, H]):
    h (on the output's grid) and c (at the cell scale) start from it and
    the hidden term is taken at every step, t = 0 included."""
    if (initial_hidden is None) != (initial_cell is None):
        raise ValueError("quantized_lstm: initial_hidden and initial_cell go together")
    x = np.asarray(x, np.int64)
    wx = np.asarray(input_weights, np.int64)
    wh = np.asarray(hidden_weights, np.int64)
    bx = np.asarray(input_effective_bias, np.int64).reshape(-1)
    bh = np.asarray(hidden_effective_bias, np.int64).reshape(-1)
    mults = np.asarray(gate_multipliers, np.int64).reshape(-1)
    shifts = np.asarray(gate_shifts, np.int64).reshape(-1)
    n = wx.shape[0] // 4
    if x.ndim == 2:
        seq = x[:, None, :]
    elif batch_first:
        seq = np.transpose(x, (1, 0, 2))
    else:
        seq = x
    steps, batches = seq.shape[0], seq.shape[1]
    if initial_hidden is None:
        h0 = [None] * batches
        c0 = np.zeros((batches, n), np.int64)
    else:
        h0 = list(np.asarray(initial_hidden, np.int64).reshape(batches, n))
        c0 = np.asarray(initial_cell, np.int64).reshape(batches, n)
    out = np.zeros((steps, batches, n), np.int64)
    h_final = np.zeros((batches, n), np.int64)
    c_final = np.zeros((batches, n), np.int64)
    clip_hi = cell_clip if cell_clip > 0 else 32767
    clip_lo = -cell_clip if cell_clip > 0 else -32768
    for b in range(batches):
        c = c0[b].copy()
        h = h0[b]
        for t in range(steps):
            gates = []
            for k in range(4):
                rows = slice(k * n, (k + 1) * n)
                acc = wrap32(wx[rows] @ seq[t, b] + bx[rows])
                g = _sat16(requantize(acc, mults[k], shifts[k]))
                if h is not None:
                    acc = wrap32(wh[rows] @ h + bh[rows])
                    g = _sat16(g + requantize(acc, mults[4 + k], shifts[4 + k]))
                gates.append(activation_s16(g, 0, tanh=(k == 2)))
            i, f, g, o = gates
            c = _sat16(requantize(f * c, forget_to_cell_multiplier, forget_to_cell_shift))
            c = np.clip(c + requantize(i * g, input_to_cell_multiplier, input_to_cell_shift), clip_lo, clip_hi)
            th = activation_s16(c, cell_scale_power + 12, tanh=True)
            y = requantize(o * th, output_multiplier, output_shift) + output_zero_point
            h = np.clip(y, -128, 127)
            out[t, b] = h
        h_final[b] = h if h is not None else 0     # no step: the given state stays (None only without one)
        c_final[b] = c
    if x.ndim == 2:
        out = out[:, 0, :]
    elif batch_first:
        out = np.transpose(out, (1, 0, 2))
    return out.astype(np.int8), h_final.astype(np.int8), c_final.astype(np.int16)


def quantized_lstm(*args, **kwargs):
    """The output of lstm_sequence (the interpreter also writes the final
    state back into initial_hidden / initial_cell when they are given)."""
    return lstm_sequence(*args, **kwargs)[0]


def _gate_product_s16(w, v, bias, multiplier, shift):
    """One side of an int16 LSTM gate before the int16 clamp: w @ v + bias
    (exact, Python ints), saturated to +-(2^48 - 1), times the Q15-rounded
    multiplier / 2^(15 - shift), rounded half up (arm_nn_requantize_s64)."""
    shift = int(shift)
    if shift < -31 or shift > 7:
        raise ValueError("quantized_lstm_a16: gate shifts must be in [-31, 7]")
    total = np.asarray(w, np.int64).astype(object) @ np.asarray(v, np.int64).astype(object)
    if bias is not None:
        total = total + np.asarray(bias, np.int64).astype(object)
    total = np.minimum(np.maximum(total, -S64_LIMIT), S64_LIMIT)
    return np.array([(int(t) * reduce_multiplier(multiplier) + (1 << (14 - shift))) >> (15 - shift)
                     for t in total], dtype=object)


def quantized_lstm_a16(x, input_weights, hidden_weights, input_effective_bias, hidden_effective_bias,
                       gate_multipliers, gate_shifts, forget_to_cell_multiplier, forget_to_cell_shift,
                       input_to_cell_multiplier, input_to_cell_shift, output_multiplier, output_shift,
                       cell_clip, cell_scale_power, batch_first):
    """One unidirectional LSTM layer with int16 activations (symmetric) and
    int8 weights: CMSIS-NN's arm_lstm_unidirectional_s16. As quantized_lstm,
    except that each gate side is the 64-bit requantization of the s16
    kernels (int64 effective biases; the hidden one may be None), and the
    output o * tanh(c) is requantized onto int16 with no zero point."""
    x = np.asarray(x, np.int64)
    wx = np.asarray(input_weights, np.int64)
    wh = np.asarray(hidden_weights, np.int64)
    n = wx.shape[0] // 4
    bx = np.asarray(input_effective_bias, np.int64).reshape(-1)
    bh = None if hidden_effective_bias is None else np.asarray(hidden_effective_bias, np.int64).reshape(-1)
    mults = np.asarray(gate_multipliers, np.int64).reshape(-1)
    shifts = np.asarray(gate_shifts, np.int64).reshape(-1)
    seq = x[:, None, :] if x.ndim == 2 else (np.transpose(x, (1, 0, 2)) if batch_first else x)
    steps, batches = seq.shape[0], seq.shape[1]
    out = np.zeros((steps, batches, n), np.int64)
    clip_hi = cell_clip if cell_clip > 0 else 32767
    clip_lo = -cell_clip if cell_clip > 0 else -32768
    for b in range(batches):
        c = np.zeros(n, np.int64)
        h = None
        for t in range(steps):
            gates = []
            for k in range(4):
                rows = slice(k * n, (k + 1) * n)
                g = np.clip(_gate_product_s16(wx[rows], seq[t, b], bx[rows], mults[k], shifts[k]), -32768, 32767)
                if h is not None:
                    side = _gate_product_s16(wh[rows], h, None if bh is None else bh[rows], mults[4 + k],
                                             shifts[4 + k])
                    g = np.clip(g + side, -32768, 32767)
                gates.append(activation_s16(np.asarray(g, np.int64), 0, tanh=(k == 2)))
            i, f, g, o = gates
            c = _sat16(requantize(f * c, forget_to_cell_multiplier, forget_to_cell_shift))
            c = np.clip(c + requantize(i * g, input_to_cell_multiplier, input_to_cell_shift), clip_lo, clip_hi)
            th = activation_s16(c, cell_scale_power + 12, tanh=True)
            h = _sat16(requantize(o * th, output_multiplier, output_shift))
            out[t, b] = h
    if x.ndim == 2:
        return out[:, 0, :].astype(np.int16)
    if batch_first:
        return np.transpose(out, (1, 0, 2)).astype(np.int16)
    return out.astype(np.int16)
