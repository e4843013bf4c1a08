"""The cortex_m lowering: one function per graph op, each emitting cortex_m
kernel calls (ptec.backends.cortex_m.kernels) for a node the partitioner
let this backend take. A function returns the node's value, NOT_YET when
the value is made on first use, or ctx.refuse(...) (None) when it finds
only while lowering that it cannot take the node (a fact the graph does not
show: the int8 grid a value was made on, an absorbed transpose); the node
then goes to the next backend (the portable fp32 fallback). Every check the
graph alone answers is in partitioner.py.
"""
from __future__ import annotations

import math
from typing import Callable, List, Optional, Tuple

import numpy as np

from ... import quant_math as qm
from ...ir import UNARY, Node, permutation
from ...lowered import (NOT_YET, Act, as_physical, clone_dim_order, from_physical, layout, needs_relayout, new_act,
                        raw_view, view)
from ...pte.program_builder import CHANNELS_LAST
from ...pte.schema import ScalarType
from . import kernels as K
from .kernels import I8
from .lowering_bool import LOWERINGS as BOOL_LOWERINGS
from .lowering_int import LOWERINGS as INT_LOWERINGS
from .lowering_int_rules import RANKED_RULES, ranked_order


def _unary_numpy(n: Node) -> Callable[[np.ndarray], np.ndarray]:
    """The float function of an element-wise node, in float64 numpy, for its LUT."""
    import torch
    fn = UNARY[n.op]
    return lambda v: fn(torch.from_numpy(np.asarray(v, np.float64)), n.attrs).numpy()


def _act_range(n: Node) -> Tuple[int, int]:
    act = n.attrs.get("act")
    if not act:
        return qm.QMIN, qm.QMAX
    return qm.activation_range(act[0], act[1], n.qparams[0], n.qparams[1])

def op_conv2d(ctx, n: Node):
    x = ctx.q(n.inputs[0])
    lo, hi = _act_range(n)
    a = n.attrs
    return K.conv2d(ctx.b, x, a["weight_q"], a["bias_q"], a["weight_scales"],
                    n.qparams[0], n.qparams[1], a["stride"], a["padding"], a["dilation"],
                    a["groups"], lo, hi, ctx.target, a.get("weight_bits", 8))


def op_linear(ctx, n: Node):
    x = ctx.q(n.inputs[0])
    a = n.attrs
    lo, hi = _act_range(n)
    if len(x.sizes) == 4:       # over W of a channels-last tensor: rows must be contiguous
        rows = view(ctx.b, x, [int(np.prod(x.sizes[:3])), x.sizes[3]])
        y = K.linear(ctx.b, rows, a["weight_q"], a["bias_q"], float(a["weight_scales"][0]),
                     n.qparams[0], n.qparams[1], lo, hi, ctx.target, a.get("weight_bits", 8))
        return view(ctx.b, y, n.shape)
    return K.linear(ctx.b, x, a["weight_q"], a["bias_q"], float(a["weight_scales"][0]),
                    n.qparams[0], n.qparams[1], lo, hi, ctx.target, a.get("weight_bits", 8))


def _number_as_lut(fn):
    """x (op) c or c (op) x with a number c is lowered as a LUT; any other
    operands go to the wrapped lowering."""
    def wrap(lowering):
        def lower_binary(ctx, n: Node):
            lut = _lut_with_number(ctx, n, fn)
            return lut if lut is not None else lowering(ctx, n)
        return lower_binary
    return wrap


def _add_lowered(ctx, n: Node, x1, x2):
    """quantized_add of two lowered operands, with n's output qparams and fused activation."""
    lo, hi = _act_range(n)
    return K.add(ctx.b, x1, x2, n.qparams[0], n.qparams[1], lo, hi)


@_number_as_lut(np.add)
def op_add(ctx, n: Node):
    return _add_lowered(ctx, n, ctx.q(n.inputs[0]), ctx.q(n.inputs[1]))


def _elementwise(kernel):
    """A binary op whose kernel builder takes both operands and n's output (scale, zero point)."""
    def lower(ctx, n: Node):
        x1, x2 = ctx.q(n.inputs[0]), ctx.q(n.inputs[1])
        return kernel(ctx.b, x1, x2, n.qparams[0], n.qparams[1])
    return lower


op_mul = _number_as_lut(np.multiply)(_elementwise(K.mul))


def op_layer_norm(ctx, n: Node):
    """ptec::quantized_layer_norm (docs/kernels.md "int8 layer norm"): the
    normalized value (x - mean) / sqrt(var + eps) is formed in Q16 from the
    input's integers, so the output's scale folds gamma / (s_y * 2^16) into
    a multiplier per element, and beta / s_y is the bias."""
    x = ctx.q(n.inputs[0])
    a = n.attrs
    count = int(np.prod(a["normalized_shape"]))
    gamma = np.ones(count) if a.get("weight") is None else np.asarray(a["weight"], np.float64).ravel()
    beta = np.zeros(count) if a.get("bias") is None else np.asarray(a["bias"], np.float64).ravel()
    s_y, z_y = n.qparams
    mults, shifts = qm.per_channel_multipliers(gamma / (float(s_y) * 65536.0))
    for sh in shifts:
        qm.check_shift(int(sh), "layer_norm")
    bias = np.clip(np.round(beta / float(s_y)), -2 ** 31, 2 ** 31 - 1).astype(np.int32)
    eps_term = int(min(round(count * count * float(a["eps"]) / float(x.scale) ** 2), 1 << 60))
    lo, hi = _act_range(n)
    out = new_act(ctx.b, I8, list(x.sizes), s_y, z_y)
    ctx.b.call("ptec::quantized_layer_norm.out", input=x.value, normalized_numel=count,
               input_zero_point=int(x.zp), eps_term=eps_term, requantize_multipliers=ctx.b.constant(mults),
               requantize_shifts=ctx.b.constant(shifts), bias=ctx.b.constant(bias),
               output_zero_point=int(z_y), activation_min=int(lo), activation_max=int(hi), out=out.value)
    return out


def op_lstm(ctx, n: Node):
    """ptec::quantized_lstm (docs/kernels.md "LSTM"): one nn.LSTM layer over
    [B, T, I]. Gate k's input and hidden products are requantized to Q3.12
    (s_x * s_wx_k * 2^12 and s_h * s_wh_k * 2^12, s_h the output's scale:
    the hidden state is the previous output); the effective biases fold the
    zero points (CMSIS-NN's kernel sums). The cell is int16 at
    2^cell_scale_power: f * c keeps its scale (2^-15), i * g goes from
    2^-30 to 2^-30 / s_c, and o * tanh(c) from 2^-30 to s_h.
    Stateful (--stateful): h (int8 [B, H] on the output's grid, initial
    value the zero point's bytes) and c (int16 [B, H] at the cell scale,
    initial value zero) are state tensors passed as initial_hidden and
    initial_cell, which the kernel reads at the start of an execute and
    overwrites with the final h and c at its end."""
    x = ctx.q(n.inputs[0])
    a = n.attrs
    hidden = a["hidden"]
    s_x, z_x = float(x.scale), int(x.zp)
    s_h, z_h = n.qparams
    s_h, z_h = float(s_h), int(z_h)
    wx = np.asarray(a["weight_q_ih"], np.int8)
    wh = np.asarray(a["weight_q_hh"], np.int8)
    bias_q = np.round(np.asarray(a["bias"], np.float64) / np.repeat(s_x * np.asarray(a["weight_scales_ih"]), hidden))
    bx = np.clip(bias_q, -2 ** 40, 2 ** 40).astype(np.int64) - z_x * wx.astype(np.int64).sum(axis=1)
    bh = -z_h * wh.astype(np.int64).sum(axis=1)
    pairs = ([qm.quantize_multiplier(s_x * float(s) * 4096.0) for s in a["weight_scales_ih"]]
             + [qm.quantize_multiplier(s_h * float(s) * 4096.0) for s in a["weight_scales_hh"]])
    power = int(a["cell_scale_power"])
    to_cell = qm.quantize_multiplier(2.0 ** (-30 - power))
    output = qm.quantize_multiplier(2.0 ** -30 / s_h)
    for _, sh in pairs + [to_cell, output]:
        qm.check_shift(int(sh), "lstm")
    out = new_act(ctx.b, I8, list(n.shape), s_h, z_h)
    h_state = c_state = None
    if a.get("stateful"):
        shape = [int(x.sizes[0]), int(hidden)]       # [B, H]: the input is [B, T, I] (batch_first)
        count = shape[0] * shape[1]
        h_state = ctx.b.state(I8, shape, np.full(count, z_h, np.int8).tobytes())
        c_state = ctx.b.state(ScalarType.SHORT, shape, bytes(2 * count))
    ctx.b.call("ptec::quantized_lstm.out", input=x.value, input_weights=ctx.b.constant(wx),
               hidden_weights=ctx.b.constant(wh),
               input_effective_bias=ctx.b.constant(np.clip(bx, -2 ** 31, 2 ** 31 - 1).astype(np.int32)),
               hidden_effective_bias=ctx.b.constant(np.clip(bh, -2 ** 31, 2 ** 31 - 1).astype(np.int32)),
               gate_multipliers=ctx.b.constant(np.array([m for m, _ in pairs], np.int32)),
               gate_shifts=ctx.b.constant(np.array([sh for _, sh in pairs], np.int32)),
               forget_to_cell_multiplier=1 << 30, forget_to_cell_shift=-14,
               input_to_cell_multiplier=to_cell[0], input_to_cell_shift=to_cell[1],
               output_multiplier=output[0], output_shift=output[1], cell_clip=0, cell_scale_power=power,
               output_zero_point=z_h, batch_first=True, initial_hidden=h_state, initial_cell=c_state,
               out=out.value)
    return out


def op_svdf(ctx, n: Node):
    """ptec.nn.SVDF -> ptec::quantized_svdf (docs/kernels.md "SVDF"): the
    feature filter requantizes s_in * s_feature / s_state into the int8
    state, the time filter's sums s_state * s_time / s_y into the output.
    The state is a planned [units*rank, memory] tensor that the kernel
    zeroes at the start of every execute (reset_state: the whole sequence
    is one call); with --stateful it is a state tensor (planned, initial
    value zero, kept across executes) and the kernel carries it on."""
    x = ctx.q(n.inputs[0])
    a = n.attrs
    s_y, z_y = n.qparams
    f_mult, f_shift = qm.requant_multiplier(float(x.scale) * a["feature_scale"] / a["state_scale"])
    o_mult, o_shift = qm.requant_multiplier(a["state_scale"] * a["time_scale"] / float(s_y))
    qm.check_shift(f_shift, "svdf feature filter")
    qm.check_shift(o_shift, "svdf time filter")
    lo, hi = _act_range(n)
    wf, wt = a["weights_feature_q"], a["weights_time_q"]
    stateful = bool(a.get("stateful"))
    if stateful:        # --stateful: kept across executes, zero after load and reset
        shape = [int(d) for d in wt.shape]
        state = Act(ctx.b.state(I8, shape, bytes(int(np.prod(shape)))), shape, I8)
    else:
        state = new_act(ctx.b, I8, list(wt.shape))
    out = new_act(ctx.b, I8, list(x.sizes[:-1]) + [int(a["units"])], s_y, z_y)
    bias = a.get("bias_q")
    ctx.b.call("ptec::quantized_svdf.out", input=x.value, weights_feature=ctx.b.constant(wf),
               weights_time=ctx.b.constant(wt), bias=None if bias is None else ctx.b.constant(bias),
               activation_state=state.value, rank=int(a["rank"]), input_offset=-int(x.zp),
               feature_multiplier=f_mult, feature_shift=f_shift, output_offset=int(z_y),
               output_multiplier=o_mult, output_shift=o_shift, activation_min=int(lo), activation_max=int(hi),
               reset_state=not stateful, out=out.value)
    return out


def op_avg_pool2d(ctx, n: Node):
    a = n.attrs
    x = ctx.q(n.inputs[0])
    return K.avg_pool2d(ctx.b, x, a["kernel"], a["stride"], a["padding"], a["ceil_mode"],
                        a["count_include_pad"], ctx.target)


def op_adaptive_avg_pool2d(ctx, n: Node):
    x = ctx.q(n.inputs[0])
    _, _, h, w = x.sizes
    oh, ow = n.attrs["output_size"]
    k = [h // oh, w // ow]
    return K.avg_pool2d(ctx.b, x, k, k, [0, 0], False, True, ctx.target)


def op_mean(ctx, n: Node):
    x = ctx.q(n.inputs[0])
    r = len(x.sizes)
    dims = sorted(d % r for d in n.attrs["dim"])
    if r == 4 and dims == [2, 3]:
        y = K.avg_pool2d(ctx.b, x, x.sizes[2:], x.sizes[2:], [0, 0], False, True, ctx.target)
        return y if n.attrs["keepdim"] else view(ctx.b, y, y.sizes[:2])
    if r == 3 and dims == [1]:
        # [B,T,D] contiguous has the bytes of [B,D,T,1] channels-last: pool over T
        bsz, t, d = x.sizes
        v = raw_view(ctx.b, x, [bsz, d, t, 1], CHANNELS_LAST)
    else:             # the last dim of a rank-2/3 tensor (partitioner.MEAN_DIMS)
        # rows of a contiguous tensor are the W axis of a C = 1 image
        rows = int(np.prod(x.sizes[:-1]))
        v = raw_view(ctx.b, x, [1, 1, rows, x.sizes[-1]], CHANNELS_LAST)
    k = v.sizes[2:] if r == 3 and dims == [1] else [1, v.sizes[3]]
    y = K.avg_pool2d(ctx.b, v, k, k, [0, 0], False, True, ctx.target)
    return raw_view(ctx.b, y, n.shape, list(range(len(n.shape))))


def op_max_pool2d(ctx, n: Node):
    a = n.attrs
    x = ctx.q(n.inputs[0])
    if a["ceil_mode"]:
        # The extra bottom/right windows of ceil_mode see the input padded
        # with -128, which never wins a max (each window holds a real
        # value), so ceil_mode becomes a pad and an ordinary pool.
        extra = [(o - 1) * s + k - (i + 2 * p) for o, s, k, i, p in
                 zip(n.shape[2:], a["stride"], a["kernel"], x.sizes[2:], a["padding"])]
        if max(extra) > 0:
            x = K.pad(ctx.b, x, [0, 0, 0, 0], [0, max(extra[0], 0), max(extra[1], 0), 0],
                      qm.QMIN)
    lo, hi = _act_range(n)
    if list(a["dilation"]) != [1, 1]:
        return _dilated_max_pool(ctx, x, n, lo, hi)
    return K.max_pool2d(ctx.b, x, a["kernel"], a["stride"], a["padding"], lo, hi)


def _dilated_max_pool(ctx, x: Act, n: Node, lo: int, hi: int) -> Act:
    """A max pool with dilation, which cortex_m::quantized_max_pool2d lacks,
    from byte copies and raw int8 maxima (exact: the output shares the
    input's grid). Padding becomes -128 rows and columns, which never win
    (every window holds a real value). A max over a rectangle is a max over
    rows of maxima over columns, so each axis is a pass of its kernel's
    taps: tap j of the W pass is the strided slice of columns j*dw,
    j*dw + sw, ..., one per output column; the pass keeps their
    element-wise maximum. kh + kw slices, kh + kw - 2 maxima."""
    a = n.attrs
    (kh, kw), (sh, sw), (dh, dw) = a["kernel"], a["stride"], a["dilation"]
    ph, pw = a["padding"]
    oh, ow = n.shape[2:]
    # what the last window reaches past the input and the leading padding
    # (ceil_mode windows and the trailing padding)
    eh = max((oh - 1) * sh + (kh - 1) * dh + 1 - (x.sizes[2] + ph), 0)
    ew = max((ow - 1) * sw + (kw - 1) * dw + 1 - (x.sizes[3] + pw), 0)
    if ph or pw or eh or ew:
        x = K.pad(ctx.b, x, [0, ph, pw, 0], [0, eh, ew, 0], qm.QMIN)
    y = as_physical(ctx.b, x)                     # [N, H, W, C] contiguous
    for dim, k, s, d, o in ((2, kw, sw, dw, ow), (1, kh, sh, dh, oh)):
        if k == 1 and s == 1 and y.sizes[dim] == o:
            continue                              # the pass would copy y whole
        best = None
        for j in range(k):
            sizes = list(y.sizes)
            sizes[dim] = o
            tap = new_act(ctx.b, I8, sizes, y.scale, y.zp, dim_order=[0, 1, 2, 3])
            ctx.b.call("aten::slice_copy.Tensor_out", self=y.value, dim=dim, start=j * d,
                       end=j * d + (o - 1) * s + 1, step=s, out=tap.value)
            if best is not None:
                both = new_act(ctx.b, I8, sizes, y.scale, y.zp, dim_order=[0, 1, 2, 3])
                ctx.b.call("cortex_m::maximum.out", self=best.value, other=tap.value, out=both.value)
                tap = both
            best = tap
        y = best
    y = from_physical(ctx.b, y)
    if (lo, hi) != (qm.QMIN, qm.QMAX):              # a fused clamp: a 1x1 pool clamps
        y = K.max_pool2d(ctx.b, y, [1, 1], [1, 1], [0, 0], lo, hi)
    return y


def op_clamp(ctx, n: Node):
    x = ctx.q(n.inputs[0])
    # A bound at the grid's end (a producer given the clamp's range, ptec.narrow_clamps: relu6 on
    # [0, 6]) is no bound: 6 / the float32 scale is 254.9999996, whose floor would make the top code 126
    bounds = [n.attrs["lo"], n.attrs["hi"]]
    for k, edge in ((0, qm.QMIN), (1, qm.QMAX)):
        if bounds[k] is not None and abs(float(bounds[k]) / float(x.scale) + int(x.zp) - edge) < 1e-3:
            bounds[k] = None
    lo, hi = qm.activation_range(bounds[0], bounds[1], x.scale, x.zp)
    if len(x.sizes) == 4:
        return K.max_pool2d(ctx.b, x, [1, 1], [1, 1], [0, 0], lo, hi)
    # any other rank is contiguous: its bytes are those of [1, numel, 1, 1]
    # channels-last, and a clamp does not care where an element sits
    v = view(ctx.b, x, [1, int(np.prod(x.sizes)), 1, 1])
    y = K.max_pool2d(ctx.b, v, [1, 1], [1, 1], [0, 0], lo, hi)
    return view(ctx.b, y, x.sizes)


def op_reshape(ctx, n: Node):
    from .lowering_bool import bool_value, is_bool_input
    if is_bool_input(ctx, n.inputs[0]):     # a mask viewed (capture_selection_rows): its bool bytes
        return view(ctx.b, bool_value(ctx, n.inputs[0]), n.attrs["shape"])
    # a pool's int64 indices viewed (capture_unbatched's squeeze): as they are. (ctx.made, not ctx.get: a
    # deferred constant stays deferred, for q() to make it int8 for this view, not in its default layout.)
    src = ctx.made(n.inputs[0])
    if src is not None and src.dtype == ScalarType.LONG:
        return view(ctx.b, src, n.attrs["shape"])
    return view(ctx.b, ctx.q(n.inputs[0]), n.attrs["shape"])


def op_softmax(ctx, n: Node):
    x = ctx.q(n.inputs[0])
    r = len(x.sizes)
    d = n.attrs["dim"] % r
    # Work on the physical (contiguous) shape, bring the softmax dim
    # innermost with cortex_m::transpose when it is not, and run rows.
    if r == 4:        # channels-last: physical NHWC; the channel dim is already innermost
        phys = [x.sizes[i] for i in CHANNELS_LAST]
        xp, pos = raw_view(ctx.b, x, phys, [0, 1, 2, 3]), CHANNELS_LAST.index(d)
    else:
        xp, pos = x, d
    perm = list(range(r))
    perm[pos], perm[-1] = perm[-1], perm[pos]
    if pos != r - 1:
        xp = K.transpose(ctx.b, xp, perm)
    rows = raw_view(ctx.b, xp, [int(np.prod(xp.sizes[:-1])), xp.sizes[-1]], [0, 1])
    y = K.softmax(ctx.b, rows, -1)
    y = raw_view(ctx.b, y, xp.sizes, list(range(r)))
    if pos != r - 1:
        y = K.transpose(ctx.b, y, perm)
    return raw_view(ctx.b, y, x.sizes, layout(x.sizes))


def op_masked_softmax(ctx, n: Node):
    """ptec::quantized_softmax_masked (docs/kernels.md "masked softmax") on
    the [rows, last] view of a contiguous (rank <= 3) int8 value. The mask
    goes in as a constant BOOL [mask_rows, last]: the mask's own trailing
    dims when its leading dims are 1 and the rest match the input's (one
    [L, S] attention mask for every head), else broadcast to the input."""
    x = ctx.q(n.inputs[0])
    sizes = list(x.sizes)
    last = sizes[-1]
    mask = np.asarray(n.attrs["mask"], bool)
    mask = mask.reshape(mask.shape[-len(sizes):]) if mask.ndim > len(sizes) else mask
    shape = [1] * (len(sizes) - mask.ndim) + list(mask.shape)
    k = 0
    while k < len(shape) - 1 and shape[k] == 1:
        k += 1
    if shape[k:] == sizes[k:]:
        rows_mask = mask.reshape(-1, last)
    else:
        rows_mask = np.broadcast_to(mask.reshape(shape), sizes).reshape(-1, last)
    rows = raw_view(ctx.b, x, [int(np.prod(sizes[:-1])), last], [0, 1])
    mult, shift, diff_min = qm.softmax_params(float(x.scale))
    out = new_act(ctx.b, I8, rows.sizes, qm.SOFTMAX_OUTPUT_SCALE, qm.SOFTMAX_OUTPUT_ZERO_POINT)
    ctx.b.call("ptec::quantized_softmax_masked.out", input=rows.value,
               mask=ctx.b.constant(np.ascontiguousarray(rows_mask, dtype=bool)), input_multiplier=mult,
               input_shift=shift, diff_min=diff_min, out=out.value)
    return raw_view(ctx.b, out, sizes, layout(sizes))


def unary_function(n: Node) -> Callable[[np.ndarray], np.ndarray]:
    """The float64 function an element-wise node's 256-entry LUT is made of."""
    if n.op == "sigmoid":
        return lambda v: 1.0 / (1.0 + np.exp(-v))
    if n.op == "tanh":
        return np.tanh
    return _unary_numpy(n)


def op_sigmoid(ctx, n: Node):
    return K.activation_lut(ctx.b, ctx.q(n.inputs[0]), unary_function(n), n.qparams[0], n.qparams[1])


op_tanh = op_sigmoid


def _requantize(ctx, x: Act, scale: float, zp: int) -> Act:
    """x on another int8 grid: an identity LUT (one 256-byte table)."""
    if (float(x.scale), int(x.zp)) == (float(scale), int(zp)):
        return x
    return K.activation_lut(ctx.b, x, lambda v: v, scale, zp)


def _lut_with_number(ctx, n: Node, fn) -> Optional[Act]:
    """x (op) c or c (op) x with a number c is a function of one int8
    tensor: a 256-entry LUT (quantized_activation), fused clamp included."""
    a, b = n.inputs
    ca, cb = ctx.number(a), ctx.number(b)
    if (ca is None) == (cb is None):
        return None
    x = ctx.q(a if cb is not None else b)
    act = n.attrs.get("act") or (None, None)
    lo = -np.inf if act[0] is None else act[0]
    hi = np.inf if act[1] is None else act[1]

    def f(v):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            y = fn(v, cb) if cb is not None else fn(ca, v)
        return np.clip(np.nan_to_num(y, nan=0.0, posinf=1e30, neginf=-1e30), lo, hi)
    return K.activation_lut(ctx.b, x, f, n.qparams[0], n.qparams[1])


@_number_as_lut(np.subtract)
def op_sub(ctx, n: Node):
    # a - b = a + (-b). On the grid (s, -1 - zp) the negation is exact:
    # q -> -q - 1, a bijection of [-128, 127], as a LUT.
    x1, x2 = ctx.q(n.inputs[0]), ctx.q(n.inputs[1])
    neg = K.activation_lut(ctx.b, x2, np.negative, x2.scale, -1 - int(x2.zp))
    return _add_lowered(ctx, n, x1, neg)


op_div = _number_as_lut(np.divide)(_elementwise(K.div))


def _min_max(ctx, n: Node, key: str):
    s, z = n.qparams
    out_sizes = list(n.shape)

    def operand_sizes(sizes):
        # One layout for both operands: a single element or a lower-rank
        # operand of a 4-D result becomes 4-D (numpy's leading 1s).
        if list(sizes) == out_sizes:
            return list(sizes)
        if int(np.prod(sizes)) == 1:
            return [1] * len(out_sizes)
        return [1] * (len(out_sizes) - len(sizes)) + list(sizes)
    wants = [operand_sizes(ctx.g.node(i).shape) for i in n.inputs]
    # Upstream's kernel hands CMSIS-NN the logical sizes as row-major dims:
    # a broadcast (beyond a single element) into a channels-last result
    # whose bytes differ from NCHW order runs on the [N,H,W,C] views instead.
    physical = needs_relayout(out_sizes) and any(
        w != out_sizes and int(np.prod(w)) > 1 for w in wants)
    xs = []
    for i, want in zip(n.inputs, wants):
        if ctx.g.node(i).op == "constant":
            if physical:        # stored ahead of time in [N,H,W,C] order, contiguous
                value = np.asarray(ctx.g.node(i).attrs["value"], np.float32).reshape(want)
                q8 = qm.quantize_to_int8(value, s, z).transpose(CHANNELS_LAST)
                xs.append(Act(ctx.b.constant(np.ascontiguousarray(q8)), list(q8.shape), I8, s, z))
            else:
                xs.append(ctx.const_q(i, s, z, want))
            continue
        x = _requantize(ctx, ctx.q(i), s, z)
        if x.sizes != want:
            x = (raw_view(ctx.b, x, want, layout(want)) if int(np.prod(want)) == 1
                 else view(ctx.b, x, want))
        xs.append(as_physical(ctx.b, x) if physical else x)
    out = new_act(ctx.b, I8, [out_sizes[d] for d in CHANNELS_LAST] if physical else out_sizes,
                  s, z, dim_order=[0, 1, 2, 3] if physical else None)
    ctx.b.call(f"cortex_m::{key}.out", self=xs[0].value, other=xs[1].value, out=out.value)
    return from_physical(ctx.b, out) if physical else out


def op_minimum(ctx, n: Node):
    return _min_max(ctx, n, "minimum")


def op_maximum(ctx, n: Node):
    return _min_max(ctx, n, "maximum")


op_silu = op_gelu = op_hardswish = op_hardsigmoid = op_leaky_relu = op_elu = op_softplus = op_prelu = op_sigmoid
op_hardshrink = op_softshrink = op_softsign = op_tanhshrink = op_sigmoid
op_mish = op_selu = op_celu = op_logsigmoid = op_neg = op_threshold = op_lp_pow = op_lp_root = op_sigmoid
op_lrn_scale = op_elementwise = op_sigmoid


def op_conv_transpose2d(ctx, n: Node):
    a = n.attrs
    x = ctx.q(n.inputs[0])
    lo, hi = _act_range(n)
    return K.transpose_conv2d(ctx.b, x, a["weight_q"], a["bias_q"], a["weight_scales"],
                              n.qparams[0], n.qparams[1], a["stride"], a["padding"],
                              a["output_padding"], a["dilation"], lo, hi, ctx.target)


def op_permute(ctx, n: Node):
    rank = len(ctx.g.node(n.inputs[0]).shape)
    perm = permutation(n, rank)
    users = ctx.g.users(n.name)
    if (2 <= rank <= 3 and perm == list(range(rank - 2)) + [rank - 1, rank - 2] and users
            and n.name not in ctx.g.outputs
            and all(u.op == "matmul" and u.inputs == [u.inputs[0], n.name]
                    and u.inputs[0] != n.name for u in users)):
        # k.transpose(-2, -1) feeding matmuls as rhs: batch_matmul wants
        # rhs transposed, so it takes k as it is. Made only if needed.
        ctx.pre_transposed[n.name] = n.inputs[0]
        ctx.deferred[n.name] = lambda: _permute(ctx, n, perm)
        return NOT_YET
    return _permute(ctx, n, perm)


def _permute(ctx, n: Node, perm: List[int]) -> Act:
    return permute_act(ctx.b, ctx.q(n.inputs[0]), perm, K.transpose)


def permute_act(b, x: Act, perm: List[int], move) -> Act:
    """x permuted: a view when only size-1 dims move, else move(b, x, perm)
    on the contiguous (for 4-D, the physical NHWC) tensor, which gives a
    contiguous result (cortex_m::transpose for int8; the int16 lowering
    passes aten::permute_copy)."""
    out_sizes = [x.sizes[p] for p in perm]
    if len(x.sizes) == 4:
        # Permute the physical NHWC bytes: output physical dim i holds
        # logical dim CL[i] of the output, i.e. input logical perm[CL[i]].
        phys_in = [x.sizes[d] for d in CHANNELS_LAST]
        pp = [CHANNELS_LAST.index(perm[CHANNELS_LAST[i]]) for i in range(4)]
        xp = raw_view(b, x, phys_in, [0, 1, 2, 3])
        moved = [d for d in pp if phys_in[d] > 1]
        yp = xp if moved == sorted(moved) else move(b, xp, pp)
        return raw_view(b, yp, out_sizes, CHANNELS_LAST)
    moved = [d for d in perm if x.sizes[d] > 1]
    if moved == sorted(moved):           # only size-1 dims move: same bytes
        return raw_view(b, x, out_sizes, list(range(len(out_sizes))))
    return move(b, x, perm)


def op_channel_shuffle(ctx, n: Node):
    """Each pixel's C channels, as g groups of C/g, become C/g groups of g:
    on the channels-last bytes a transpose of [N*H*W, g, C/g]."""
    x = ctx.q(n.inputs[0])
    nb, c, h, w = x.sizes
    g = int(n.attrs["groups"])
    rows = raw_view(ctx.b, x, [nb * h * w, g, c // g], [0, 1, 2])
    y = K.transpose(ctx.b, rows, [0, 2, 1])
    return raw_view(ctx.b, y, [nb, c, h, w], CHANNELS_LAST)


def op_matmul(ctx, n: Node):
    a_name, b_name = n.inputs
    sa = list(ctx.g.node(a_name).shape)
    sb = list(ctx.g.node(b_name).shape)
    pre_t = ctx.pre_transposed.get(b_name) if b_name in ctx.deferred else None
    if pre_t is not None:
        src = list(ctx.g.node(pre_t).shape)
        sb = src[:-2] + [src[-1], src[-2]]
    if len(sa) == 1:
        sa = [1] + sa
    if len(sb) == 1:
        sb = sb + [1]
    m, k = sa[-2:]
    k2, ncols = sb[-2:]
    ba, bb = sa[:-2], sb[:-2]
    pa, pb = int(np.prod(ba)), int(np.prod(bb))
    if k != k2:
        return ctx.refuse(n, f"shapes {sa} @ {sb}")
    if ba == bb or (pa == 1 and pb == 1):
        lhs_sizes, bsz = [pa, m, k], pa
    elif pb == 1:                        # one rhs for every batch: fold the batch into M
        lhs_sizes, bsz = [1, pa * m, k], 1
    else:
        return ctx.refuse(n, f"batch dims {ba} and {bb}: only equal batch dims or a "
                              "2-D rhs are lowered to cortex_m::quantized_batch_matmul")
    if ctx.g.node(a_name).op == "constant":
        s, z = ctx.g.node(a_name).qparams
        lhs = ctx.const_q(a_name, s, z, lhs_sizes)
    else:
        lhs = view(ctx.b, ctx.q(a_name), lhs_sizes)
    if pre_t is not None:
        rhs_t = view(ctx.b, ctx.q(pre_t), [bsz, ncols, k])
    elif ctx.g.node(b_name).op == "constant":
        s, z = ctx.g.node(b_name).qparams
        value = np.asarray(ctx.g.node(b_name).attrs["value"], np.float32)
        value = np.ascontiguousarray(value.reshape(bsz, k, ncols).transpose(0, 2, 1))
        rhs_t = K.quantized_constant(ctx.b, value, s, z)
    else:
        rhs = view(ctx.b, ctx.q(b_name), [bsz, k, ncols])
        rhs_t = K.transpose(ctx.b, rhs, [0, 2, 1])
    y = K.batch_matmul(ctx.b, lhs, rhs_t, n.qparams[0], n.qparams[1], ctx.target)
    return view(ctx.b, y, n.shape)


def _edge_pad(ctx, n: Node):
    """int8 reflect / replicate padding: a copy of bytes on the input's grid
    (the quantizer keeps it), by upstream's portable kernel, which takes
    contiguous tensors; the padded dims are the last one or two."""
    x = ctx.q(n.inputs[0])
    if (x.scale, x.zp) != tuple(n.qparams):
        return ctx.refuse(n, "the output's int8 grid differs from the input's: the padding copies bytes")
    return edge_pad_act(ctx, n, x)


def edge_pad_act(ctx, n: Node, x: Act) -> Act:
    """n's reflect / replicate padding of x, any dtype (int8, or int16 for --a16)."""
    r = len(n.shape)
    pads = [int(p) for p in n.attrs["pad"]]
    padded = r - 2 if r == 3 else 2
    pads = pads + [0] * (2 * padded - len(pads))
    kind = "reflection" if n.attrs["mode"] == "reflect" else "replication"
    contiguous = list(range(r))
    out = new_act(ctx.b, x.dtype, n.shape, x.scale, x.zp, dim_order=contiguous)
    ctx.b.call(f"aten::{kind}_pad{padded}d.out", self=_in_dim_order(ctx, x, contiguous).value, padding=pads,
               out=out.value)
    return _in_dim_order(ctx, out, layout(n.shape))


def op_pad(ctx, n: Node):
    a = n.attrs
    if a.get("mode", "constant") != "constant":
        return _edge_pad(ctx, n)
    x = ctx.q(n.inputs[0])
    r = len(x.sizes)
    pads = [int(p) for p in a["pad"]]
    pre, post = [0] * r, [0] * r
    for i in range(len(pads) // 2):
        pre[r - 1 - i], post[r - 1 - i] = pads[2 * i], pads[2 * i + 1]
    s, z = n.qparams
    x = _requantize(ctx, x, s, z)
    order = CHANNELS_LAST if r == 4 else list(range(r))     # physical slot order
    pre4 = [0] * (4 - r) + [pre[d] for d in order]
    post4 = [0] * (4 - r) + [post[d] for d in order]
    out = new_act(ctx.b, I8, [x.sizes[i] + pre[i] + post[i] for i in range(r)], s, z)
    ctx.b.call("cortex_m::pad.out", input=x.value, pre_pad=pre4, post_pad=post4,
                pad_value=qm.quantize_value(float(a.get("value", 0.0)), s, z), out=out.value)
    return out


def _in_dim_order(ctx, a: Act, order) -> Act:
    """a with this dim order: itself, or a _clone_dim_order copy (for the
    portable data-movement kernels, whose upstream forms want given orders)."""
    return a if list(ctx.b.values[a.value].val.dim_order) == list(order) else clone_dim_order(ctx.b, a, order)


def op_upsample_nearest(ctx, n: Node):
    """int8 nearest resize: a copy of bytes (the portable kernel takes any
    dtype), so the output keeps the input's grid (PASS_THROUGH)."""
    x = ctx.q(n.inputs[0])
    if (x.scale, x.zp) != tuple(n.qparams):
        return ctx.refuse(n, "the output's int8 grid differs from the input's: the resize copies bytes")
    # Upstream's kernel takes contiguous (NCHW) tensors only (upstream_rules).
    contiguous = [0, 1, 2, 3]
    out = new_act(ctx.b, ScalarType.CHAR, n.shape, x.scale, x.zp, dim_order=contiguous)
    ctx.b.call("aten::upsample_nearest2d.vec_out", input=_in_dim_order(ctx, x, contiguous).value,
               output_size=list(n.attrs["size"]), scale_factors=None, out=out.value)
    return _in_dim_order(ctx, out, layout(n.shape))


def op_pixel_shuffle(ctx, n: Node):
    """int8 depth to space (and back): a copy of bytes on the input's grid
    (PASS_THROUGH), by upstream's portable kernel, which takes contiguous
    (NCHW) tensors."""
    x = ctx.q(n.inputs[0])
    if (x.scale, x.zp) != tuple(n.qparams):
        return ctx.refuse(n, "the output's int8 grid differs from the input's: the shuffle copies bytes")
    contiguous = [0, 1, 2, 3]
    out = new_act(ctx.b, ScalarType.CHAR, n.shape, x.scale, x.zp, dim_order=contiguous)
    if n.attrs["unshuffle"]:
        ctx.b.call("aten::pixel_unshuffle.out", self=_in_dim_order(ctx, x, contiguous).value,
                   downscale_factor=int(n.attrs["factor"]), out=out.value)
    else:
        ctx.b.call("aten::pixel_shuffle.out", self=_in_dim_order(ctx, x, contiguous).value,
                   upscale_factor=int(n.attrs["factor"]), out=out.value)
    return _in_dim_order(ctx, out, layout(n.shape))


def op_slice(ctx, n: Node):
    """int8 slice (a piece of a chunk or split): a copy of bytes on the
    input's grid (PASS_THROUGH). Upstream's slice_copy indexes as if
    contiguous, so a 4-D channels-last input is sliced in NCHW order."""
    x = ctx.q(n.inputs[0])
    if (x.scale, x.zp) != tuple(n.qparams):
        return ctx.refuse(n, "the output's int8 grid differs from the input's: the slice copies bytes")
    return slice_act(ctx, n, x)


def slice_act(ctx, n: Node, x: Act) -> Act:
    """n's slice of x, any dtype (int8, or int16 for --a16)."""
    order = list(range(len(n.shape)))
    out = new_act(ctx.b, x.dtype, n.shape, x.scale, x.zp, dim_order=order)
    a = n.attrs
    ctx.b.call("aten::slice_copy.Tensor_out", self=_in_dim_order(ctx, x, order).value, dim=int(a["dim"]),
               start=int(a["start"]), end=int(a["end"]), step=1, out=out.value)
    return _in_dim_order(ctx, out, layout(n.shape))


def op_cat(ctx, n: Node):
    """int8 cat: a byte copy of inputs on the output's scale and zero point
    (the quantizer arranges it when it can); an input on another grid is
    first moved onto it by a 256-entry identity LUT."""
    qp = tuple(n.qparams)
    xs = [_requantize(ctx, ctx.q(i), qp[0], qp[1]) for i in n.inputs]
    return cat_acts(ctx, n, xs)


def cat_acts(ctx, n: Node, xs: List[Act]) -> Act:
    """n's cat of xs, which share a dtype and grid (int8, or int16 for --a16)."""
    qp = (xs[0].scale, xs[0].zp)
    dim = int(n.attrs["dim"]) % len(n.shape)
    if len(n.shape) == 4 and any(needs_relayout(s) for s in [x.sizes for x in xs] + [n.shape]):
        # upstream's cat copies rows as if contiguous: cat the [N,H,W,C]
        # views of the channels-last bytes on the dim's physical position
        out = new_act(ctx.b, xs[0].dtype, [n.shape[d] for d in CHANNELS_LAST], qp[0], qp[1],
                      dim_order=[0, 1, 2, 3])
        ctx.b.call("aten::cat.out", tensors=[as_physical(ctx.b, x).value for x in xs],
                   dim=CHANNELS_LAST.index(dim), out=out.value)
        return from_physical(ctx.b, out)
    out = new_act(ctx.b, xs[0].dtype, n.shape, qp[0], qp[1])
    ctx.b.call("aten::cat.out", tensors=[x.value for x in xs], dim=dim, out=out.value)
    return out


def op_argmax(ctx, n: Node):
    """aten::argmax.out / argmin.out on the int8 values: a positive scale
    keeps their order, so the index is the dequantized floats' (an fp32
    input from the fallback is taken as it is). Upstream's kernel indexes
    self as contiguous and wants out in self's dim order, so a 4-D
    channels-last input is made contiguous first and a 4-D out is
    contiguous, made channels-last after when its bytes differ."""
    a = n.attrs
    src = ctx.own(n.inputs[0])
    x = src if src.dtype == ScalarType.FLOAT else ctx.q(n.inputs[0])
    if needs_relayout(x.sizes):
        x = clone_dim_order(ctx.b, x, [0, 1, 2, 3])
    else:
        x = raw_view(ctx.b, x, x.sizes, list(range(len(x.sizes))))
    out = new_act(ctx.b, ScalarType.LONG, n.shape, dim_order=list(range(len(n.shape))))
    ctx.b.call("aten::argmin.out" if a["smallest"] else "aten::argmax.out", self=x.value, dim=int(a["dim"]),
               keepdim=bool(a["keepdim"]), out=out.value)
    if needs_relayout(out.sizes):
        return clone_dim_order(ctx.b, out, CHANNELS_LAST)
    # as every value: a 4-D one is channels-last (here the same bytes)
    return raw_view(ctx.b, out, out.sizes, layout(out.sizes))


def _ordered(ctx, n: Node):
    """The (values, indices) of aten::sort.values / topk.values over n's
    input, made once for a sort node and its sort_indices twin. int8 values
    keep the input's grid (a positive scale keeps the order; quantize's
    PASS_THROUGH), fp32 from the fallback is sorted as it is. A pick
    (kthvalue, median) is the topk of the pick + 1 smallest, sliced at its
    last (aten::slice_copy.Tensor_out, any dtype) and viewed without dim
    unless keepdim. Upstream's kernels want contiguous tensors: a 4-D
    channels-last input is made contiguous first and 4-D results
    channels-last after. A rule (capture_sort.RULE_TARGETS) is one call
    of its own kernel: aten::median.dim_values, nanmedian.dim_values,
    mode.values (values without dim unless keepdim) or cummax.out /
    cummin.out (self's sizes); the whole tensor's median (dim None) is
    median.dim_values over a 1-D view of the input's bytes (the value does
    not depend on their order; its index is not used)."""
    a = n.attrs
    dim, k, pick, rule = a["dim"], a["k"], a.get("pick"), a.get("rule")
    if ctx.get(n.inputs[0]).dtype in _INTEGER_SORTS:
        if rule in RANKED_RULES:             # mode / cummax / cummin of integers: their own module
            key = (n.inputs[0], dim, rule, bool(a.get("keepdim")))
            if key not in ctx.ordered:
                ctx.ordered[key] = ranked_order(ctx, n, ctx.get(n.inputs[0]))
            return ctx.ordered[key]
        if _int_ordering(ctx, n) is None:
            return None
        dim, k, pick, rule = _int_ordering(ctx, n)
    key = (n.inputs[0], dim, bool(a["descending"]), k, pick, bool(a.get("keepdim")), rule)
    if key not in ctx.ordered and rule is not None:
        src = ctx.own(n.inputs[0])
        x = src if src.dtype == ScalarType.FLOAT else ctx.q(n.inputs[0])
        if dim is None:
            x, dim = raw_view(ctx.b, x, [int(np.prod(x.sizes))], [0]), 0
        order = list(range(len(x.sizes)))
        x = clone_dim_order(ctx.b, x, order) if needs_relayout(x.sizes) else raw_view(ctx.b, x, x.sizes, order)
        sizes = list(x.sizes) if rule in ("cummax", "cummin") else list(n.shape)
        values = new_act(ctx.b, x.dtype, sizes, x.scale, x.zp, dim_order=list(range(len(sizes))))
        indices = new_act(ctx.b, ScalarType.LONG, sizes, dim_order=list(range(len(sizes))))
        if rule in ("cummax", "cummin"):
            ctx.b.call(f"aten::{rule}.out", self=x.value, dim=int(dim), values=values.value, indices=indices.value)
        else:
            ctx.b.call("aten::mode.values" if rule == "mode" else f"aten::{rule}.dim_values", self=x.value,
                       dim=int(dim), keepdim=bool(a["keepdim"]), values=values.value, indices=indices.value)
        ctx.ordered[key] = tuple(clone_dim_order(ctx.b, r, CHANNELS_LAST) if needs_relayout(r.sizes)
                                 else raw_view(ctx.b, r, r.sizes, layout(r.sizes)) for r in (values, indices))
    if key not in ctx.ordered:
        dim = int(dim)
        src = ctx.own(n.inputs[0])
        x = src if src.dtype in (ScalarType.FLOAT, *_INTEGER_SORTS) else ctx.q(n.inputs[0])
        if a.get("dim", 0) is None:          # an integer median of the whole tensor: a 1-D view of its bytes
            x = raw_view(ctx.b, _contiguous_of(ctx, x), [int(np.prod(x.sizes))], [0])
        order = list(range(len(x.sizes)))
        x = clone_dim_order(ctx.b, x, order) if needs_relayout(x.sizes) else raw_view(ctx.b, x, x.sizes, order)
        sizes = [k if d == dim and k is not None else s for d, s in enumerate(x.sizes)]
        values = new_act(ctx.b, x.dtype, sizes, x.scale, x.zp, dim_order=order)
        indices = new_act(ctx.b, ScalarType.LONG, sizes, dim_order=order)
        if k is None:
            ctx.b.call("aten::sort.values", self=x.value, dim=dim, descending=key[2], values=values.value,
                       indices=indices.value)
        else:
            ctx.b.call("aten::topk.values", self=x.value, k=int(k), dim=dim, largest=key[2], sorted=True,
                       values=values.value, indices=indices.value)
        results = (values, indices)
        if pick is not None:
            picked = []
            for r in results:
                one = new_act(ctx.b, r.dtype, [1 if d == dim else s for d, s in enumerate(sizes)], r.scale, r.zp,
                              dim_order=order)
                ctx.b.call("aten::slice_copy.Tensor_out", self=r.value, dim=dim, start=int(pick),
                           end=int(pick) + 1, step=1, out=one.value)
                picked.append(one if key[5] else raw_view(ctx.b, one, n.shape, list(range(len(n.shape)))))
            results = tuple(picked)
        ctx.ordered[key] = tuple(clone_dim_order(ctx.b, r, CHANNELS_LAST) if needs_relayout(r.sizes)
                                 else raw_view(ctx.b, r, r.sizes, layout(r.sizes)) for r in results)
    return ctx.ordered[key]


_INTEGER_SORTS = (ScalarType.LONG, ScalarType.INT)


def _contiguous_of(ctx, x):
    """x with a contiguous dim order (a copy only when the bytes move)."""
    order = list(range(len(x.sizes)))
    return clone_dim_order(ctx.b, x, order) if needs_relayout(x.sizes) else raw_view(ctx.b, x, x.sizes, order)


def _int_ordering(ctx, n: Node):
    """(dim, k, pick, rule) of an ordering of an int64 / int32 value
    (capture_int_sort): sort / topk / kthvalue as they are (the integer
    kernels of aten::sort.values / topk.values); median / nanmedian (no NaN
    among integers) as the pick at (n - 1) // 2 of the stable ascending
    order, the median kernel's own rule (dim None: over the whole tensor's
    1-D view). mode / cummax / cummin: lowering_int_rules."""
    a = n.attrs
    rule = a.get("rule")
    if rule is None:
        return a["dim"], a["k"], a.get("pick"), None
    x = ctx.get(n.inputs[0])
    count = int(np.prod(x.sizes)) if a["dim"] is None else (x.sizes[a["dim"]] if x.sizes else 1)
    pick = (count - 1) // 2
    return (0 if a["dim"] is None else a["dim"]), pick + 1, pick, None


def op_sort(ctx, n: Node):
    """The values of torch.sort / topk / median / mode / cummax...: the
    input's int8 bytes reordered or picked."""
    ordered = _ordered(ctx, n)
    if ordered is None:
        return None
    values = ordered[0]
    if values.dtype == ScalarType.CHAR and (values.scale, values.zp) != tuple(n.qparams):
        return ctx.refuse(n, "the output's int8 grid differs from the input's: the sort moves bytes")
    return values


def op_sort_indices(ctx, n: Node):
    """The int64 positions of torch.sort / topk / argsort along dim."""
    ordered = _ordered(ctx, n)
    return None if ordered is None else ordered[1]


def op_index_to_float(ctx, n: Node):
    """The model's `.float()` of an index: int64 to fp32 (the layers after
    it quantize it on first int8 use)."""
    x = ctx.get(n.inputs[0])
    out = new_act(ctx.b, ScalarType.FLOAT, x.sizes)
    ctx.b.call("dim_order_ops::_to_dim_order_copy.out", self=x.value, non_blocking=False, dim_order=None,
               out=out.value)
    return out


def op_to_index(ctx, n: Node):
    """The model's x.long() / x.int() of a float value: the value in fp32
    (dequantized), then _to_dim_order_copy into int64 / int32, which
    truncates toward zero and fails the run on NaN, infinity or a value
    outside the integer type. In the value's own dim order, so a 4-D index
    is channels-last like every 4-D value."""
    x = ctx.f(n.inputs[0])
    dtype = ScalarType.LONG if n.attrs["dtype"] == "int64" else ScalarType.INT
    out = new_act(ctx.b, dtype, x.sizes)
    ctx.b.call("dim_order_ops::_to_dim_order_copy.out", self=x.value, non_blocking=False, dim_order=None,
               out=out.value)
    return out


def op_embedding(ctx, n: Node):
    """aten::embedding.out: rows of the table, quantized per tensor on the
    node's grid (the table's own range, so each row is exact to half a
    step), picked by the int64 ids; the kernel checks every id against the
    table. Its output is contiguous: capture takes ids of rank 1 or 2 only,
    so it is never a 4-D (channels-last) value. A table computed in the
    program (x[:, idx] by an argmax: capture_tensor_index) is its int8
    value, whose grid the rows keep."""
    ids = ctx.get(n.inputs[0])
    s, z = n.qparams
    if len(n.inputs) == 2:
        # a table computed in the program ([rows, dim], so contiguous): its int8 bytes, on its grid
        table = ctx.q(n.inputs[1])
        if (table.scale, table.zp) != (s, z):
            return ctx.refuse(n, "the output's int8 grid differs from the table's: the lookup copies bytes")
    else:
        table = K.quantized_constant(ctx.b, np.asarray(n.attrs["weight"], np.float32), s, z)
    out = new_act(ctx.b, ScalarType.CHAR, n.shape, s, z)
    ctx.b.call("aten::embedding.out", weight=table.value, indices=ids.value, padding_idx=-1,
               scale_grad_by_freq=False, sparse=False, out=out.value)
    return out


def _window_pool(ctx, n: Node, indices: bool) -> Act:
    """ptec::window_max.out over the node's listed windows (pool_indices):
    on the int8 codes (a positive scale keeps their order, and the maximum
    is one of them: exact on the input's grid), or on an fp32 input from
    the fallback as it is. The kernel takes any dim order, so a 4-D value
    stays channels-last, and so is a 4-D out."""
    src = ctx.own(n.inputs[0])
    x = src if src.dtype == ScalarType.FLOAT else ctx.q(n.inputs[0])
    if indices:
        out = new_act(ctx.b, ScalarType.LONG, n.shape)
    else:
        if x.dtype == ScalarType.CHAR and (x.scale, x.zp) != tuple(n.qparams):
            return ctx.refuse(n, "the output's int8 grid differs from the input's: the pool copies bytes")
        out = new_act(ctx.b, x.dtype, n.shape, x.scale, x.zp)
    ctx.b.call("ptec::window_max.out", self=x.value, windows=ctx.b.constant(np.asarray(n.attrs["windows"], np.int32)),
               out=out.value)
    return out


def op_window_argmax(ctx, n: Node):
    return _window_pool(ctx, n, True)


def op_window_max(ctx, n: Node):
    return _window_pool(ctx, n, False)


def op_max_unpool(ctx, n: Node):
    """ptec::max_unpool.out: the values' int8 codes at their int64 indices,
    every other element the zero point (0.0 exactly on the values' grid,
    which the output keeps: PASS_THROUGH); fp32 values from the fallback
    unpool in fp32. Indices that are not int64 (a float value) are refused."""
    idx = ctx.get(n.inputs[1])
    if idx.dtype != ScalarType.LONG:
        return ctx.refuse(n, "its indices are not a max pool's int64 indices")
    src = ctx.own(n.inputs[0])
    x = src if src.dtype == ScalarType.FLOAT else ctx.q(n.inputs[0])
    if x.dtype == ScalarType.CHAR and (x.scale, x.zp) != tuple(n.qparams):
        return ctx.refuse(n, "the output's int8 grid differs from the values': the unpool copies bytes")
    out = new_act(ctx.b, x.dtype, n.shape, x.scale, x.zp)
    ctx.b.call("ptec::max_unpool.out", self=x.value, indices=idx.value,
               zero_point=int(x.zp) if x.dtype == ScalarType.CHAR else 0, out=out.value)
    return out


def op_random_dropout(ctx, n: Node):
    """ptec::random_dropout.out in int8 (random_layers): the output's grid
    is the input's scaled by 1 / (1 - p) (quantize), so kept codes are
    copied and dropped ones are the zero point."""
    x = ctx.q(n.inputs[0])
    s, z = n.qparams
    if z != x.zp or not math.isclose(s, x.scale / (1.0 - n.attrs["p"]), rel_tol=1e-6):
        return ctx.refuse(n, "the output's int8 grid is not the input's scaled by 1 / (1 - p)")
    out = new_act(ctx.b, ScalarType.CHAR, n.shape, s, z)
    ctx.b.call("ptec::random_dropout.out", self=x.value, p=float(n.attrs["p"]), mask_dims=int(n.attrs["mask_dims"]),
               zero_point=int(z), seed=int(n.attrs["seed"]), out=out.value)
    return out


def op_random_fractional_pick(ctx, n: Node):
    """ptec::random_fractional_pick.out in int8 (random_layers): a copy of
    window maxima, on the input's grid (PASS_THROUGH)."""
    x = ctx.q(n.inputs[0])
    if (x.scale, x.zp) != tuple(n.qparams):
        return ctx.refuse(n, "the output's int8 grid differs from the input's: the pick copies bytes")
    out = new_act(ctx.b, ScalarType.CHAR, n.shape, x.scale, x.zp)
    ctx.b.call("ptec::random_fractional_pick.out", windows=x.value, kernel_size=[int(k) for k in n.attrs["kernel"]],
               seed=int(n.attrs["seed"]), out=out.value)
    return out


def op_gather(ctx, n: Node):
    """aten::gather.out: self's entries picked along dim by an int64 index
    computed in the program (argmax's), a copy of int8 bytes on self's grid
    (PASS_THROUGH; an fp32 input from the fallback is taken as it is); the
    kernel checks every index against self. Upstream's kernel indexes as
    contiguous, so a 4-D channels-last tensor is made contiguous first and
    the 4-D out is made channels-last after."""
    src = ctx.own(n.inputs[0])
    # int64 positions (capture_selection_mix: a sort's order at a computed row) are copied as they are
    x = src if src.dtype in (ScalarType.FLOAT, ScalarType.LONG) else ctx.q(n.inputs[0])
    if x.dtype == ScalarType.CHAR and (x.scale, x.zp) != tuple(n.qparams):
        return ctx.refuse(n, "the output's int8 grid differs from the input's: the gather copies bytes")
    index = ctx.get(n.inputs[1])
    if index.dtype != ScalarType.LONG:
        return ctx.refuse(n, "the index is not an int64 tensor computed in the program")
    order = list(range(len(n.shape)))
    out = new_act(ctx.b, x.dtype, n.shape, x.scale, x.zp, dim_order=order)
    ctx.b.call("aten::gather.out", self=_in_dim_order(ctx, x, order).value, dim=int(n.attrs["dim"]),
               index=_in_dim_order(ctx, index, order).value, sparse_grad=False, out=out.value)
    return _in_dim_order(ctx, out, layout(n.shape))


def _int64_index(ctx, name: str):
    """An index tensor of flat_index: an int64 value of the program (an
    argmax, x.long(), an ids input) as contiguous bytes, or a constant index
    (a buffer) as an int64 constant; None for anything else."""
    node = ctx.g.node(name)
    if node.op == "constant":
        return ctx.b.constant(np.asarray(node.attrs["value"]).astype(np.int64))
    x = ctx.get(name)
    if x.dtype != ScalarType.LONG:
        return None
    order = list(range(len(x.sizes)))
    return (clone_dim_order(ctx.b, x, order) if needs_relayout(x.sizes) else raw_view(ctx.b, x, x.sizes, order)).value


def op_flat_index(ctx, n: Node):
    """ptec::flat_index.out: x[i, j]'s index tensors (capture_tensor_index)
    as one int64 position in the indexed dims' block, each index checked
    and wrapped by the kernel; out has the indices' broadcast shape
    (attrs shape), contiguous, viewed flat for the row lookup after it."""
    indices = [_int64_index(ctx, i) for i in n.inputs]
    if any(i is None for i in indices):
        return ctx.refuse(n, "an index is not an int64 tensor (computed in the program, or a constant)")
    shape = [int(s) for s in n.attrs["shape"]]
    out = new_act(ctx.b, ScalarType.LONG, shape, dim_order=list(range(len(shape))))
    ctx.b.call("ptec::flat_index.out", indices=indices, sizes=[int(s) for s in n.attrs["sizes"]], out=out.value)
    return raw_view(ctx.b, out, n.shape, list(range(len(n.shape))))


def op_bag_positions(ctx, n: Node):
    """ptec::bag_positions.out: nn.EmbeddingBag's bags from its int64
    offsets (a program input), as [bags, length] positions into the ids'
    rows and one filler row after them (embedding_bag); the kernel checks
    the offsets as torch does."""
    offsets = ctx.get(n.inputs[0])
    if offsets.dtype != ScalarType.LONG or len(offsets.sizes) != 1:
        return ctx.refuse(n, "the offsets are not a 1-D int64 tensor")
    out = new_act(ctx.b, ScalarType.LONG, n.shape, dim_order=[0, 1])
    ctx.b.call("ptec::bag_positions.out", offsets=offsets.value, length=int(n.attrs["length"]),
               include_last_offset=bool(n.attrs["include_last"]), out=out.value)
    return out


LOWERINGS = {name[3:]: fn for name, fn in list(globals().items())
             if name.startswith("op_") and callable(fn)}
# bool values: comparisons, logical ops, where, casts (their own module)
LOWERINGS.update(BOOL_LOWERINGS)
# integer arithmetic on index values (its own module)
LOWERINGS.update(INT_LOWERINGS)
