"""The cortex_m lowering of nodes `--a16` selected (attrs["a16"], set by
ptec.quantize.mark_a16): 16-bit activations with 8-bit weights through the
`ptec::*_a16` kernels (ptec.backends.cortex_m.kernels_a16). Each function
returns the node's int16 value, or None when the node's form has no int16
kernel (a constant operand, a padded average counting its padding, a
softmax over a dim that is not innermost): the node then takes its int8
lowering, which the quantizer prepared too, so a model mixes the two
freely. Operands come through ctx.q16 (an int8 or float producer is
converted onto the operand's int16 grid); int8 consumers of an int16 value
get it through ctx.q.
"""
from __future__ import annotations

from typing import List, Optional

import numpy as np

from ... import quant_math as qm
from ...ir import Node, permutation
from ...lowered import Act, new_act, raw_view, view
from ...pte.program_builder import CHANNELS_LAST
from ...pte.schema import ScalarType
from . import kernels_a16 as K16
from .lowering import cat_acts, edge_pad_act, permute_act, slice_act


def _tensors(ctx, n: Node) -> Optional[List[Act]]:
    """n's operands as int16, or None if one is a constant (the int8
    lowering folds constants into LUTs and quantized constants)."""
    if any(ctx.g.node(i).op == "constant" for i in n.inputs):
        return None
    return [ctx.q16(i) for i in n.inputs]


def op_conv2d(ctx, n: Node):
    xs = _tensors(ctx, n)
    if xs is None or n.attrs.get("weight_bits", 8) != 8:
        return None
    a = n.attrs
    return K16.conv2d(ctx.b, xs[0], a["weight_q"], a.get("bias"), a["weight_scales"], a["scale16"],
                      a["stride"], a["padding"], a["dilation"], a["groups"], a.get("act"))


def op_linear(ctx, n: Node):
    xs = _tensors(ctx, n)
    if xs is None or n.attrs.get("weight_bits", 8) != 8:
        return None
    a, x = n.attrs, xs[0]
    if len(x.sizes) == 4:       # over W of a channels-last tensor: rows must be contiguous
        rows = view(ctx.b, x, [int(np.prod(x.sizes[:3])), x.sizes[3]])
        y = K16.linear(ctx.b, rows, a["weight_q"], a.get("bias"), float(a["weight_scales"][0]),
                       a["scale16"], a.get("act"))
        return view(ctx.b, y, n.shape)
    return K16.linear(ctx.b, x, a["weight_q"], a.get("bias"), float(a["weight_scales"][0]),
                      a["scale16"], a.get("act"))


def _broadcastable(ctx, n: Node) -> bool:
    """Equal shapes, or one operand a per-channel [1, C, 1, 1] (or [C])
    vector of a 4-D result: the forms the int8 add and mul take too."""
    shapes = [list(ctx.g.node(i).shape) for i in n.inputs]
    if shapes[0] == shapes[1]:
        return True
    out = list(n.shape)
    return len(out) == 4 and any(s in ([1, out[1], 1, 1], [out[1]]) for s in shapes) \
        and any(s == out for s in shapes)


def op_add(ctx, n: Node):
    if not _broadcastable(ctx, n):
        return None
    xs = _tensors(ctx, n)
    return None if xs is None else K16.add(ctx.b, xs[0], xs[1], n.attrs["scale16"], n.attrs.get("act"))


def op_mul(ctx, n: Node):
    if not _broadcastable(ctx, n):
        return None
    xs = _tensors(ctx, n)
    return None if xs is None else K16.mul(ctx.b, xs[0], xs[1], n.attrs["scale16"])


def op_avg_pool2d(ctx, n: Node):
    a = n.attrs
    if any(a["padding"]) and a["count_include_pad"]:
        return None     # the int16 kernel averages in-bounds positions only
    xs = _tensors(ctx, n)
    return None if xs is None else K16.avg_pool2d(ctx.b, xs[0], a["kernel"], a["stride"], a["padding"],
                                                  a["ceil_mode"])


def op_adaptive_avg_pool2d(ctx, n: Node):
    xs = _tensors(ctx, n)
    if xs is None:
        return None
    _, _, h, w = xs[0].sizes
    oh, ow = n.attrs["output_size"]
    k = [h // oh, w // ow]
    return K16.avg_pool2d(ctx.b, xs[0], k, k, [0, 0], False)


def op_mean(ctx, n: Node):
    shape = ctx.g.node(n.inputs[0]).shape
    if len(shape) != 4 or sorted(d % 4 for d in n.attrs["dim"]) != [2, 3]:
        return None
    xs = _tensors(ctx, n)
    if xs is None:
        return None
    y = K16.avg_pool2d(ctx.b, xs[0], shape[2:], shape[2:], [0, 0], False)
    return y if n.attrs["keepdim"] else view(ctx.b, y, y.sizes[:2])


def op_max_pool2d(ctx, n: Node):
    a = n.attrs
    if list(a["dilation"]) != [1, 1]:
        return None                     # the int16 pool has no dilation: int8 or fp32 takes it
    xs = _tensors(ctx, n)
    if xs is None:
        return None
    lo, hi = K16.activation_range16(a.get("act"), xs[0].scale)
    return K16.max_pool2d(ctx.b, xs[0], a["kernel"], a["stride"], a["padding"], a["ceil_mode"], lo, hi)


def op_clamp(ctx, n: Node):
    xs = _tensors(ctx, n)
    if xs is None:
        return None
    x = xs[0]
    lo, hi = K16.activation_range16((n.attrs["lo"], n.attrs["hi"]), x.scale)
    if len(x.sizes) == 4:
        return K16.max_pool2d(ctx.b, x, [1, 1], [1, 1], [0, 0], False, lo, hi)
    # any other rank is contiguous: the bytes of [1, numel, 1, 1] channels-last
    flat = [1, int(np.prod(x.sizes)), 1, 1]
    y = K16.max_pool2d(ctx.b, view(ctx.b, x, flat), [1, 1], [1, 1], [0, 0], False, lo, hi)
    return view(ctx.b, y, x.sizes)


def op_softmax(ctx, n: Node):
    shape = ctx.g.node(n.inputs[0]).shape
    r = len(shape)
    d = n.attrs["dim"] % r
    innermost = (d == 1) if r == 4 else (d == r - 1)
    if not innermost:
        return None
    xs = _tensors(ctx, n)
    if xs is None:
        return None
    x = xs[0]
    if r == 4:        # channels-last: the channel dim is physically innermost
        phys = [x.sizes[i] for i in CHANNELS_LAST]
        rows = raw_view(ctx.b, x, [int(np.prod(phys[:-1])), phys[-1]], [0, 1])
        y = K16.softmax(ctx.b, rows)
        return raw_view(ctx.b, y, x.sizes, CHANNELS_LAST)
    rows = view(ctx.b, x, [int(np.prod(x.sizes[:-1])), x.sizes[-1]]) if r != 2 else x
    y = K16.softmax(ctx.b, rows)
    return view(ctx.b, y, x.sizes) if r != 2 else y


def op_reshape(ctx, n: Node):
    """A view keeps int16 when its input was made in int16 (a flatten
    between a16 layers costs nothing); otherwise the int8 view."""
    src = n.inputs[0]
    if not ctx.g.node(src).attrs.get("a16") or src not in ctx.env16:
        return None
    return view(ctx.b, ctx.q16(src), n.attrs["shape"])


# Data moves that keep int16 (quantize.A16_MOVES): they copy values, so an
# int16 value moved stays on its grid, and an int8 one would have to be
# rounded to int8 first (a seq-first nn.LSTM's output transposed to the
# program output, a reflect-padded conv's input).
_MOVES = ("permute", "slice", "pad", "cat")


def _read_in_int16(ctx, name: str) -> bool:
    """name's value is read as int16: a program output (dequantized from
    int16, unless the program's outputs are int8), an a16 layer's operand,
    or a data move kept in int16 that leads to either."""
    if name in ctx.g.outputs and not ctx.int8_io:
        return True
    return any(u.attrs.get("a16") and (u.op not in _MOVES or _read_in_int16(ctx, u.name))
               for u in ctx.g.users(name))


def _moved16(ctx, n: Node, name: str) -> Optional[Act]:
    """The operand `name` of the data move n as int16, or None (the move
    takes its int8 lowering): int16 when n's value is read as int16 and
    the operand has an int16 form already (made by an a16 layer or a move,
    or converted for one) or is fp32 (a program input), which is then
    quantized straight to int16 rather than through int8."""
    return _operand16(ctx, name) if _read_in_int16(ctx, n.name) else None


def _has16(ctx, name: str) -> bool:
    """name has an int16 form, or is fp32 and gets one without an int8 rounding."""
    node = ctx.g.node(name)
    if node.op == "constant" or "scale16" not in node.attrs:
        return False
    made = ctx.made(name)
    return name in ctx.env16 or name in ctx.env_f or (made is not None and made.dtype == ScalarType.FLOAT)


def _operand16(ctx, name: str) -> Optional[Act]:
    return ctx.q16(name) if _has16(ctx, name) else None


def _permute_copy(b, x: Act, perm) -> Act:
    """aten::permute_copy of a contiguous tensor (any dtype: cortex_m::transpose takes int8 only)."""
    out = new_act(b, x.dtype, [x.sizes[p] for p in perm], x.scale, x.zp, dim_order=list(range(len(perm))))
    b.call("aten::permute_copy.out", self=x.value, dims=[int(p) for p in perm], out=out.value)
    return out


def op_permute(ctx, n: Node):
    x = _moved16(ctx, n, n.inputs[0])
    if x is None:
        return None
    return permute_act(ctx.b, x, permutation(n, len(x.sizes)), _permute_copy)


def op_slice(ctx, n: Node):
    x = _moved16(ctx, n, n.inputs[0])
    return None if x is None else slice_act(ctx, n, x)


def op_pad(ctx, n: Node):
    """Reflect and replicate padding copy values (aten::reflection_pad /
    replication_pad take any dtype); a constant pad stays int8
    (cortex_m::pad takes int8 only)."""
    if n.attrs.get("mode", "constant") not in ("reflect", "replicate"):
        return None
    x = _moved16(ctx, n, n.inputs[0])
    return None if x is None else edge_pad_act(ctx, n, x)


def op_cat(ctx, n: Node):
    """A cat whose operands are all int16 on one grid (a circular pad's
    pieces: slices of one value) copies them; any other stays int8."""
    if not _read_in_int16(ctx, n.name):
        return None
    if not all(_has16(ctx, i) for i in n.inputs):
        return None
    xs = [ctx.q16(i) for i in n.inputs]
    if len({float(x.scale) for x in xs}) != 1:
        return None
    return cat_acts(ctx, n, xs)


def op_lstm(ctx, n: Node):
    """ptec::quantized_lstm_a16 (docs/kernels.md "int16 LSTM"): one nn.LSTM
    layer over [B, T, I] with int16 input, hidden state and output (the
    output's grid, attrs["scale16"], is the hidden state's too) and the
    int8 layer's per-gate weights. Gate k's products are requantized to
    Q3.12 (s_x * s_wx_k * 2^12 and s_h * s_wh_k * 2^12, 64-bit); the input
    bias is rounded on s_x * s_wx_k as int64, the hidden side has none
    (zero points are 0). The cell is int16 at 2^cell_scale_power as in the
    int8 layer. None (the int8 kernel) when a gate's requantization would
    need a shift above 7, and for a --stateful layer (the int16 kernel
    takes no state: the int8 kernel carries it)."""
    if ctx.g.node(n.inputs[0]).op == "constant" or n.attrs.get("stateful"):
        return None
    a = n.attrs
    hidden = int(a["hidden"])
    s_h = float(a["scale16"])
    x = ctx.q16(n.inputs[0])
    if len(x.sizes) != 3:
        return None
    s_x = float(x.scale)
    pairs = ([qm.requant_multiplier(s_x * float(s) * 4096.0) for s in a["weight_scales_ih"]]
             + [qm.requant_multiplier(s_h * float(s) * 4096.0) for s in a["weight_scales_hh"]])
    if any(sh > 7 for _, sh in pairs):
        return None
    power = int(a["cell_scale_power"])
    to_cell = qm.quantize_multiplier(2.0 ** (-30 - power))
    output = qm.quantize_multiplier(2.0 ** -30 / s_h)
    for _, sh in (to_cell, output):
        qm.check_shift(int(sh), "lstm")
    bias = a.get("bias")
    bx = K16.bias64(np.zeros(4 * hidden) if bias is None else bias, s_x,
                    np.repeat(np.asarray(a["weight_scales_ih"], np.float64), hidden), 4 * hidden)
    out = new_act(ctx.b, K16.I16, list(n.shape), s_h, 0)
    ctx.b.call("ptec::quantized_lstm_a16.out", input=x.value,
               input_weights=ctx.b.constant(np.asarray(a["weight_q_ih"], np.int8)),
               hidden_weights=ctx.b.constant(np.asarray(a["weight_q_hh"], np.int8)),
               input_effective_bias=ctx.b.constant(bx), hidden_effective_bias=None,
               gate_multipliers=ctx.b.constant(np.array([m for m, _ in pairs], np.int32)),
               gate_shifts=ctx.b.constant(np.array([sh for _, sh in pairs], np.int32)),
               forget_to_cell_multiplier=1 << 30, forget_to_cell_shift=-14,
               input_to_cell_multiplier=to_cell[0], input_to_cell_shift=to_cell[1],
               output_multiplier=output[0], output_shift=output[1], cell_clip=0, cell_scale_power=power,
               batch_first=True, out=out.value)
    return out


LOWERINGS_A16 = {name[3:]: fn for name, fn in list(globals().items())
                 if name.startswith("op_") and callable(fn)}
