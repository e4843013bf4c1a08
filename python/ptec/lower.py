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
    "add": "aten::add.out", "sub": "aten::sub.out", "mul": "aten::mul.out",
    "div": "aten::div.out", "sigmoid": "aten::sigmoid.out", "tanh": "aten::tanh.out",
    "softmax": "aten::_softmax.out", "clamp": "aten::clamp.out",
    "avg_pool2d": "aten::avg_pool2d.out", "max_pool2d": "aten::max_pool2d_with_indices.out",
    "cat": "aten::cat.out", "mean": "aten::mean.out", "reshape": "aten::view_copy.out",
    "permute": "aten::permute_copy.out",
    "batch_norm": "aten::_native_batch_norm_legit_no_training.out",
    "adaptive_avg_pool2d": "aten::_adaptive_avg_pool2d.out",
}

# Ops that stay in fp32 when their input already is fp32 because the fallback
# produced it: a quantize/dequantize pair around a cheap op would only lose
# precision. Their int8 lowering still applies to int8 inputs.
_FLOAT_FOLLOWERS = ("sigmoid", "tanh", "clamp", "softmax", "reshape")


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
        self.float_nodes = set()          # nodes the fp32 fallback produced

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
            out = handler(n) if handler is not None and not self._stays_float(n) else None
            if out is None:
                out = self.fallback(n)
                self.float_nodes.add(n.name)
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

    def op_cat(self, n: Node):
        """int8 cat: a byte copy, valid when the inputs share the output's
        scale and zero point (the quantizer arranges it when it can)."""
        qp = tuple(n.qparams)
        if n.attrs.get("act") or any(tuple(self.g.node(i).qparams or ()) != qp for i in n.inputs):
            return None
        xs = [self.q(i) for i in n.inputs]
        if any((x.scale, x.zp) != qp for x in xs):
            return None
        out = B.new_act(self.b, ScalarType.CHAR, n.shape, qp[0], qp[1])
        self.b.call("aten::cat.out", tensors=[x.value for x in xs], dim=int(n.attrs["dim"]),
                    out=out.value)
        return out

    # -- fp32 fallback --------------------------------------------------------
    def _stays_float(self, n: Node) -> bool:
        return (not self.int8_io and n.op in _FLOAT_FOLLOWERS and bool(n.inputs)
                and all(i in self.float_nodes for i in n.inputs))

    def _relayout(self, x: B.Act, dim_order) -> B.Act:
        """x with the given dim order: itself, or a _clone_dim_order copy."""
        t = self.b.values[x.value].val
        if list(t.dim_order) == list(dim_order) or not B._needs_relayout(x.sizes):
            return x
        return B.clone_dim_order(self.b, x, list(dim_order))

    def _activation(self, x: B.Act, lo, hi) -> B.Act:
        out = B.new_act(self.b, ScalarType.FLOAT, x.sizes)
        if lo == 0 and hi is None:
            self.b.call("aten::relu.out", self=x.value, out=out.value)
        else:
            self.b.call("aten::clamp.out", self=x.value, min=None if lo is None else float(lo),
                        max=None if hi is None else float(hi), out=out.value)
        return out

    def fallback(self, n: Node) -> B.Act:
        """The node in fp32 on a portable ATen kernel, with exactly the
        schema of src/kernels/portable (docs/portable-ops.md). 4-D values
        are channels-last, which every layout-sensitive kernel addresses
        through its dim order; linear wants contiguous operands."""
        ins = [self.f(i) for i in n.inputs]
        b = self.b
        a = n.attrs
        if n.op == "unsupported":
            out = B.new_act(b, ScalarType.FLOAT, n.shape)
            # No schema known: the call lists inputs, out and the return slot.
            # The name is what the model called; ptec's kernel check rejects it.
            key = f"aten::{a.get('what', 'unknown')}.out"
            if key in SIGNATURES:
                key = f"ptec_unsupported::{a.get('what', 'unknown')}"
            b.call_raw(key, [i.value for i in ins] + [out.value, out.value])
            self.fallbacks.append(f"{n.name}: {key}")
            return out

        def const(v):
            return None if v is None else b.constant(np.asarray(v, np.float32))

        key = _FALLBACK_KEYS.get(n.op) or f"aten::{n.op}.out"
        act = a.get("act")
        if n.op == "clamp":
            lo, hi = _combine_bounds((a["lo"], a["hi"]), act)
            self.fallbacks.append(f"{n.name}: " + ("aten::relu.out" if lo == 0 and hi is None
                                                   else "aten::clamp.out"))
            return self._activation(ins[0], lo, hi)
        if key == "aten::linear.out":
            x = self._relayout(ins[0], list(range(len(ins[0].sizes))))
            y = B.new_act(b, ScalarType.FLOAT, n.shape, dim_order=list(range(len(n.shape))))
            b.call(key, input=x.value, weight=const(a["weight"]), bias=const(a.get("bias")),
                   out=y.value)
            out = self._relayout(y, B.layout(n.shape))
            if act:
                out = self._activation(out, act[0], act[1])
            self.fallbacks.append(f"{n.name}: {key}")
            return out
        out = B.new_act(b, ScalarType.FLOAT, n.shape)
        if key == "aten::convolution.out":
            b.call(key, input=ins[0].value, weight=const(a["weight"]), bias=const(a.get("bias")),
                   stride=list(a["stride"]), padding=list(a["padding"]),
                   dilation=list(a["dilation"]), transposed=False, output_padding=[0, 0],
                   groups=int(a["groups"]), out=out.value)
        elif key in ("aten::add.out", "aten::sub.out"):
            b.call(key, self=ins[0].value, other=ins[1].value, alpha=1, out=out.value)
        elif key in ("aten::mul.out", "aten::div.out"):
            b.call(key, self=ins[0].value, other=ins[1].value, out=out.value)
        elif key in ("aten::sigmoid.out", "aten::tanh.out"):
            b.call(key, self=ins[0].value, out=out.value)
        elif key == "aten::_softmax.out":
            b.call(key, self=ins[0].value, dim=int(a["dim"]) % len(n.shape), half_to_float=False,
                   out=out.value)
        elif key == "aten::cat.out":
            b.call(key, tensors=[i.value for i in ins], dim=int(a["dim"]) % len(n.shape),
                   out=out.value)
        elif key == "aten::view_copy.out":
            b.call(key, self=ins[0].value, size=list(n.shape), out=out.value)
        elif key == "aten::permute_copy.out":
            b.call(key, self=ins[0].value, dims=[int(d) for d in a["dims"]], out=out.value)
        elif key == "aten::avg_pool2d.out":
            b.call(key, self=ins[0].value, kernel_size=list(a["kernel"]), stride=list(a["stride"]),
                   padding=list(a["padding"]), ceil_mode=bool(a["ceil_mode"]),
                   count_include_pad=bool(a["count_include_pad"]),
                   divisor_override=a.get("divisor_override"), out=out.value)
        elif key == "aten::max_pool2d_with_indices.out":
            indices = b.tensor(ScalarType.LONG, n.shape, B.layout(n.shape))
            b.call(key, self=ins[0].value, kernel_size=list(a["kernel"]), stride=list(a["stride"]),
                   padding=list(a["padding"]), dilation=list(a["dilation"]),
                   ceil_mode=bool(a["ceil_mode"]), out=out.value, indices=indices)
        elif key == "aten::_adaptive_avg_pool2d.out":
            b.call(key, self=ins[0].value, output_size=list(a["output_size"]), out=out.value)
        elif key == "aten::mean.out":
            b.call(key, self=ins[0].value, dim=[int(d) for d in a["dim"]], keepdim=bool(a["keepdim"]),
                   dtype=None, out=out.value)
        elif key == "aten::_native_batch_norm_legit_no_training.out":
            b.call(key, input=ins[0].value, weight=const(a.get("gamma")), bias=const(a.get("beta")),
                   running_mean=const(a["mean"]), running_var=const(a["var"]), momentum=0.1,
                   eps=float(a["eps"]), out0=out.value, out1=b.tensor(ScalarType.FLOAT, [0]),
                   out2=b.tensor(ScalarType.FLOAT, [0]))
        else:
            b.call_raw(key, [i.value for i in ins] + [out.value, out.value])
        if act:
            out = self._activation(out, act[0], act[1])
        self.fallbacks.append(f"{n.name}: {key}")
        return out


def _combine_bounds(a, b):
    """Two clamps in a row as one: the tighter bound on each side."""
    if b is None:
        return a
    lo = b[0] if a[0] is None else (a[0] if b[0] is None else max(a[0], b[0]))
    hi = b[1] if a[1] is None else (a[1] if b[1] is None else min(a[1], b[1]))
    return lo, hi

def lower(q: Graph, target: str = "cortex-m55", int8_io: bool = False) -> Lowered:
    for n in q.nodes:
        if n.qparams is None:
            raise LoweringError(f"node {n.name} has no quantization parameters")
    return _Lowerer(q, target, int8_io).run()

