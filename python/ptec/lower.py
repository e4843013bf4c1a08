"""Stage 3: lower a quantized Graph to cortex_m operator calls.

The result is a ProgramBuilder holding every value and kernel call (weights
pre-permuted, per-channel multipliers and shifts, offsets with the signs of
cortex-m-ops.md §1.4) but no memory offsets yet: planning is the next stage.
Float inputs get a quantize op and float outputs a dequantize op, unless
int8_io is set. A node with no cortex_m lowering stays in fp32 on a portable
ATen kernel between a dequantize and a quantize; whether ptec can run that
kernel is checked by the compiler driver.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import numpy as np

from . import quant_math as qm
from .ir import Graph, Node
from .ops import SIGNATURES
from .pte import builders as B
from .pte.program_builder import ProgramBuilder
from .pte.schema import ScalarType


class LoweringError(ValueError):
    pass


@dataclass
class IOInfo:
    name: str
    sizes: List[int]
    dtype: str                       # "float32" or "int8"
    dim_order: List[int]
    scale: Optional[float] = None
    zero_point: Optional[int] = None


@dataclass
class Lowered:
    builder: ProgramBuilder
    inputs: List[IOInfo]
    outputs: List[IOInfo]
    target: str
    fallbacks: List[str] = field(default_factory=list)   # "node: op key"

    @property
    def operators(self) -> List[str]:
        return [op.key for op in self.builder.operators]


_FALLBACK_KEYS = {
    "conv2d": "aten::convolution.out", "linear": "aten::linear.out",
    "add": "aten::add.out", "mul": "aten::mul.out", "sigmoid": "aten::sigmoid.out",
    "tanh": "aten::tanh.out", "softmax": "aten::_softmax.out", "clamp": "aten::clamp.out",
    "avg_pool2d": "aten::avg_pool2d.out", "max_pool2d": "aten::max_pool2d.out",
    "cat": "aten::cat.out", "mean": "aten::mean.out", "reshape": "aten::view_copy.out",
    "batch_norm": "aten::_native_batch_norm_legit_no_training.out",
    "adaptive_avg_pool2d": "aten::_adaptive_avg_pool2d.out",
}


def _act_range(n: Node) -> Tuple[int, int]:
    act = n.attrs.get("act")
    if not act:
        return qm.QMIN, qm.QMAX
    return qm.activation_range(act[0], act[1], n.qparams[0], n.qparams[1])


class _Lowerer:
    def __init__(self, g: Graph, target: str, int8_io: bool):
        self.g = g
        self.target = target
        self.int8_io = int8_io
        self.b = ProgramBuilder()
        self.env: Dict[str, B.Act] = {}
        self.fallbacks: List[str] = []

    # value access in the representation a consumer needs
    def q(self, name: str) -> B.Act:
        a = self.env[name]
        if a.dtype == ScalarType.CHAR:
            return a
        s, z = self.g.node(name).qparams
        qa = B.quantize(self.b, a, s, z)
        self.env[name] = qa
        return qa

    def f(self, name: str) -> B.Act:
        a = self.env[name]
        return a if a.dtype == ScalarType.FLOAT else B.dequantize(self.b, a)

    def run(self) -> Lowered:
        inputs, outputs = [], []
        in_values = []
        for n in self.g.nodes:
            if n.op == "input":
                s, z = n.qparams
                if self.int8_io:
                    a = B.new_act(self.b, ScalarType.CHAR, n.shape, s, z)
                else:
                    a = B.new_act(self.b, ScalarType.FLOAT, n.shape)
                inputs.append(IOInfo(n.name, list(n.shape), "int8" if self.int8_io else "float32",
                                     B.layout(n.shape), s, z))
                in_values.append(a.value)
                self.env[n.name] = a
                continue
            handler = getattr(self, "op_" + n.op, None)
            out = handler(n) if handler is not None else None
            if out is None:
                out = self.fallback(n)
            self.env[n.name] = out
        out_values = []
        for name in self.g.outputs:
            n = self.g.node(name)
            if self.int8_io:
                a = self.q(name)
                outputs.append(IOInfo(name, a.sizes, "int8", B.layout(a.sizes), a.scale, a.zp))
            else:
                a = self.f(name)
                outputs.append(IOInfo(name, a.sizes, "float32", B.layout(a.sizes)))
            out_values.append(a.value)
        self.b.set_io(in_values, out_values)
        return Lowered(self.b, inputs, outputs, self.target, self.fallbacks)

    # -- cortex_m lowerings (return None when not applicable) -----------------
    def op_conv2d(self, n: Node):
        x = self.q(n.inputs[0])
        if len(x.sizes) != 4:
            return None
        lo, hi = _act_range(n)
        a = n.attrs
        return B.conv2d(self.b, x, a["weight_q"], a["bias_q"], a["weight_scales"],
                        n.qparams[0], n.qparams[1], a["stride"], a["padding"], a["dilation"],
                        a["groups"], lo, hi, self.target)

    def op_linear(self, n: Node):
        x = self.q(n.inputs[0])
        a = n.attrs
        lo, hi = _act_range(n)
        return B.linear(self.b, x, a["weight_q"], a["bias_q"], float(a["weight_scales"][0]),
                        n.qparams[0], n.qparams[1], lo, hi, self.target)

    def _broadcastable(self, s1, s2) -> bool:
        if s1 == s2:
            return True
        if len(s1) == 4 and len(s2) == 4 and s1[1] == s2[1]:
            return int(np.prod(s1)) == s1[1] or int(np.prod(s2)) == s2[1]
        return False

    def op_add(self, n: Node):
        x1, x2 = self.q(n.inputs[0]), self.q(n.inputs[1])
        if not self._broadcastable(x1.sizes, x2.sizes):
            return None
        lo, hi = _act_range(n)
        return B.add(self.b, x1, x2, n.qparams[0], n.qparams[1], lo, hi)

    def op_mul(self, n: Node):
        x1, x2 = self.q(n.inputs[0]), self.q(n.inputs[1])
        if not self._broadcastable(x1.sizes, x2.sizes) or n.attrs.get("act"):
            return None
        return B.mul(self.b, x1, x2, n.qparams[0], n.qparams[1])

    def op_avg_pool2d(self, n: Node):
        a = n.attrs
        if a.get("divisor_override") or n.attrs.get("act"):
            return None
        x = self.q(n.inputs[0])
        return B.avg_pool2d(self.b, x, a["kernel"], a["stride"], a["padding"], a["ceil_mode"],
                            a["count_include_pad"], self.target)

    def op_adaptive_avg_pool2d(self, n: Node):
        x = self.q(n.inputs[0])
        _, _, h, w = x.sizes
        oh, ow = n.attrs["output_size"]
        if h % oh or w % ow or n.attrs.get("act"):
            return None
        k = [h // oh, w // ow]
        return B.avg_pool2d(self.b, x, k, k, [0, 0], False, True, self.target)

    def op_mean(self, n: Node):
        x = self.q(n.inputs[0])
        dims = sorted(d % len(x.sizes) for d in n.attrs["dim"])
        if len(x.sizes) != 4 or dims != [2, 3] or n.attrs.get("act"):
            return None
        y = B.avg_pool2d(self.b, x, x.sizes[2:], x.sizes[2:], [0, 0], False, True, self.target)
        return y if n.attrs["keepdim"] else B.view(self.b, y, y.sizes[:2])

    def op_max_pool2d(self, n: Node):
        a = n.attrs
        if list(a["dilation"]) != [1, 1] or a["ceil_mode"]:
            return None
        x = self.q(n.inputs[0])
        lo, hi = _act_range(n)
        return B.max_pool2d(self.b, x, a["kernel"], a["stride"], a["padding"], lo, hi)

    def op_clamp(self, n: Node):
        x = self.q(n.inputs[0])
        lo, hi = qm.activation_range(n.attrs["lo"], n.attrs["hi"], x.scale, x.zp)
        if len(x.sizes) == 4:
            return B.max_pool2d(self.b, x, [1, 1], [1, 1], [0, 0], lo, hi)
        if len(x.sizes) == 2:     # [N,F] contiguous has the bytes of [N,F,1,1] channels-last
            v = B.view(self.b, x, list(x.sizes) + [1, 1])
            y = B.max_pool2d(self.b, v, [1, 1], [1, 1], [0, 0], lo, hi)
            return B.view(self.b, y, x.sizes)
        return None

    def op_reshape(self, n: Node):
        return B.view(self.b, self.q(n.inputs[0]), n.attrs["shape"])

    def op_softmax(self, n: Node):
        x = self.q(n.inputs[0])
        if n.attrs["dim"] % len(x.sizes) != len(x.sizes) - 1 or len(x.sizes) == 4:
            return None
        return B.softmax(self.b, x, -1)

    def op_sigmoid(self, n: Node):
        return B.activation_lut(self.b, self.q(n.inputs[0]), lambda v: 1.0 / (1.0 + np.exp(-v)),
                                n.qparams[0], n.qparams[1])

    def op_tanh(self, n: Node):
        return B.activation_lut(self.b, self.q(n.inputs[0]), np.tanh, n.qparams[0], n.qparams[1])

    def op_constant(self, n: Node):
        """A float constant; consumers quantize it (at run time) if they need int8."""
        value = np.asarray(n.attrs["value"], np.float32)
        v = self.b.constant(value)
        return B.Act(v, list(value.shape), ScalarType.FLOAT)

    def op_identity(self, n: Node):
        return self.env[n.inputs[0]]

    # -- fp32 fallback --------------------------------------------------------
    def fallback(self, n: Node) -> B.Act:
        ins = [self.f(i) for i in n.inputs]
        out = B.new_act(self.b, ScalarType.FLOAT, n.shape)
        b = self.b
        a = n.attrs
        if n.op == "unsupported":
            # No schema known: the call lists inputs, out and the return slot.
            # The name is what the model called; ptec's kernel check rejects it.
            key = f"aten::{a.get('what', 'unknown')}.out"
            if key in SIGNATURES:
                key = f"ptec_unsupported::{a.get('what', 'unknown')}"
            b.call_raw(key, [i.value for i in ins] + [out.value, out.value])
            self.fallbacks.append(f"{n.name}: {key}")
            return out
        key = _FALLBACK_KEYS.get(n.op) or f"aten::{n.op}.out"
        if key == "aten::convolution.out":
            b.call(key, input=ins[0].value, weight=b.constant(a["weight"]),
                   bias=None if a.get("bias") is None else b.constant(a["bias"]),
                   stride=a["stride"], padding=a["padding"], dilation=a["dilation"],
                   transposed=False, output_padding=[0, 0], groups=a["groups"], out=out.value)
        elif key == "aten::linear.out":
            b.call(key, input=ins[0].value, weight=b.constant(a["weight"]),
                   bias=None if a.get("bias") is None else b.constant(a["bias"]), out=out.value)
        elif key == "aten::add.out":
            b.call(key, self=ins[0].value, other=ins[1].value, alpha=1, out=out.value)
        elif key in ("aten::mul.out",):
            b.call(key, self=ins[0].value, other=ins[1].value, out=out.value)
        elif key in ("aten::sigmoid.out", "aten::tanh.out", "aten::relu.out"):
            b.call(key, self=ins[0].value, out=out.value)
        elif key == "aten::_softmax.out":
            b.call(key, self=ins[0].value, dim=int(a["dim"]), half_to_float=False, out=out.value)
        elif key == "aten::clamp.out":
            b.call(key, self=ins[0].value, min=a["lo"], max=a["hi"], out=out.value)
        elif key == "aten::cat.out":
            b.call(key, tensors=[i.value for i in ins], dim=int(a["dim"]), out=out.value)
        elif key == "aten::view_copy.out":
            b.call(key, self=ins[0].value, size=list(n.shape), out=out.value)
        elif key == "aten::avg_pool2d.out":
            b.call(key, self=ins[0].value, kernel_size=a["kernel"], stride=a["stride"],
                   padding=a["padding"], ceil_mode=a["ceil_mode"],
                   count_include_pad=a["count_include_pad"],
                   divisor_override=a.get("divisor_override"), out=out.value)
        elif key == "aten::max_pool2d.out":
            b.call(key, self=ins[0].value, kernel_size=a["kernel"], stride=a["stride"],
                   padding=a["padding"], dilation=a["dilation"], ceil_mode=a["ceil_mode"],
                   out=out.value)
        elif key == "aten::mean.out":
            b.call(key, self=ins[0].value, dim=list(a["dim"]), keepdim=a["keepdim"], dtype=None,
                   out=out.value)
        else:
            b.call_raw(key, [i.value for i in ins] + [out.value, out.value])
        act = a.get("act")
        if act and key != "aten::clamp.out":
            clamped = B.new_act(self.b, ScalarType.FLOAT, n.shape)
            b.call("aten::clamp.out", self=out.value, min=act[0], max=act[1], out=clamped.value)
            out = clamped
        self.fallbacks.append(f"{n.name}: {key}")
        return out


def lower(q: Graph, target: str = "cortex-m55", int8_io: bool = False) -> Lowered:
    for n in q.nodes:
        if n.qparams is None:
            raise LoweringError(f"node {n.name} has no quantization parameters")
    return _Lowerer(q, target, int8_io).run()

