"""Which graph nodes the Ethos-U takes, and the NPU operation each becomes.

A node goes to the NPU only when the NPU computes exactly what the cortex_m
kernel computes for it (the same int8 bytes), by the rules the spec pins
with an oracle (ethos-u-npu.md §5, §8). Everything else stays on the CPU,
with the reason. The operations:

* conv2d (groups 1) -> CONV; depthwise (groups = in = out channels) ->
  DEPTHWISE; linear -> CONV with a 1x1 kernel over a 1 x rows x features map.
  Per-channel scale records carry ptec's own (multiplier, shift) pairs, so
  the DBL rounding of the output stage reproduces CMSIS-NN's requantization
  (§5.1: DBL equals TFLite's MultiplyByQuantizedMultiplier, which equals
  CMSIS-NN's doubling-high-multiply and rounding shift).
* max_pool2d -> POOL MAX; a clamp -> POOL MAX 1x1 with the clamp.
* avg_pool2d / adaptive_avg_pool2d / mean over H,W without padding -> POOL
  AVERAGE with a global scale chosen so that the NPU's rounding of sum * M
  / 2^s equals the CPU's sum / count rounded half away from zero for every
  possible sum (checked exhaustively here, not assumed).
* sigmoid, tanh and the other element-wise functions -> POOL MAX 1x1 with a
  LUT activation holding the cortex_m kernel's own 256-entry table (§5.3).
* reshape that keeps the bytes -> no operation: the same region-1 bytes.

Refused with the reason: tensor + tensor add/mul (8-bit elementwise operand
scaling has no oracle, §8.4), padded average pools (the count rule is not
public, §5.2), batches above 1, strides above 3, dilations above 2, and
anything whose block does not fit SHRAM (block_config).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import numpy as np

from ... import quant_math as qm
from ...ir import UNARY, Node
from .block_config import BlockConfigError, OpShape, choose_block_config
from .npu_config import NpuConfig

MAX_STRIDE = 3
MAX_DILATION = 2
MAX_KERNEL = 64                  # dilated extent per axis (KERNEL_*_M1 is 16-bit; Vela's limit)
MAX_POOL_WINDOW = 256            # per axis, average and max pool (Vela's limit)
MAX_DIM = 65536                  # the *_M1 registers are 16-bit
LUT_OPS = ("sigmoid", "tanh") + tuple(UNARY)


@dataclass
class Fmap:
    """A feature map in region 1: NHWC, 8-bit, contiguous."""
    h: int
    w: int
    c: int

    @property
    def nbytes(self) -> int:
        return self.h * self.w * self.c


@dataclass
class NpuOp:
    node: str                        # the graph node it computes
    kind: str                        # conv, depthwise, pool_max, pool_avg
    ifm: str                         # value names (graph nodes)
    ofm: str
    ifm_shape: Fmap
    ofm_shape: Fmap
    ifm_zp: int = 0
    ofm_zp: int = 0
    kernel: Tuple[int, int] = (1, 1)
    stride: Tuple[int, int] = (1, 1)
    dilation: Tuple[int, int] = (1, 1)
    pad: Tuple[int, int, int, int] = (0, 0, 0, 0)     # top, left, bottom, right
    act: Tuple[int, int] = (qm.QMIN, qm.QMAX)
    weights: Optional[np.ndarray] = None              # OHWI int8 (I = 1 for depthwise)
    bias: Optional[np.ndarray] = None                 # int32 per OFM channel
    scales: Optional[List[Tuple[int, int]]] = None    # (M, NPU shift) per OFM channel
    ofm_scale: Optional[Tuple[int, int]] = None       # global (M, shift): average pool
    lut: Optional[np.ndarray] = None                  # 256 int8, indexed by value + 128
    block: object = None                              # block_config.BlockConfig
    ofm_at: int = 0                                   # copy: byte offset of its part in the OFM
    ofm_whole: Optional[Fmap] = None                  # copy: the whole OFM (its strides and size)
    ifm2: Optional[str] = None                        # add, mul: the second operand
    ifm2_zp: int = 0
    ifm2_shape: Optional[Fmap] = None                 # add, mul: IFM2 when it is broadcast
    requant: Dict[str, Tuple[int, int]] = field(default_factory=dict)   # add, mul: CMSIS-NN's (M, shift)

    @property
    def macs(self) -> int:
        if self.weights is None:
            return 0
        o, kh, kw, i = self.weights.shape
        return self.ofm_shape.h * self.ofm_shape.w * o * kh * kw * i

    def op_shape(self) -> OpShape:
        if self.kind in ELEMENTWISE:      # its biggest step: 32-bit operands, a tensor IFM2
            f = (self.ofm_shape.h, self.ofm_shape.w, self.ofm_shape.c)
            return OpShape("elementwise", f, f, ifm_bits=32, ofm_bits=32, has_ifm2=True)
        kind = {"conv": "conv", "depthwise": "depthwise"}.get(self.kind, "pool")
        return OpShape(kind, (self.ifm_shape.h, self.ifm_shape.w, self.ifm_shape.c),
                       (self.ofm_shape.h, self.ofm_shape.w, self.ofm_shape.c),
                       tuple(self.kernel), tuple(self.stride), tuple(self.dilation),
                       uses_lut=self.lut is not None)


class NotForNpu(Exception):
    """Why a node stays on the CPU; one line."""


# ---------------------------------------------------------------------------

def _fmap(shape) -> Fmap:
    """A value's NPU view: 4-D [N,C,H,W] as H x W x C (N = 1); 2-D/3-D as
    1 x rows x last dim, the bytes of a contiguous tensor."""
    shape = [int(d) for d in shape]
    if len(shape) == 4:
        n, c, h, w = shape
        if n != 1:
            raise NotForNpu(f"batch {n}: the NPU operations here take one image")
        f = Fmap(h, w, c)
    elif len(shape) in (2, 3):
        f = Fmap(1, int(np.prod(shape[:-1])), shape[-1])
    else:
        raise NotForNpu(f"rank-{len(shape)} tensor")
    if max(f.h, f.c) > MAX_DIM:         # wider maps run in stripes (codegen.width_stripes)
        raise NotForNpu(f"a height or depth of {shape} exceeds the NPU's 65,536")
    return f


def _pads(in_size: int, out_size: int, k_extent: int, stride: int, before: int) -> Tuple[int, int]:
    """Explicit (before, after) pads that make the extent the NPU infers from
    the registers (§4.2) equal the real input size, so a tap inside the input
    is never taken for padding; an unused input tail needs no pad."""
    after = (out_size - 1) * stride + k_extent - before - in_size
    return before, max(after, 0)


def _qparams(g, name) -> Tuple[float, int]:
    s, z = g.node(name).qparams
    return float(s), int(z)


def _check_window(kernel, stride, dilation=(1, 1), limit=MAX_KERNEL):
    if max(stride) > MAX_STRIDE:
        raise NotForNpu(f"stride {tuple(stride)}: the NPU's limit is {MAX_STRIDE}")
    if max(dilation) > MAX_DILATION:
        raise NotForNpu(f"dilation {tuple(dilation)}: the NPU's limit is {MAX_DILATION}")
    ext = [d * (k - 1) + 1 for k, d in zip(kernel, dilation)]
    if max(ext) > limit:
        raise NotForNpu(f"kernel extent {tuple(ext)}: the NPU's limit is {limit}")


def average_scale(count: int) -> Tuple[int, int]:
    """(M, s) such that the NPU's DBL rounding of sum * M >> s (§5.1) equals
    sum / count rounded half away from zero (cortex-m-ops.md §3.13) for every
    sum of `count` int8 values. M ~ 2^s / count with s = 31 + ceil(log2
    count): then ties become exact multiples whose sign nudge of 2^30 rounds
    them away from zero, and every other value stays clear of the boundary.
    Verified over all sums, so a count where this fails is refused."""
    if count == 1:
        return 1, 0                                       # R(p, 0) = p
    c = (count - 1).bit_length()
    shift = 31 + c                                        # > 31: DBL adds the sign nudge
    m = round((1 << shift) / count)
    if not 0 < m < 1 << 32 or shift > 63:
        raise NotForNpu(f"average over {count} values has no exact NPU scale")
    sums = np.arange(-128 * count, 127 * count + 1, dtype=np.int64)
    p = sums * m
    nudge = np.where(p >= 0, 1 << 30, -(1 << 30))
    npu = (p + (1 << (shift - 1)) + nudge) >> shift
    half = count // 2
    cpu = np.where(sums > 0, sums + half, sums - half)
    cpu = np.sign(cpu) * (np.abs(cpu) // count)          # C division truncates toward zero
    if not np.array_equal(npu, cpu):
        raise NotForNpu(f"average over {count} values: the NPU's rounding cannot match the "
                        "CPU's for every sum")
    return int(m), shift


def _act_range(n: Node) -> Tuple[int, int]:
    act = n.attrs.get("act")
    if not act:
        return qm.QMIN, qm.QMAX
    return qm.activation_range(act[0], act[1], n.qparams[0], n.qparams[1])


# ---------------------------------------------------------------------------
# One function per op: the NpuOp of node n, or NotForNpu

def _conv(g, n: Node) -> NpuOp:
    a = n.attrs
    x = g.node(n.inputs[0])
    if len(x.shape) != 4:
        raise NotForNpu("conv input is not 4-D")
    _, cin, h, w = x.shape
    w8 = np.asarray(a["weight_q"], np.int8)
    cout, cin_g, kh, kw = w8.shape
    groups = int(a["groups"])
    if groups == 1:
        kind = "conv"
    elif groups == cin == cout:
        kind = "depthwise"
    else:
        raise NotForNpu(f"grouped convolution (groups {groups}, {cin} -> {cout} channels): the "
                        "NPU has conv and depthwise with multiplier 1 only")
    dil, pad = tuple(a["dilation"]), tuple(a["padding"])
    ifm, ofm = _fmap(x.shape), _fmap(n.shape)
    stride = _one_window_stride(tuple(a["stride"]), ofm)
    _check_window((kh, kw), stride, dil)
    if any(p >= d * (k - 1) + 1 for p, k, d in zip(pad, (kh, kw), dil)):
        raise NotForNpu(f"padding {pad} is not smaller than the kernel")
    s_in, z_in = _qparams(g, x.name)
    s_out, z_out = n.qparams
    sig = np.float64(s_in) * np.asarray(a["weight_scales"], np.float64) / np.float64(s_out)
    mults, shifts = qm.per_channel_multipliers(np.broadcast_to(sig, (cout,)))
    for s in shifts:
        qm.check_shift(int(s), "conv2d")
    bias = np.zeros(cout, np.int64) if a.get("bias_q") is None else np.asarray(a["bias_q"], np.int64)
    ext = [d * (k - 1) + 1 for k, d in zip((kh, kw), dil)]
    top, bottom = _pads(h, ofm.h, ext[0], stride[0], pad[0])
    left, right = _pads(w, ofm.w, ext[1], stride[1], pad[1])
    return NpuOp(n.name, kind, x.name, n.name, ifm, ofm, z_in, int(z_out), (kh, kw), stride, dil,
                 (top, left, bottom, right), _act_range(n),
                 weights=np.ascontiguousarray(w8.transpose(0, 2, 3, 1)), bias=bias,
                 scales=[(int(m), 31 - int(s)) for m, s in zip(mults, shifts)])


def flattened_map(g, n: Node) -> Optional[Node]:
    """The 4-D node a linear's input flattens (NCHW order, one image), when
    that flatten reorders bytes: the linear then runs as a CONV whose kernel
    covers the whole map, its weights reordered to match (no flatten runs)."""
    from ...lowered import needs_relayout
    x = g.node(n.inputs[0])
    if x.op != "reshape" or len(x.shape) != 2 or x.shape[0] != 1:
        return None
    m = g.node(x.inputs[0])
    if len(m.shape) != 4 or m.shape[0] != 1 or not needs_relayout(m.shape):
        return None
    if int(np.prod(m.shape)) != x.shape[1] or len(g.users(x.name)) != 1 or x.name in g.outputs:
        return None
    return m


def _linear_over_map(g, n: Node, m: Node) -> NpuOp:
    a = n.attrs
    _, c, h, w = m.shape
    w8 = np.asarray(a["weight_q"], np.int8)
    cout = w8.shape[0]
    _check_window((h, w), (1, 1))
    s_in, z_in = _qparams(g, m.name)
    mult, sh = qm.requant_multiplier(s_in * float(a["weight_scales"][0]) / float(n.qparams[0]))
    qm.check_shift(sh, "linear")
    bias = np.zeros(cout, np.int64) if a.get("bias_q") is None else np.asarray(a["bias_q"], np.int64)
    dense = w8.reshape(cout, c, h, w).transpose(0, 2, 3, 1)          # NCHW flatten -> OHWI
    return NpuOp(n.name, "conv", m.name, n.name, _fmap(m.shape), Fmap(1, 1, cout), z_in,
                 int(n.qparams[1]), kernel=(h, w), act=_act_range(n),
                 weights=np.ascontiguousarray(dense), bias=bias, scales=[(mult, 31 - sh)] * cout)


def _linear(g, n: Node) -> NpuOp:
    a = n.attrs
    m = flattened_map(g, n)
    if m is not None:
        return _linear_over_map(g, n, m)
    x = g.node(n.inputs[0])
    if len(x.shape) not in (2, 3):
        raise NotForNpu(f"linear over a rank-{len(x.shape)} input")
    ifm, ofm = _fmap(x.shape), _fmap(n.shape)
    w8 = np.asarray(a["weight_q"], np.int8)
    cout, cin = w8.shape
    s_in, z_in = _qparams(g, x.name)
    m, s = qm.requant_multiplier(float(s_in) * float(a["weight_scales"][0]) / float(n.qparams[0]))
    qm.check_shift(s, "linear")
    bias = np.zeros(cout, np.int64) if a.get("bias_q") is None else np.asarray(a["bias_q"], np.int64)
    return NpuOp(n.name, "conv", x.name, n.name, ifm, ofm, z_in, int(n.qparams[1]),
                 act=_act_range(n), weights=w8.reshape(cout, 1, 1, cin), bias=bias,
                 scales=[(m, 31 - s)] * cout)


def _same_grid(g, n: Node) -> None:
    if _qparams(g, n.inputs[0]) != (float(n.qparams[0]), int(n.qparams[1])):
        raise NotForNpu("output grid differs from the input's")


def _max_pool(g, n: Node) -> NpuOp:
    a = n.attrs
    x = g.node(n.inputs[0])
    if len(x.shape) != 4:
        raise NotForNpu("pool input is not 4-D")
    _same_grid(g, n)
    kernel, pad = tuple(a["kernel"]), tuple(a["padding"])
    ifm, ofm = _fmap(x.shape), _fmap(n.shape)
    stride = _one_window_stride(tuple(a["stride"]), ofm)
    _check_window(kernel, stride, tuple(a.get("dilation", (1, 1))), MAX_POOL_WINDOW)
    if tuple(a.get("dilation", (1, 1))) != (1, 1):
        raise NotForNpu("dilated max pool")
    # ceil_mode's extra windows read past the input: padding taps, which MAX skips
    top, bottom = _pads(x.shape[2], ofm.h, kernel[0], stride[0], pad[0])
    left, right = _pads(x.shape[3], ofm.w, kernel[1], stride[1], pad[1])
    return NpuOp(n.name, "pool_max", x.name, n.name, ifm, ofm, kernel=kernel, stride=stride,
                 pad=(top, left, bottom, right), act=_act_range(n))


def _one_window_stride(stride, ofm: Fmap):
    """Along an axis with one output the stride moves nothing: 1 then."""
    return (1 if ofm.h == 1 else stride[0], 1 if ofm.w == 1 else stride[1])


def _average(g, n: Node, kernel, stride) -> NpuOp:
    x = g.node(n.inputs[0])
    if len(x.shape) != 4:
        raise NotForNpu("pool input is not 4-D")
    _same_grid(g, n)
    ifm = _fmap(x.shape)
    ofm = _fmap(n.shape if len(n.shape) == 4 else [1, n.shape[1], 1, 1])
    stride = _one_window_stride(stride, ofm)
    _check_window(kernel, stride, limit=MAX_POOL_WINDOW)
    h, w = x.shape[2:]
    if (ofm.h - 1) * stride[0] + kernel[0] > h or (ofm.w - 1) * stride[1] + kernel[1] > w:
        raise NotForNpu("an average window reaches past the input (ceil_mode)")
    return NpuOp(n.name, "pool_avg", x.name, n.name, ifm, ofm, kernel=tuple(kernel),
                 stride=tuple(stride), ofm_scale=average_scale(kernel[0] * kernel[1]))


def _avg_pool(g, n: Node) -> NpuOp:
    a = n.attrs
    if any(a["padding"]):
        raise NotForNpu("padded average pool: the NPU's count rule is not public (spec §5.2)")
    return _average(g, n, tuple(a["kernel"]), tuple(a["stride"]))


def _adaptive_avg_pool(g, n: Node) -> NpuOp:
    x = g.node(n.inputs[0])
    h, w = x.shape[2:]
    oh, ow = n.attrs["output_size"]
    if h % oh or w % ow:
        # windows of unequal sizes, not one POOL: capture expands such pools
        # to linears (interpolate.expand_adaptive_avg_pools); a graph made
        # another way keeps the node on the CPU
        raise NotForNpu(f"adaptive average pool to {[oh, ow]} does not divide its input {[h, w]}")
    k = (h // oh, w // ow)
    return _average(g, n, k, k)


def _mean(g, n: Node) -> NpuOp:
    x = g.node(n.inputs[0])
    if len(x.shape) != 4 or sorted(d % 4 for d in n.attrs["dim"]) != [2, 3]:
        raise NotForNpu("mean over other dimensions than H and W")
    k = tuple(x.shape[2:])
    return _average(g, n, k, k)


def _clamp(g, n: Node) -> NpuOp:
    x = g.node(n.inputs[0])
    s, z = _qparams(g, x.name)
    _same_grid(g, n)
    lo, hi = qm.activation_range(n.attrs["lo"], n.attrs["hi"], s, z)
    f = _fmap(x.shape)
    return NpuOp(n.name, "pool_max", x.name, n.name, f, Fmap(f.h, f.w, f.c), act=(lo, hi))


def _lut(g, n: Node) -> NpuOp:
    from ..cortex_m.kernels import lut_table
    from ..cortex_m.lowering import unary_function
    x = g.node(n.inputs[0])
    s, z = _qparams(g, x.name)
    table = lut_table(unary_function(n), s, z, n.qparams[0], n.qparams[1])
    f = _fmap(x.shape)
    return NpuOp(n.name, "pool_max", x.name, n.name, f, Fmap(f.h, f.w, f.c), lut=table)


ELEMENTWISE = ("add", "mul")


def _cat(g, n: Node) -> List[NpuOp]:
    """cat: each input copied (POOL MAX 1x1, zero points 0, no clamp: the
    bytes unchanged; through the CPU's identity table when its grid is not
    the output's) into its part of the output, addressed by a base offset
    and the whole output's strides (NHWC; ranks 2 and 3 as 1 x rows x last
    dim)."""
    from ..cortex_m.kernels import lut_table
    qp = (float(n.qparams[0]), int(n.qparams[1]))
    rank = len(n.shape)
    dim = int(n.attrs["dim"]) % rank
    whole = _fmap(n.shape)
    if rank == 4:
        axis = {1: "c", 2: "h", 3: "w"}.get(dim)
    else:
        axis = "c" if dim == rank - 1 else ("w" if all(d == 1 for d in n.shape[:dim]) else None)
    if axis is None:
        raise NotForNpu(f"cat over dimension {dim} of a rank-{rank} tensor")
    ops, at = [], 0
    for i in n.inputs:
        part = _fmap(g.node(i).shape)
        step = {"c": 1, "w": whole.c, "h": whole.w * whole.c}[axis]
        # an input on another grid: through the CPU's own identity table (a LUT copy)
        lut = None if _qparams(g, i) == qp else lut_table(lambda v: v, *_qparams(g, i), *qp)
        ops.append(NpuOp(n.name, "pool_max", i, n.name, part, part, ofm_at=at * step, ofm_whole=whole,
                         lut=lut))
        at += {"c": part.c, "w": part.w, "h": part.h}[axis]
    return ops


def npu_ops(g, n: Node, cfg: NpuConfig) -> List[NpuOp]:
    """The NPU operations of node n (several for cat), blocks chosen."""
    if n.op != "cat":
        return [npu_op(g, n, cfg)]
    if n.qparams is None or any(g.node(i).qparams is None for i in n.inputs):
        raise NotForNpu("not quantized")
    ops = _cat(g, n)
    for op in ops:
        try:
            op.block = choose_block_config(cfg, op.op_shape())
        except BlockConfigError as e:
            raise NotForNpu(f"does not fit the NPU's SHRAM: {e}") from None
    return ops


def _binary(g, n: Node) -> NpuOp:
    """add or mul of two int8 tensors of one shape, as CMSIS-NN computes them
    (cortex-m-ops.md §3.3, §3.4): codegen turns it into 32-bit elementwise
    steps whose rounding is CMSIS-NN's (codegen._emit_binary)."""
    a, b = (g.node(i) for i in n.inputs)
    if a.op == "constant" or b.op == "constant":
        raise NotForNpu("an operand is a constant (the CPU makes it a table lookup)")
    (s1, z1), (s2, z2) = _qparams(g, a.name), _qparams(g, b.name)
    s_out, z_out = float(n.qparams[0]), int(n.qparams[1])
    if n.op == "add":       # CMSIS-NN's parameters, each for its operand
        (m1, e1), (m2, e2), (mo, eo) = qm.add_params(s1, s2, s_out)
        per = {a.name: (m1, e1), b.name: (m2, e2)}
    else:
        mo, eo = qm.quantize_multiplier(s1 * s2 / s_out)
    shape = list(n.shape)
    if list(a.shape) != shape:        # the full-size operand is the IFM
        a, b = b, a
    small = list(b.shape)
    channel_vector = len(shape) == 4 and small == [shape[0], shape[1], 1, 1]
    if list(a.shape) != shape or (small != shape and not channel_vector):
        raise NotForNpu(f"broadcast {list(a.shape)} and {small}: the NPU takes operands of one "
                        "shape, or a per-channel [N, C, 1, 1] second operand")
    requant = {"out": (mo, eo)}
    if n.op == "add":
        requant.update(a=per[a.name], b=per[b.name])
    f = _fmap(n.shape)
    for what, (m, e) in requant.items():
        if e > 0 or e < -32 or m >= 1 << 31:
            raise NotForNpu(f"{n.op} {what} requantization shift {e} outside what the NPU "
                            "rounds like CMSIS-NN")
    return NpuOp(n.name, n.op, a.name, n.name, f, Fmap(f.h, f.w, f.c), _qparams(g, a.name)[1],
                 z_out, act=_act_range(n), ifm2=b.name, ifm2_zp=_qparams(g, b.name)[1],
                 ifm2_shape=_fmap(small), requant=requant)


NPU_OPS = {"conv2d": _conv, "add": _binary, "mul": _binary, "linear": _linear, "max_pool2d": _max_pool, "avg_pool2d": _avg_pool,
           "adaptive_avg_pool2d": _adaptive_avg_pool, "mean": _mean, "clamp": _clamp,
           **{op: _lut for op in LUT_OPS}}
ALIAS_OPS = ("reshape",)

REFUSED = {
    "sub": "the NPU sub would need 8-bit operand scaling, which has no oracle (ethos-u-npu.md §8.4)",
}


def keeps_bytes(g, n: Node) -> bool:
    """A reshape whose result has the same bytes as its input in ptec's
    layouts (4-D channels-last, others contiguous)."""
    from ...lowered import needs_relayout
    x = g.node(n.inputs[0])
    return not needs_relayout(x.shape) and not needs_relayout(n.shape)


def npu_op(g, n: Node, cfg: NpuConfig) -> NpuOp:
    """The NPU operation of node n, its block chosen; NotForNpu says why not."""
    if n.op in REFUSED:
        raise NotForNpu(REFUSED[n.op])
    if n.op not in NPU_OPS:
        raise NotForNpu(f"no NPU operation for {n.op}")
    if n.qparams is None or any(g.node(i).qparams is None for i in n.inputs):
        raise NotForNpu("not quantized")
    op = NPU_OPS[n.op](g, n)
    try:
        op.block = choose_block_config(cfg, op.op_shape())
    except BlockConfigError as e:
        raise NotForNpu(f"does not fit the NPU's SHRAM: {e}") from None
    return op
