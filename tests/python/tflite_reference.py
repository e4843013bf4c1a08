"""An int8 TFLite reference interpreter in numpy, for the import oracle.

Written from TFLite's reference kernels (reference_integer_ops conv,
depthwise_conv, pooling; reference_ops softmax with gemmlowp fixed point;
quantization_util's QuantizeMultiplier and CalculateActivationRangeQuantized),
not from ptec: it shares no code with ptec.tflite.import_int8, ptec.quant_math
or the C kernels. Activations are NHWC numpy arrays; (scale, zero point)
pairs are the model's float32 scales; enums are their schema names ("SAME", "RELU6").
"""
import math

import numpy as np

I32_MIN, I32_MAX = -(1 << 31), (1 << 31) - 1


def wrap32(x):
    x = np.asarray(x, np.int64)
    return ((x + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def quantize_multiplier(d):
    """TFLite QuantizeMultiplier (std::round of the frexp mantissa)."""
    if d == 0.0:
        return 0, 0
    q, shift = math.frexp(d)
    q_fixed = int(math.floor(q * 2.0 ** 31 + 0.5))        # positive: half away from zero
    if q_fixed == 1 << 31:
        q_fixed //= 2
        shift += 1
    if shift < -31:
        return 0, 0
    return q_fixed, shift


def srdhm(a, b):
    """gemmlowp SaturatingRoundingDoublingHighMul (ties away from zero)."""
    a = np.asarray(a, np.int64)
    b = np.asarray(b, np.int64)
    ab = a * b
    nudge = np.where(ab >= 0, 1 << 30, 1 - (1 << 30))
    s = ab + nudge
    q = np.where(s >= 0, s >> 31, -((-s) >> 31))           # C++ division truncates
    return np.where((a == I32_MIN) & (b == I32_MIN), I32_MAX, q)


def rdbypot(x, e):
    """gemmlowp RoundingDivideByPOT."""
    x = np.asarray(x, np.int64)
    e = np.asarray(e, np.int64)
    mask = (np.int64(1) << e) - 1
    rem = x & mask
    thr = (mask >> 1) + (x < 0)
    return (x >> e) + (rem > thr)


def mbqm(x, m, shift):
    """MultiplyByQuantizedMultiplier."""
    shift = np.asarray(shift, np.int64)
    left = np.maximum(shift, 0)
    right = np.maximum(-shift, 0)
    return rdbypot(srdhm(wrap32(np.asarray(x, np.int64) << left), m), right)


def act_range(fn, scale, zp):
    def q(f):
        v = float(np.float32(f) / np.float32(scale))
        return zp + int(math.copysign(math.floor(abs(v) + 0.5), v))
    if fn == "NONE":
        return -128, 127
    if fn == "RELU":
        return max(-128, q(0.0)), 127
    if fn == "RELU6":
        return max(-128, q(0.0)), min(127, q(6.0))
    if fn == "RELU_N1_TO_1":
        return max(-128, q(-1.0)), min(127, q(1.0))
    raise NotImplementedError(fn)


def pad_amounts(padding, size, k, s):
    out = (size + s - 1) // s if padding == "SAME" else (size - k + s) // s
    total = max((out - 1) * s + k - size, 0)
    return out, total // 2


def _patches(x, kh, kw, sh, sw, oh, ow, pt, pl, fill):
    """[N, OH, OW, KH, KW, C] windows of NHWC x, out-of-range taps = fill,
    and a mask of which taps are inside."""
    n, h, w, c = x.shape
    big = np.full((n, h + kh + (oh - 1) * sh, w + kw + (ow - 1) * sw, c), fill, np.int64)
    inside = np.zeros(big.shape[1:3], bool)
    big[:, pt:pt + h, pl:pl + w, :] = x
    inside[pt:pt + h, pl:pl + w] = True
    iy = (np.arange(oh) * sh)[:, None] + np.arange(kh)[None, :]
    ix = (np.arange(ow) * sw)[:, None] + np.arange(kw)[None, :]
    p = big[:, iy[:, None, :, None], ix[None, :, None, :], :]
    m = inside[iy[:, None, :, None], ix[None, :, None, :]]
    return p, m


def per_channel(si, sw_, so):
    pairs = [quantize_multiplier(float(np.float64(si) * np.float64(s) / np.float64(so))) for s in sw_]
    return np.array([p[0] for p in pairs], np.int64), np.array([p[1] for p in pairs], np.int64)


def conv(x, w, bias, qi, qo, ws, opts, depthwise):
    si, zi = qi
    so, zo = qo
    n, h, wd, cin = x.shape
    if depthwise:
        _, kh, kw, cout = w.shape
    else:
        cout, kh, kw, _ = w.shape
    sh, sw = opts["stride_h"], opts["stride_w"]
    oh, pt = pad_amounts(opts["padding"], h, kh, sh)
    ow, pl = pad_amounts(opts["padding"], wd, kw, sw)
    p, _ = _patches(x.astype(np.int64) - zi, kh, kw, sh, sw, oh, ow, pt, pl, 0)
    if depthwise:
        dm = cout // cin
        p = np.repeat(p, dm, axis=-1)                     # output channel o reads input o // dm
        acc = np.einsum("nyxhwc,hwc->nyxc", p, w[0].astype(np.int64))
    else:
        acc = np.einsum("nyxhwc,ohwc->nyxo", p, w.astype(np.int64))
    acc = acc + bias.astype(np.int64)
    m, s = per_channel(si, np.broadcast_to(ws, (cout,)), so)
    y = mbqm(wrap32(acc), m, s) + zo
    lo, hi = act_range(opts["fused_activation_function"], so, zo)
    return np.clip(y, lo, hi).astype(np.int8)


def avg_pool(x, opts):
    kh, kw = opts["filter_height"], opts["filter_width"]
    sh, sw = opts["stride_h"], opts["stride_w"]
    _, h, w, _ = x.shape
    oh, pt = pad_amounts(opts["padding"], h, kh, sh)
    ow, pl = pad_amounts(opts["padding"], w, kw, sw)
    p, m = _patches(x.astype(np.int64), kh, kw, sh, sw, oh, ow, pt, pl, 0)
    total = p.sum(axis=(3, 4))
    count = m.sum(axis=(2, 3))[None, :, :, None].astype(np.int64)
    half = count // 2
    num = np.where(total > 0, total + half, total - half)
    avg = np.sign(num) * (np.abs(num) // count)          # C division truncates
    return np.clip(avg, -128, 127).astype(np.int8)


# -- softmax: TFLite reference_ops::Softmax (int8 in, int8 out) ----------------

def _exp_quarter(a):
    """exp_on_interval_between_negative_one_quarter_and_0_excl, Q0.31."""
    x = a + (1 << 28)
    x2 = int(srdhm(x, x))
    x3 = int(srdhm(x2, x))
    x4 = int(srdhm(x2, x2))
    x4_4 = int(rdbypot(x4, 2))
    t = int(rdbypot(int(srdhm(x4_4 + x3, 715827883)) + x2, 1))
    c = 1895147668
    return int(wrap32(c + int(srdhm(c, x + t))))


def _exp_neg(a):
    """exp_on_negative_values for a Q5.26 input, result Q0.31."""
    quarter = 1 << 24
    amq = (a & (quarter - 1)) - quarter
    r = _exp_quarter(amq << 5)
    rem = amq - a
    for k, mul in enumerate([1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242]):
        if rem & (1 << (24 + k)):
            r = int(srdhm(r, mul))
    return I32_MAX if a == 0 else r


def _sat_shl(x, e):
    thr = (1 << (31 - e)) - 1
    return I32_MAX if x > thr else I32_MIN if x < -thr else x << e


def _reciprocal(acc, int_bits):
    hr = 32 - int(acc).bit_length()                       # CountLeadingZeros, acc > 0
    nbits = int_bits - hr
    v = int(wrap32((acc << hr) - (1 << 31)))
    s = v + I32_MAX
    half = (s + (1 if s >= 0 else -1))
    half = int(math.copysign(abs(half) // 2, half))
    x = int(wrap32(1515870810 + int(srdhm(half, -1010580540))))
    for _ in range(3):
        hx = int(srdhm(half, x))
        one_minus = int(wrap32((1 << 29) - hx))
        x = int(wrap32(x + _sat_shl(int(srdhm(x, one_minus)), 2)))
    return _sat_shl(x, 1), nbits


def softmax(x, s_in, beta=1.0):
    real = min(beta * s_in * float(1 << 26), float((1 << 31) - 1))
    mult, left = quantize_multiplier(real)
    diff_min = -int(math.floor(31.0 * (1 << 26) / (1 << left)))
    rows = x.reshape(-1, x.shape[-1]).astype(np.int64)
    out = np.empty(rows.shape, np.int8)
    for r, row in enumerate(rows):
        mx = int(row.max())
        acc = 0
        exps = []
        for v in row:
            d = int(v) - mx
            if d >= diff_min:
                e = _exp_neg(int(srdhm(int(wrap32(d << left)), mult)))
                acc = int(wrap32(acc + int(rdbypot(e, 12))))
                exps.append(e)
            else:
                exps.append(None)
        recip, nbits = _reciprocal(acc, 12)
        for c, e in enumerate(exps):
            if e is None:
                out[r, c] = -128
            else:
                u = int(rdbypot(int(srdhm(recip, e)), nbits + 31 - 8))
                out[r, c] = max(-128, min(127, u - 128))
    return out.reshape(x.shape)


def run_person_detect(tensors, operators, x_nhwc):
    """tensors: list of (shape, data or None, scales, zero_points); operators:
    list of (name, inputs, outputs, options). Returns every tensor's value."""
    env = {}

    def val(i):
        if i in env:
            return env[i]
        return tensors[i][1]

    def qp(i):
        return float(tensors[i][2][0]), int(tensors[i][3][0])
    env[operators[0][1][0]] = x_nhwc
    for name, ins, outs, opts in operators:
        o = outs[0]
        if name in ("CONV_2D", "DEPTHWISE_CONV_2D"):
            env[o] = conv(val(ins[0]), val(ins[1]), val(ins[2]), qp(ins[0]), qp(o),
                          tensors[ins[1]][2], opts, name == "DEPTHWISE_CONV_2D")
        elif name == "AVERAGE_POOL_2D":
            env[o] = avg_pool(val(ins[0]), opts)
        elif name == "RESHAPE":
            env[o] = val(ins[0]).reshape(tensors[o][0])
        elif name == "SOFTMAX":
            env[o] = softmax(val(ins[0]), qp(ins[0])[0], opts.get("beta", 1.0))
        else:
            raise NotImplementedError(name)
    return env


# -- the other operators the importer maps ---------------------------------------

def fully_connected(x, w, bias, qi, qo, ws, act):
    si, zi = qi
    so, zo = qo
    out_f, in_f = w.shape
    rows = x.reshape(-1, in_f).astype(np.int64) - zi
    acc = rows @ w.astype(np.int64).T
    if bias is not None:
        acc = acc + bias.astype(np.int64)
    m, s = per_channel(si, np.broadcast_to(ws, (out_f,)), so)
    lo, hi = act_range(act, so, zo)
    return np.clip(mbqm(wrap32(acc), m, s) + zo, lo, hi).astype(np.int8)


def max_pool(x, opts, qo):
    kh, kw = opts["filter_height"], opts["filter_width"]
    sh, sw = opts["stride_h"], opts["stride_w"]
    _, h, w, _ = x.shape
    oh, pt = pad_amounts(opts["padding"], h, kh, sh)
    ow, pl = pad_amounts(opts["padding"], w, kw, sw)
    p, _ = _patches(x.astype(np.int64), kh, kw, sh, sw, oh, ow, pt, pl, -(1 << 40))
    lo, hi = act_range(opts["fused_activation_function"], *qo)
    return np.clip(p.max(axis=(3, 4)), lo, hi).astype(np.int8)


def add(a, b, qa, qb, qo, act):
    twice = 2.0 * max(qa[0], qb[0])
    m1, s1 = quantize_multiplier(qa[0] / twice)
    m2, s2 = quantize_multiplier(qb[0] / twice)
    mo, so = quantize_multiplier(twice / ((1 << 20) * qo[0]))
    va = mbqm((a.astype(np.int64) - qa[1]) * (1 << 20), m1, s1)
    vb = mbqm((b.astype(np.int64) - qb[1]) * (1 << 20), m2, s2)
    lo, hi = act_range(act, *qo)
    return np.clip(mbqm(wrap32(va + vb), mo, so) + qo[1], lo, hi).astype(np.int8)


def mul(a, b, qa, qb, qo, act):
    m, s = quantize_multiplier(float(np.float64(qa[0]) * np.float64(qb[0]) / np.float64(qo[0])))
    prod = (a.astype(np.int64) - qa[1]) * (b.astype(np.int64) - qb[1])
    lo, hi = act_range(act, *qo)
    return np.clip(mbqm(prod, m, s) + qo[1], lo, hi).astype(np.int8)


def requantize(x, qi, qo):
    m, s = quantize_multiplier(float(np.float64(qi[0]) / np.float64(qo[0])))
    return np.clip(mbqm(x.astype(np.int64) - qi[1], m, s) + qo[1], -128, 127).astype(np.int8)


def relu_x(x, qi, qo, fn):
    """RELU / RELU6 / RELU_N1_TO_1 (TFLite's ReluX): requantize, then clamp."""
    m, s = quantize_multiplier(float(np.float64(qi[0]) / np.float64(qo[0])))
    lo, hi = act_range(fn, *qo)
    return np.clip(mbqm(x.astype(np.int64) - qi[1], m, s) + qo[1], lo, hi).astype(np.int8)


def leaky_relu(x, qi, qo, alpha):
    """TFLM's QuantizeLeakyRelu, its two multipliers from float32 ratios."""
    si, so, a = np.float32(qi[0]), np.float32(qo[0]), np.float32(alpha)
    m1, s1 = quantize_multiplier(float(si / so))
    m2, s2 = quantize_multiplier(float(si * a / so))
    v = x.astype(np.int64) - qi[1]
    y = np.where(v >= 0, mbqm(v, m1, s1), mbqm(v, m2, s2)) + qo[1]
    return np.clip(y, -128, 127).astype(np.int8)


def quantize(x, qo):
    v = np.asarray(x, np.float32) / np.float32(qo[0])
    r = np.sign(v) * np.floor(np.abs(v).astype(np.float64) + 0.5)      # TfLiteRound
    return np.clip(r + qo[1], -128, 127).astype(np.int8)


def dequantize(x, qi):
    return (np.float64(qi[0]) * (x.astype(np.float64) - qi[1])).astype(np.float32)


def mean_hw(x, qi, qo):
    """QuantizedMeanOrSum (reduce.h): one requantization, 1/count folded
    into QuantizeMultiplier(s_in / s_out)."""
    n, h, w, c = x.shape
    count = h * w
    m, s = quantize_multiplier(float(np.float64(qi[0]) / np.float64(qo[0])))
    shift = min(count.bit_length() - 1, 32, 31 + s)
    m = (m << shift) // count
    s = s - shift
    total = x.astype(np.int64).sum(axis=(1, 2), keepdims=True) - qi[1] * count
    return np.clip(mbqm(total, m, s) + qo[1], -128, 127).astype(np.int8)
