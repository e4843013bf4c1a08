"""An int8 TFLite model becomes a ptec program on the cortex_m operators
(`python3 -m ptec import-tflite MODEL.tflite -o MODEL.pte`).

The model comes from ptec.tflite.reader (the one TFLite reader); this file
only maps operators. Numerics are TFLite's int8 reference semantics: the
(multiplier, shift) pairs are TFLite's QuantizeMultiplier of its float
scales (frexp, round half away from zero, docs/tflite-import.md), padding is
SAME/VALID as TFLite computes it, fused activations become the clamp bounds
TFLite derives from the output's quantization.

Layout: TFLite activations are NHWC. A 4-D TFLite tensor [N,H,W,C] becomes a
ptec tensor with logical sizes [N,C,H,W] and the channels-last dim order
(cortex-m-ops.md §1.2), so its bytes are the TFLite bytes unchanged; any
other rank keeps its shape, contiguous. A RESHAPE is therefore a second
tensor over the same bytes (no instruction). Weights need no permutation:
TFLite's conv filter is OHWI and its depthwise filter 1HW(C*M), exactly what
quantized_conv2d and quantized_depthwise_conv2d take.

Operators the importer cannot map are refused by name before anything is
built (UnsupportedTFLite).
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .. import emit as em
from .. import plan as pl
from ..backends.cortex_m import scratch as sc
from ..lowered import Act, IOInfo, Lowered, from_physical, layout, new_act, raw_view
from ..pte.program_builder import CHANNELS_LAST, ProgramBuilder
from ..pte.schema import Program, ScalarType
from ..pte.upstream_rules import UpstreamRuleError, require_compatible
from ..quant_math import check_requant_shifts
from .reader import TFLiteError

I8 = ScalarType.CHAR
F32 = ScalarType.FLOAT
QMIN, QMAX = -128, 127


class UnsupportedTFLite(TFLiteError):
    """The model uses something the importer does not map; one line."""


def _options(op) -> dict:
    return dict(op.options or {})


# -- TFLite's quantization arithmetic ------------------------------------------

def tflite_quantize_multiplier(sigma: float) -> Tuple[int, int]:
    """TFLite's QuantizeMultiplier: sigma ~= M * 2**(shift - 31), M in [2^30, 2^31),
    the mantissa rounded half away from zero (std::round); a shift below -31
    gives (0, 0), as TFLite does."""
    if sigma == 0:
        return 0, 0
    m, e = math.frexp(float(sigma))
    q = int(math.floor(m * (1 << 31) + 0.5))
    if q == 1 << 31:
        q, e = q // 2, e + 1
    if e < -31:
        return 0, 0
    if e > 30:
        return (1 << 31) - 1, 30
    return q, e


def _high_mul(a, b):
    """TFLite's SaturatingRoundingDoublingHighMul (ties away from zero), numpy int64."""
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    s = a * b + np.where(a * b >= 0, 1 << 30, 1 - (1 << 30))
    q = np.where(s >= 0, s >> 31, -((-s) >> 31))
    return np.where((a == -(1 << 31)) & (b == -(1 << 31)), (1 << 31) - 1, q)


def tflite_requantize(v, mult: int, shift: int) -> np.ndarray:
    """TFLite's MultiplyByQuantizedMultiplier on int32 values, for the
    256-entry tables of element-wise ops (computed here, ahead of time, with
    TFLite's own rounding)."""
    v = np.asarray(v, np.int64) << max(shift, 0)
    v = ((v + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)
    h = _high_mul(v, mult)
    r = max(-shift, 0)
    mask = (1 << r) - 1
    return (h >> r) + ((h & mask) > (mask >> 1) + (h < 0))


def add_multipliers(s1: float, s2: float, s_out: float):
    """TFLite's int8 ADD: left shift 20, twice the larger input scale."""
    twice = 2.0 * max(float(s1), float(s2))
    return (tflite_quantize_multiplier(float(s1) / twice), tflite_quantize_multiplier(float(s2) / twice),
            tflite_quantize_multiplier(twice / ((1 << 20) * float(s_out))))


def mul_multiplier(s1: float, s2: float, s_out: float):
    return tflite_quantize_multiplier(float(np.float64(s1) * np.float64(s2) / np.float64(s_out)))


def activation_bounds(fn: str, scale: float, zp: int) -> Tuple[int, int]:
    """TFLite's CalculateActivationRangeQuantized for int8 (f / scale in float32)."""
    def q(f):
        v = float(np.float32(f) / np.float32(scale))
        return int(zp) + int(math.copysign(math.floor(abs(v) + 0.5), v))
    if fn == "NONE":
        return QMIN, QMAX
    if fn == "RELU":
        return max(QMIN, q(0.0)), QMAX
    if fn == "RELU6":
        return max(QMIN, q(0.0)), min(QMAX, q(6.0))
    if fn == "RELU_N1_TO_1":
        return max(QMIN, q(-1.0)), min(QMAX, q(1.0))
    raise UnsupportedTFLite(f"fused activation {fn} is not supported")


def same_or_valid(padding: str, size: int, k: int, stride: int, dilation: int = 1):
    """(output size, pad before, pad after) as TFLite computes them."""
    if min(size, k, stride, dilation) < 1:
        raise UnsupportedTFLite(f"input size {size}, kernel {k}, stride {stride} and dilation "
                                f"{dilation} must be positive")
    eff = (k - 1) * dilation + 1
    if padding == "SAME":
        out = (size + stride - 1) // stride
    else:
        out = (size - eff + stride) // stride
    total = max((out - 1) * stride + eff - size, 0)
    return out, total // 2, total - total // 2


# -- the importer --------------------------------------------------------------

@dataclass
class ImportResult:
    program: Program
    data: bytes
    lowered: Lowered
    memory_plan: pl.MemoryPlan


class _Importer:
    def __init__(self, model, target: str, outputs=None):
        self.model = model
        self.output_ids = outputs
        self.sg = model.subgraphs[0]
        self.target = target
        sc.isa(target)
        self.b = ProgramBuilder(check_call=check_requant_shifts)
        self.env: Dict[int, Act] = {}

    # tensors ---------------------------------------------------------------
    def t(self, i: int):
        return self.sg.tensors[i]

    def qp(self, i: int) -> Tuple[float, int]:
        q = self.t(i).quantization
        if q is None or len(q.scale) != 1:
            raise UnsupportedTFLite(f"tensor {self.name(i)!r}: per-tensor quantization expected, "
                                    f"got {0 if q is None else len(q.scale)} scales")
        scale = float(np.float32(q.scale[0]))
        if not (math.isfinite(scale) and scale > 0):
            raise UnsupportedTFLite(f"tensor {self.name(i)!r}: scale {scale} is not positive")
        zp = int(q.zero_point[0]) if q.zero_point else 0
        if not QMIN <= zp <= QMAX:
            raise UnsupportedTFLite(f"tensor {self.name(i)!r}: zero point {zp} outside int8")
        return scale, zp

    def scales(self, i: int) -> np.ndarray:
        q = self.t(i).quantization
        if q is None or not q.scale:
            raise UnsupportedTFLite(f"tensor {self.name(i)!r} is not quantized")
        scales = np.asarray(q.scale, np.float32).ravel()
        if not np.all(np.isfinite(scales) & (scales > 0)):
            raise UnsupportedTFLite(f"tensor {self.name(i)!r}: a scale is not positive")
        return scales

    def name(self, i: int) -> str:
        return self.t(i).name or str(i)

    def shape(self, i: int) -> List[int]:
        return [int(d) for d in self.t(i).shape]

    def dtype(self, i: int) -> str:
        return self.t(i).type

    def const(self, i: int) -> np.ndarray:
        t = self.t(i)
        if t.data is None:
            raise UnsupportedTFLite(f"tensor {self.name(i)!r} must be a constant")
        return t.array()

    @staticmethod
    def ptec_sizes(shape: Sequence[int]) -> List[int]:
        s = [int(d) for d in shape]
        return [s[0], s[3], s[1], s[2]] if len(s) == 4 else s

    def act(self, i: int) -> Act:
        """The int8 activation of TFLite tensor i (a constant on first use)."""
        if i not in self.env:
            arr = self.const(i)
            s, z = self.qp(i)
            if arr.dtype != np.int8:
                raise UnsupportedTFLite(f"constant {self.name(i)!r} is {arr.dtype}, int8 expected")
            v = self.b.constant(np.ascontiguousarray(arr))
            t = self.b.values[v].val
            sizes = self.ptec_sizes(arr.shape)
            t.sizes, t.dim_order = sizes, bytes(layout(sizes))
            self.env[i] = Act(v, sizes, I8, s, z)
        return self.env[i]

    def out_act(self, i: int, dtype=I8) -> Act:
        s, z = self.qp(i) if dtype == I8 else (None, None)
        return new_act(self.b, dtype, self.ptec_sizes(self.shape(i)), s, z)

    def view(self, x: Act, sizes, dim_order) -> Act:
        """The same bytes under other sizes (no instruction); a constant's
        view is a second constant over the same data."""
        t = self.b.values[x.value].val
        if not getattr(t, "data_buffer_idx", 0):
            return raw_view(self.b, x, sizes, dim_order)
        v = self.b.add(dataclasses.replace(t, sizes=[int(d) for d in sizes],
                                           dim_order=bytes(dim_order)))
        return Act(v, [int(d) for d in sizes], x.dtype, x.scale, x.zp)

    def as_shape(self, x: Act, tfl_shape: Sequence[int]) -> Act:
        """x's bytes under a TFLite shape (RESHAPE and friends: no instruction)."""
        sizes = self.ptec_sizes(tfl_shape)
        if sizes == x.sizes:
            return x
        return self.view(x, sizes, layout(sizes))

    # ops -------------------------------------------------------------------
    def run(self) -> Lowered:
        ops = list(self.sg.operators)
        names = [op.name for op in ops]
        unsupported = sorted({n for n in names if n not in MAPPERS})
        if unsupported:
            raise UnsupportedTFLite("operator not supported by the int8 importer: "
                                    + ", ".join(unsupported)
                                    + f" (supported: {', '.join(sorted(MAPPERS))})")
        inputs, in_values = [], []
        for i in self.sg.inputs:
            ty = self.dtype(i)
            if ty not in ("INT8", "FLOAT32"):
                raise UnsupportedTFLite(f"input {self.name(i)!r} is {ty}; int8 or float32 expected")
            a = self.out_act(i, I8 if ty == "INT8" else F32)
            self.env[i] = a
            in_values.append(a.value)
            inputs.append(IOInfo(self.name(i), a.sizes, "int8" if ty == "INT8" else "float32",
                                 layout(a.sizes), a.scale, a.zp))
        for index, (op, name) in enumerate(zip(ops, names)):
            try:
                MAPPERS[name](self, op, _options(op))
            except UnsupportedTFLite as e:
                raise UnsupportedTFLite(f"operator {index} ({name}): {e}") from None
            except (IndexError, KeyError, ValueError, ArithmeticError) as e:
                # a model whose operator lacks an input, reads a tensor no
                # operator made yet, or whose sizes do not add up
                raise UnsupportedTFLite(f"operator {index} ({name}): malformed: "
                                        f"{type(e).__name__}: {e}") from None
        outputs, out_values = [], []
        for i in (self.sg.outputs if self.output_ids is None else self.output_ids):
            if int(i) not in self.env:
                raise UnsupportedTFLite(f"output tensor {i} is made by no operator")
            a = self.env[int(i)]
            out_values.append(a.value)
            outputs.append(IOInfo(self.name(i), a.sizes,
                                  "int8" if a.dtype == I8 else "float32", layout(a.sizes),
                                  a.scale, a.zp))
        self.b.set_io(in_values, out_values)
        return Lowered(self.b, inputs, outputs, self.target)

    def ins(self, op) -> List[int]:
        return [int(i) for i in op.inputs]

    def outs(self, op) -> List[int]:
        return [int(i) for i in op.outputs]

    def int8_in(self, i: int, what: str) -> Act:
        if self.dtype(i) != "INT8":
            raise UnsupportedTFLite(f"{what} {self.name(i)!r} is {self.dtype(i)}, int8 expected")
        return self.act(i)

    # shared emitters ---------------------------------------------------------
    def pad(self, x: Act, pre4: Sequence[int], post4: Sequence[int], value: int,
            out_sizes: Optional[List[int]] = None, qparams=None) -> Act:
        """cortex_m::pad with physical pads (NHWC for 4-D, right-aligned otherwise)."""
        r = len(x.sizes)
        if out_sizes is None:
            phys = [x.sizes[d] for d in CHANNELS_LAST] if r == 4 else [1] * (4 - r) + list(x.sizes)
            phys = [p + a + c for p, a, c in zip(phys, pre4, post4)]
            out_sizes = [phys[0], phys[3], phys[1], phys[2]] if r == 4 else phys[4 - r:]
        s, z = qparams if qparams is not None else (x.scale, x.zp)
        out = new_act(self.b, I8, out_sizes, s, z)
        self.b.call("cortex_m::pad.out", input=x.value, pre_pad=[int(p) for p in pre4],
                    post_pad=[int(p) for p in post4], pad_value=int(value), out=out.value)
        return out

    def geometry(self, x: Act, out_tfl: Sequence[int], k, stride, dilation, padding: str,
                 pad_value: int):
        """Symmetric padding for the kernel, padding the input bottom/right
        first where TFLite's SAME padding is one larger there (the kernels
        take one pad per axis and check the output size against it)."""
        _, _, h, w = x.sizes
        oh, pt, pb = same_or_valid(padding, h, k[0], stride[0], dilation[0])
        ow, pl_, pr = same_or_valid(padding, w, k[1], stride[1], dilation[1])
        if [oh, ow] != [int(out_tfl[1]), int(out_tfl[2])]:
            raise UnsupportedTFLite(f"output {list(out_tfl)} does not match {padding} padding "
                                    f"of input {[x.sizes[0], h, w, x.sizes[1]]}")

        def kernel_out(size, kk, s, p, d):
            return (size + 2 * p - d * (kk - 1) - 1) // s + 1
        extra_h = 0 if kernel_out(h, k[0], stride[0], pt, dilation[0]) == oh else pb - pt
        extra_w = 0 if kernel_out(w, k[1], stride[1], pl_, dilation[1]) == ow else pr - pl_
        if extra_h or extra_w:
            x = self.pad(x, [0, 0, 0, 0], [0, extra_h, extra_w, 0], pad_value)
        return x, [pt, pl_]


def _activation(im: _Importer, opts: dict, out_i: int) -> Tuple[int, int]:
    fn = opts.get("fused_activation_function", "NONE")
    s, z = im.qp(out_i)
    return activation_bounds(fn, s, z)


def _requant_arrays(im, x: Act, w_i: int, out_i: int, cout: int):
    s_out, _ = im.qp(out_i)
    ws = im.scales(w_i)
    if ws.size not in (1, cout):
        raise UnsupportedTFLite(f"weight {im.name(w_i)!r} has {ws.size} scales for {cout} channels")
    ws = np.broadcast_to(ws, (cout,))
    pairs = [tflite_quantize_multiplier(float(np.float64(x.scale) * np.float64(s) / np.float64(s_out)))
             for s in ws]
    zps = np.asarray(im.t(w_i).quantization.zero_point, np.int64).ravel()
    if zps.size and np.any(zps != 0):
        raise UnsupportedTFLite(f"weight {im.name(w_i)!r} has a nonzero zero point")
    return (np.array([p[0] for p in pairs], np.int32), np.array([p[1] for p in pairs], np.int32))


def _bias(im, op_inputs: List[int], cout: int, required: bool):
    if len(op_inputs) > 2 and op_inputs[2] >= 0:
        b = im.const(op_inputs[2])
        if b.dtype != np.int32 or b.size != cout:
            raise UnsupportedTFLite(f"bias {im.name(op_inputs[2])!r} must be int32 [{cout}]")
        return im.b.constant(np.ascontiguousarray(b.reshape(cout)))
    return im.b.constant(np.zeros(cout, np.int32)) if required else None


def _conv_args(im: _Importer, op, opts, x: Act, kh: int, kw: int, cout: int):
    """The arguments conv and depthwise share: geometry (TFLite's padding),
    requantization, activation bounds and the output; plus pads and dilation."""
    wi, oi = im.ins(op)[1], im.outs(op)[0]
    stride = [int(opts.get("stride_h", 1)), int(opts.get("stride_w", 1))]
    dil = [int(opts.get("dilation_h_factor", 1)), int(opts.get("dilation_w_factor", 1))]
    padding = opts.get("padding", "SAME")
    x, pads = im.geometry(x, im.shape(oi), (kh, kw), stride, dil, padding, x.zp)
    lo, hi = _activation(im, opts, oi)
    mults, shifts = _requant_arrays(im, x, wi, oi, cout)
    out = im.out_act(oi)
    im.env[oi] = out
    return dict(input=x.value, stride=stride, padding=pads, dilation=dil,
                input_offset=-int(x.zp), output_offset=int(out.zp),
                requantize_multipliers=im.b.constant(mults),
                requantize_shifts=im.b.constant(shifts), activation_min=lo, activation_max=hi,
                out=out.value), pads, dil


def map_conv_2d(im: _Importer, op, opts):
    x = im.int8_in(im.ins(op)[0], "input")
    w = im.const(im.ins(op)[1])
    if w.dtype != np.int8:
        raise UnsupportedTFLite(f"filter is {w.dtype}, int8 expected")
    cout, kh, kw, cin_g = w.shape
    cin = x.sizes[1]
    if cin % cin_g:
        raise UnsupportedTFLite(f"filter {list(w.shape)} does not fit {cin} input channels")
    args, pads, dil = _conv_args(im, op, opts, x, kh, kw, cout)
    stride = args["stride"]
    im.b.call("cortex_m::quantized_conv2d.out", weight=im.b.constant(np.ascontiguousarray(w)),
              bias=_bias(im, im.ins(op), cout, required=cin_g != cin),
              scratch=im.b.scratch(sc.conv2d_scratch(im.target, cin_g, kh, kw, stride, pads, dil)),
              **args)


def map_depthwise_conv_2d(im: _Importer, op, opts):
    x = im.int8_in(im.ins(op)[0], "input")
    w = im.const(im.ins(op)[1])
    if w.dtype != np.int8 or w.shape[0] != 1:
        raise UnsupportedTFLite(f"depthwise filter {list(w.shape)} {w.dtype}: "
                                "int8 [1,KH,KW,C*M] expected")
    _, kh, kw, cout = w.shape
    n, cin = x.sizes[0], x.sizes[1]
    if n != 1 or cout % cin:
        raise UnsupportedTFLite(f"depthwise on input {x.sizes} with {cout} outputs: batch 1 and "
                                "a whole depth multiplier expected")
    args, pads, dil = _conv_args(im, op, opts, x, kh, kw, cout)
    im.b.call("cortex_m::quantized_depthwise_conv2d.out",
              weight=im.b.constant(np.ascontiguousarray(w)),
              bias=_bias(im, im.ins(op), cout, required=True), depth_multiplier=cout // cin,
              scratch=im.b.scratch(sc.depthwise_scratch(im.target, 1, cin, cout, kh, kw, pads, dil)),
              **args)


def _clamp(im: _Importer, x: Act, lo: int, hi: int) -> Act:
    """A clamp on int8: a 1x1 max pool with activation bounds."""
    if (lo, hi) == (QMIN, QMAX):
        return x
    v = x if len(x.sizes) == 4 else im.view(x, [1, 1, 1, int(np.prod(x.sizes))], CHANNELS_LAST)
    out = new_act(im.b, I8, v.sizes, x.scale, x.zp)
    im.b.call("cortex_m::quantized_max_pool2d.out", input=v.value, kernel_size=[1, 1],
              stride=[1, 1], padding=[0, 0], dilation=[1, 1], ceil_mode=False,
              input_zero_point=int(x.zp), output_zero_point=int(x.zp),
              activation_min=int(lo), activation_max=int(hi), out=out.value)
    return out if len(x.sizes) == 4 else im.view(out, x.sizes, layout(x.sizes))


def _same_qparams(im, a: int, b: int, what: str):
    if im.qp(a) != im.qp(b):
        raise UnsupportedTFLite(f"{what}: input and output quantization differ "
                                f"({im.qp(a)} vs {im.qp(b)})")


def _pool_opts(opts):
    k = [int(opts.get("filter_height", 1)), int(opts.get("filter_width", 1))]
    stride = [int(opts.get("stride_h", 1)), int(opts.get("stride_w", 1))]
    return k, stride, opts.get("padding", "SAME")


def map_average_pool_2d(im: _Importer, op, opts):
    xi, oi = im.ins(op)[0], im.outs(op)[0]
    x = im.int8_in(xi, "input")
    _same_qparams(im, xi, oi, "AVERAGE_POOL_2D")
    k, stride, padding = _pool_opts(opts)
    _, _, h, w = x.sizes
    oh, pt, _ = same_or_valid(padding, h, k[0], stride[0])
    ow, pl_, _ = same_or_valid(padding, w, k[1], stride[1])
    if [oh, ow] != im.shape(oi)[1:3]:
        raise UnsupportedTFLite(f"output {im.shape(oi)} does not match {padding} padding")

    def kernel_out(size, kk, s, p, ceil):       # cortex-m-ops.md §3.13
        o = (size + 2 * p - kk) // s + 1
        if ceil:
            o += 1 if (size + 2 * p - kk) % s else 0
            o -= 1 if (o - 1) * s >= size + p else 0
        return o
    # Padded positions count neither in TFLite's average nor in the kernel's;
    # ceil_mode gives the windows that stick out at the bottom/right.
    for ceil in (False, True):
        if [kernel_out(h, k[0], stride[0], pt, ceil), kernel_out(w, k[1], stride[1], pl_, ceil)] == [oh, ow]:
            break
    else:
        raise UnsupportedTFLite(f"{padding} padding of {[h, w]} with kernel {k} stride {stride} "
                                "has no cortex_m average-pool geometry")
    out = new_act(im.b, I8, x.sizes[:2] + [oh, ow], x.scale, x.zp)
    im.b.call("cortex_m::quantized_avg_pool2d.out", input=x.value, kernel_size=k, stride=stride,
              padding=[pt, pl_], ceil_mode=ceil, zero_point=int(x.zp), multiplier=0, shift=0,
              scratch=im.b.scratch(sc.avg_pool_scratch(im.target, x.sizes[1])), out=out.value)
    im.env[oi] = _clamp(im, out, *_activation(im, opts, oi))


def map_max_pool_2d(im: _Importer, op, opts):
    xi, oi = im.ins(op)[0], im.outs(op)[0]
    x = im.int8_in(xi, "input")
    _same_qparams(im, xi, oi, "MAX_POOL_2D")
    k, stride, padding = _pool_opts(opts)
    # -128 never wins a max over a window that holds a real value
    x, pads = im.geometry(x, im.shape(oi), k, stride, (1, 1), padding, QMIN)
    lo, hi = _activation(im, opts, oi)
    out = im.out_act(oi)
    im.b.call("cortex_m::quantized_max_pool2d.out", input=x.value, kernel_size=k, stride=stride,
              padding=pads, dilation=[1, 1], ceil_mode=False, input_zero_point=int(x.zp),
              output_zero_point=int(x.zp), activation_min=lo, activation_max=hi, out=out.value)
    im.env[oi] = out


def map_reshape(im: _Importer, op, opts):
    xi, oi = im.ins(op)[0], im.outs(op)[0]
    x = im.act(xi) if im.dtype(xi) == "INT8" else im.env[xi]
    if int(np.prod(im.shape(oi))) != int(np.prod(x.sizes)):
        raise UnsupportedTFLite(f"reshape of {im.shape(xi)} to {im.shape(oi)}")
    if im.dtype(xi) == "INT8" and im.qp(xi) != im.qp(oi):
        raise UnsupportedTFLite("reshape changes the quantization")
    im.env[oi] = im.as_shape(x, im.shape(oi))


map_squeeze = map_expand_dims = map_reshape


def map_softmax(im: _Importer, op, opts):
    xi, oi = im.ins(op)[0], im.outs(op)[0]
    x = im.int8_in(xi, "input")
    s_out, z_out = im.qp(oi)
    if (np.float32(s_out), z_out) != (np.float32(1.0 / 256.0), -128):
        raise UnsupportedTFLite(f"int8 softmax output must have scale 1/256 and zero point -128, "
                                f"got ({s_out}, {z_out})")
    beta = float(np.float32(opts.get("beta", 1.0)))
    # TFLite's PreprocessSoftmaxScaling with 5 integer bits, and CalculateInputRadius
    real = min(beta * float(x.scale) * float(1 << 26), float((1 << 31) - 1))
    mult, shift = tflite_quantize_multiplier(real)
    if shift < 0:
        raise UnsupportedTFLite(f"softmax input scale {x.scale} with beta {beta} is too small")
    diff_min = -int(math.floor(31.0 * (1 << 26) / (1 << shift)))
    tshape = im.shape(xi)
    rows = int(np.prod(tshape[:-1])) if len(tshape) > 1 else 1
    flat = im.view(x, [rows, tshape[-1]], [0, 1])
    out = new_act(im.b, I8, flat.sizes, s_out, z_out)
    im.b.call("cortex_m::softmax.out", input=flat.value, dim=-1, input_zero_point=int(x.zp),
              output_zero_point=-128, input_multiplier=mult, input_shift=shift,
              diff_min=diff_min, out=out.value)
    im.env[oi] = im.as_shape(out, im.shape(oi))


def map_fully_connected(im: _Importer, op, opts):
    ins = im.ins(op)
    xi, wi, oi = ins[0], ins[1], im.outs(op)[0]
    x = im.int8_in(xi, "input")
    w = im.const(wi)
    if w.dtype != np.int8 or w.ndim != 2:
        raise UnsupportedTFLite(f"weights {list(w.shape)} {w.dtype}: int8 [out, in] expected")
    if opts.get("weights_format", 0) != 0:          # 0 = DEFAULT
        raise UnsupportedTFLite("shuffled weights are not supported")
    out_f, in_f = w.shape
    batches = int(np.prod(x.sizes)) // in_f
    if batches * in_f != int(np.prod(x.sizes)):
        raise UnsupportedTFLite(f"input {im.shape(xi)} is not a whole number of rows of {in_f}")
    lo, hi = _activation(im, opts, oi)
    mults, shifts = _requant_arrays(im, x, wi, oi, out_f)
    s_out, z_out = im.qp(oi)
    bias = _bias(im, ins, out_f, required=False)
    if im.scales(wi).size == 1:
        rows = im.view(x, [batches, in_f], [0, 1])
        y = new_act(im.b, I8, [batches, out_f], s_out, z_out)
        if sc.linear_uses_kernel_sum(im.target):
            b32 = (im.const(ins[2]).astype(np.int64).ravel() if len(ins) > 2 and ins[2] >= 0
                   else np.zeros(out_f, np.int64))
            ksum = -int(x.zp) * w.astype(np.int64).sum(axis=1) + b32
            if np.abs(ksum).max(initial=0) >= 2 ** 31:
                raise UnsupportedTFLite("kernel sum overflows int32")
            bias, ksum_v = None, im.b.constant(ksum.astype(np.int32).reshape(1, out_f))
        else:
            ksum_v = None
        im.b.call("cortex_m::quantized_linear.out", input=rows.value,
                  weights=im.b.constant(np.ascontiguousarray(w)), bias=bias, kernel_sum=ksum_v,
                  input_offset=-int(x.zp), filter_offset=0, output_offset=int(z_out),
                  requantize_multipliers=[int(mults[0])], requantize_shifts=[int(shifts[0])],
                  activation_max=hi, activation_min=lo, out=y.value)
    else:   # per-channel weights: a 1x1 convolution over [batches, in, 1, 1]
        pix = im.view(x, [batches, in_f, 1, 1], CHANNELS_LAST)
        y4 = new_act(im.b, I8, [batches, out_f, 1, 1], s_out, z_out)
        im.b.call("cortex_m::quantized_conv2d.out", input=pix.value,
                  weight=im.b.constant(np.ascontiguousarray(w.reshape(out_f, 1, 1, in_f))),
                  bias=bias, stride=[1, 1], padding=[0, 0], dilation=[1, 1],
                  input_offset=-int(x.zp), output_offset=int(z_out),
                  requantize_multipliers=im.b.constant(mults),
                  requantize_shifts=im.b.constant(shifts), activation_min=lo, activation_max=hi,
                  scratch=im.b.scratch(0), out=y4.value)
        y = im.view(y4, [batches, out_f], [0, 1])
    im.env[oi] = im.as_shape(y, im.shape(oi))


def _binary_operands(im: _Importer, op) -> Tuple[Act, Act]:
    """The two int8 operands, shaped for the cortex_m broadcast rule (equal
    shapes, or one operand of C elements against a 4-D [N,H,W,C])."""
    a_i, b_i = im.ins(op)[:2]
    oi = im.outs(op)[0]
    a, b = im.int8_in(a_i, "input"), im.int8_in(b_i, "input")
    out_shape = im.shape(oi)
    res = []
    for x, i in ((a, a_i), (b, b_i)):
        shp = im.shape(i)
        if shp == out_shape:
            res.append(x)
            continue
        n = int(np.prod(shp))
        if len(out_shape) == 4 and shp and shp[-1] == out_shape[3] == n:
            res.append(im.view(x, [1, n, 1, 1], CHANNELS_LAST))
            continue
        if n == int(np.prod(out_shape)):
            res.append(im.as_shape(x, out_shape))
            continue
        raise UnsupportedTFLite(f"broadcast of {shp} to {out_shape}: only equal shapes or a "
                                "per-channel operand are supported")
    return res[0], res[1]


def _lut_op(im: _Importer, x: Act, oi: int, table) -> None:
    """An element-wise function of one int8 tensor: cortex_m::quantized_activation
    with its 256 outputs (for inputs -128..127) computed ahead of time."""
    lut = np.clip(np.asarray(table, np.int64), QMIN, QMAX).astype(np.int8)
    out = im.out_act(oi)
    x = im.view(x, out.sizes, layout(out.sizes)) if x.sizes != out.sizes else x
    im.b.call("cortex_m::quantized_activation.out", input=x.value, lut=im.b.constant(lut),
              out=out.value)
    im.env[oi] = out


Q = np.arange(QMIN, QMAX + 1, dtype=np.int64)       # every int8 input of a table


def _scalar_operand(im: _Importer, op):
    """(the other operand's tensor, the constant's int8 value) when one input
    is a one-element constant, else None: the op is then a table."""
    a_i, b_i = im.ins(op)[:2]
    for c_i, x_i in ((b_i, a_i), (a_i, b_i)):
        if im.t(c_i).data is not None and int(np.prod(im.shape(c_i))) == 1 \
                and im.t(x_i).data is None and im.shape(x_i) == im.shape(im.outs(op)[0]):
            return x_i, int(im.const(c_i).astype(np.int64).ravel()[0]), c_i
    return None


def _add_int(x1, x2, q1, q2, qo, lo, hi):
    (m1, s1), (m2, s2), (mo, so) = add_multipliers(q1[0], q2[0], qo[0])
    a = tflite_requantize((np.asarray(x1, np.int64) - q1[1]) << 20, m1, s1)
    b = tflite_requantize((np.asarray(x2, np.int64) - q2[1]) << 20, m2, s2)
    return np.clip(tflite_requantize(a + b, mo, so) + qo[1], lo, hi)


def _mul_int(x1, x2, q1, q2, qo, lo, hi):
    mo, so = mul_multiplier(q1[0], q2[0], qo[0])
    prod = (np.asarray(x1, np.int64) - q1[1]) * (np.asarray(x2, np.int64) - q2[1])
    return np.clip(tflite_requantize(prod, mo, so) + qo[1], lo, hi)


def _binary_table(im: _Importer, op, opts, fn) -> bool:
    """x (op) c with a one-element constant c as a table; False if not that case."""
    found = _scalar_operand(im, op)
    if found is None:
        return False
    x_i, c, c_i = found
    oi = im.outs(op)[0]
    x = im.int8_in(x_i, "input")
    _lut_op(im, x, oi, fn(Q, c, (x.scale, x.zp), im.qp(c_i), im.qp(oi), *_activation(im, opts, oi)))
    return True


def map_add(im: _Importer, op, opts):
    if _binary_table(im, op, opts, _add_int):
        return
    oi = im.outs(op)[0]
    a, b = _binary_operands(im, op)
    s_out, z_out = im.qp(oi)
    (m1, s1), (m2, s2), (mo, so) = add_multipliers(a.scale, b.scale, s_out)
    lo, hi = _activation(im, opts, oi)
    out = im.out_act(oi)
    im.b.call("cortex_m::quantized_add.out", self=a.value, self_zero_point=int(a.zp),
              self_multiplier=m1, self_shift=s1, other=b.value, other_zero_point=int(b.zp),
              other_multiplier=m2, other_shift=s2, output_zero_point=int(z_out),
              output_multiplier=mo, output_shift=so, activation_min=lo, activation_max=hi,
              out=out.value)
    im.env[oi] = out


def map_mul(im: _Importer, op, opts):
    if _binary_table(im, op, opts, _mul_int):
        return
    oi = im.outs(op)[0]
    a, b = _binary_operands(im, op)
    s_out, z_out = im.qp(oi)
    mo, so = mul_multiplier(a.scale, b.scale, s_out)
    out = im.out_act(oi)
    im.b.call("cortex_m::quantized_mul.out", self=a.value, self_zero_point=int(a.zp),
              other=b.value, other_zero_point=int(b.zp), output_zero_point=int(z_out),
              output_multiplier=mo, output_shift=so, out=out.value)
    im.env[oi] = _clamp(im, out, *_activation(im, opts, oi))


def _requantize_table(x: Act, qo, lo=QMIN, hi=QMAX):
    """TFLite's Requantize (and ReluX): the input on the output's grid, clamped."""
    mult, shift = tflite_quantize_multiplier(float(np.float64(x.scale) / np.float64(qo[0])))
    return np.clip(tflite_requantize(Q - x.zp, mult, shift) + qo[1], lo, hi)


def map_relu(im: _Importer, op, opts):
    """RELU, RELU6, RELU_N1_TO_1: TFLite's ReluX, requantization to the output
    grid then the activation bounds of the output (one table)."""
    xi, oi = im.ins(op)[0], im.outs(op)[0]
    x = im.int8_in(xi, "input")
    bounds = activation_bounds(op.name, *im.qp(oi))
    _lut_op(im, x, oi, _requantize_table(x, im.qp(oi), *bounds))


map_relu6 = map_relu_n1_to_1 = map_relu


def map_leaky_relu(im: _Importer, op, opts):
    """TFLM's LEAKY_RELU: x - zp_in requantized by s_in/s_out where it is >= 0,
    by s_in*alpha/s_out below (both ratios in float32, as TFLM computes them)."""
    xi, oi = im.ins(op)[0], im.outs(op)[0]
    x = im.int8_in(xi, "input")
    s_out, z_out = im.qp(oi)
    si, so, alpha = np.float32(x.scale), np.float32(s_out), np.float32(opts.get("alpha", 0.0))
    m_id, s_id = tflite_quantize_multiplier(float(si / so))
    m_a, s_a = tflite_quantize_multiplier(float(si * alpha / so))
    v = Q - x.zp
    y = np.where(v >= 0, tflite_requantize(v, m_id, s_id), tflite_requantize(v, m_a, s_a))
    _lut_op(im, x, oi, y + z_out)


def map_quantize(im: _Importer, op, opts):
    xi, oi = im.ins(op)[0], im.outs(op)[0]
    if im.dtype(oi) != "INT8":
        raise UnsupportedTFLite(f"quantize to {im.dtype(oi)}: int8 expected")
    s, z = im.qp(oi)
    if im.dtype(xi) == "FLOAT32":
        x = im.env[xi]
        out = im.out_act(oi)
        im.b.call("cortex_m::quantize_per_tensor.out", input=x.value, scale=float(s),
                  zero_point=int(z), quant_min=QMIN, quant_max=QMAX, dtype=I8, out=out.value)
        im.env[oi] = out
    elif im.dtype(xi) == "INT8":
        x = im.act(xi)
        if (x.scale, x.zp) == (s, z):
            im.env[oi] = im.as_shape(x, im.shape(oi))
        else:
            _lut_op(im, x, oi, _requantize_table(x, (s, z)))
    else:
        raise UnsupportedTFLite(f"quantize from {im.dtype(xi)}: float32 or int8 expected")


def map_dequantize(im: _Importer, op, opts):
    xi, oi = im.ins(op)[0], im.outs(op)[0]
    if im.dtype(oi) != "FLOAT32":
        raise UnsupportedTFLite(f"dequantize to {im.dtype(oi)}: float32 expected")
    x = im.int8_in(xi, "input")
    out = im.out_act(oi, F32)
    im.b.call("cortex_m::dequantize_per_tensor.out", input=x.value, scale=float(x.scale),
              zero_point=int(x.zp), quant_min=QMIN, quant_max=QMAX, dtype=I8, out=out.value)
    im.env[oi] = out


def map_pad(im: _Importer, op, opts):
    ins = im.ins(op)
    xi, pi, oi = ins[0], ins[1], im.outs(op)[0]
    x = im.int8_in(xi, "input")
    _same_qparams(im, xi, oi, "PAD")
    pads = im.const(pi).astype(np.int64).reshape(-1, 2)
    r = len(im.shape(xi))
    if pads.shape[0] != r or r > 4 or np.any(pads < 0):
        raise UnsupportedTFLite(f"paddings {pads.tolist()} for rank {r}")
    value = int(x.zp)
    if len(ins) > 2 and ins[2] >= 0:            # PADV2's constant value, on the input's grid
        value = int(im.const(ins[2]).astype(np.int64).ravel()[0])
    # TFLite's dims are the physical dims (NHWC for 4-D), right-aligned into 4 slots
    pre = [0] * (4 - r) + [int(p) for p in pads[:, 0]]
    post = [0] * (4 - r) + [int(p) for p in pads[:, 1]]
    out = im.pad(x, pre, post, value, im.ptec_sizes(im.shape(oi)), im.qp(oi))
    im.env[oi] = out


map_padv2 = map_pad


def map_concatenation(im: _Importer, op, opts):
    oi = im.outs(op)[0]
    shp = im.shape(oi)
    r = len(shp)
    axis = int(opts.get("axis", 0)) % r
    xs = []
    for i in im.ins(op):
        x = im.int8_in(i, "input")
        if im.qp(i) != im.qp(oi):     # TFLM's int8 concatenation copies bytes, too
            raise UnsupportedTFLite(f"input {im.name(i)!r} is quantized unlike the output")
        xs.append(x)
    if r == 4:
        # upstream's cat copies rows as if its tensors were contiguous
        # (docs/compatibility.md): cat the [N, H, W, C] views of the
        # channels-last bytes, where TFLite's axis is the dim's own position
        s, z = im.qp(oi)
        phys = new_act(im.b, I8, list(shp), s, z, dim_order=[0, 1, 2, 3])
        im.b.call("aten::cat.out", out=phys.value, dim=axis,
                  tensors=[im.view(x, [x.sizes[d] for d in CHANNELS_LAST], [0, 1, 2, 3]).value
                           for x in xs])
        out = from_physical(im.b, phys)
    else:
        out = im.out_act(oi)
        im.b.call("aten::cat.out", tensors=[x.value for x in xs], dim=axis, out=out.value)
    im.env[oi] = _clamp(im, out, *_activation(im, opts, oi))


def map_mean(im: _Importer, op, opts):
    """MEAN over H and W of a 4-D tensor, TFLite's QuantizedMeanOrSum: the
    sum of (x - zp_in) requantized once by QuantizeMultiplier(s_in / s_out)
    with 1/count folded into the multiplier. A depthwise convolution with an
    all-ones HxW kernel computes exactly that sum and requantization."""
    xi, ai, oi = im.ins(op)[0], im.ins(op)[1], im.outs(op)[0]
    x = im.int8_in(xi, "input")
    axes = sorted({int(a) % 4 for a in im.const(ai).ravel()}) if len(im.shape(xi)) == 4 else None
    if axes != [1, 2]:
        raise UnsupportedTFLite(f"mean over axes {im.const(ai).ravel().tolist()} of "
                                f"{im.shape(xi)}: only H and W of a 4-D tensor are supported")
    n, c, h, w = x.sizes
    count = h * w
    s_out, z_out = im.qp(oi)
    mult, shift = tflite_quantize_multiplier(float(np.float64(x.scale) / np.float64(s_out)))
    lshift = min(count.bit_length() - 1, 32, 31 + shift)
    mult = int((mult << lshift) // count)
    shift = shift - lshift
    if n != 1:
        raise UnsupportedTFLite("mean needs batch 1")
    out = new_act(im.b, I8, [1, c, 1, 1], s_out, z_out)
    im.b.call("cortex_m::quantized_depthwise_conv2d.out", input=x.value,
              weight=im.b.constant(np.ones((1, h, w, c), np.int8)),
              bias=im.b.constant(np.zeros(c, np.int32)), stride=[1, 1], padding=[0, 0],
              dilation=[1, 1], depth_multiplier=1, input_offset=-int(x.zp),
              output_offset=int(z_out),
              requantize_multipliers=im.b.constant(np.full(c, mult, np.int32)),
              requantize_shifts=im.b.constant(np.full(c, shift, np.int32)),
              activation_min=QMIN, activation_max=QMAX,
              scratch=im.b.scratch(sc.depthwise_scratch(im.target, 1, c, c, h, w, [0, 0], [1, 1])),
              out=out.value)
    im.env[oi] = im.as_shape(out, im.shape(oi))


MAPPERS: Dict[str, Callable] = {
    name[4:].upper(): fn for name, fn in list(globals().items())
    if name.startswith("map_") and callable(fn)}


def import_int8(model, target: str = "cortex-m55",
                outputs: Optional[Sequence[int]] = None) -> ImportResult:
    """The reader's TFLite model (ptec.tflite.reader.Model) as a planned ptec
    program; UnsupportedTFLite (a one-line TFLiteError) for what it cannot map.
    outputs: TFLite tensor indices to make the program's outputs instead of
    the subgraph's (to compare every layer with a reference)."""
    if len(model.subgraphs) != 1:
        raise UnsupportedTFLite(f"{len(model.subgraphs)} subgraphs: one expected")
    lowered = _Importer(model, target, outputs).run()
    mplan = pl.plan_lowered(lowered)
    program = em.build_program(lowered, mplan, target)
    try:   # upstream's per-operator dim-order and dtype rules, as compile checks them
        require_compatible(program)
    except UpstreamRuleError as e:
        raise UnsupportedTFLite(str(e)) from e
    return ImportResult(program, em.emit_pte(program), lowered, mplan)


def import_int8_model(model, target: str = "cortex-m55") -> bytes:
    """The .pte bytes of import_int8 (what ptec.tflite.import_tflite calls)."""
    return import_int8(model, target).data
