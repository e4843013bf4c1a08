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
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np

from . import quant_math as qm
from .ir import UNARY, Graph, Node, permutation
from .ops import SIGNATURES
from .pte import builders as B
from .pte.program_builder import CHANNELS_LAST, ProgramBuilder
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
    refusals: List[str] = field(default_factory=list)    # "node: why it is not int8"

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
_FLOAT_FOLLOWERS = ("sigmoid", "tanh", "clamp", "softmax", "reshape", "permute")


_DEFERRED = object()        # a handler's result when the value is made on first use


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


class _Lowerer:
    def __init__(self, g: Graph, target: str, int8_io: bool):
        self.g = g
        self.target = target
        self.int8_io = int8_io
        self.b = ProgramBuilder()
        self.env: Dict[str, B.Act] = {}
        self.fallbacks: List[str] = []
        self.float_nodes = set()          # nodes the fp32 fallback produced
        self.refusals: List[str] = []
        self.deferred: Dict[str, Callable[[], B.Act]] = {}
        self.pre_transposed: Dict[str, str] = {}   # absorbed permute -> its input

    def _get(self, name: str) -> B.Act:
        if name in self.deferred:
            self.env[name] = self.deferred.pop(name)()
        return self.env[name]

    def refuse(self, n: Node, why: str) -> None:
        """Record why a node cannot be lowered to int8 (reported if the float
        fallback has no kernel either) and return None."""
        self.refusals.append(f"{n.name} ({n.op}): {why}")
        return None

    # value access in the representation a consumer needs
    def q(self, name: str) -> B.Act:
        if name in self.deferred and self.g.node(name).op == "constant":
            s, z = self.g.node(name).qparams
            self.deferred.pop(name)
            self.env[name] = self.const_q(name, s, z)
        a = self._get(name)
        if a.dtype == ScalarType.CHAR:
            return a
        s, z = self.g.node(name).qparams
        qa = B.quantize(self.b, a, s, z)
        self.env[name] = qa
        return qa

    def f(self, name: str) -> B.Act:
        a = self._get(name)
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
            if out is _DEFERRED:
                continue
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
        return Lowered(self.b, inputs, outputs, self.target, self.fallbacks, self.refusals)

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
        if len(x.sizes) == 4:       # over W of a channels-last tensor: rows must be contiguous
            rows = B.view(self.b, x, [int(np.prod(x.sizes[:3])), x.sizes[3]])
            y = B.linear(self.b, rows, a["weight_q"], a["bias_q"], float(a["weight_scales"][0]),
                         n.qparams[0], n.qparams[1], lo, hi, self.target)
            return B.view(self.b, y, n.shape)
        return B.linear(self.b, x, a["weight_q"], a["bias_q"], float(a["weight_scales"][0]),
                        n.qparams[0], n.qparams[1], lo, hi, self.target)

    def _broadcastable(self, s1, s2) -> bool:
        if s1 == s2:
            return True
        if len(s1) == 4 and len(s2) == 4 and s1[1] == s2[1]:
            return int(np.prod(s1)) == s1[1] or int(np.prod(s2)) == s2[1]
        return False

    def op_add(self, n: Node):
        lut = self._lut_with_number(n, np.add)
        if lut is not None:
            return lut
        x1, x2 = self.q(n.inputs[0]), self.q(n.inputs[1])
        if not self._broadcastable(x1.sizes, x2.sizes):
            return None
        lo, hi = _act_range(n)
        return B.add(self.b, x1, x2, n.qparams[0], n.qparams[1], lo, hi)

    def op_mul(self, n: Node):
        lut = self._lut_with_number(n, np.multiply)
        if lut is not None:
            return lut
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
        r = len(x.sizes)
        dims = sorted(d % r for d in n.attrs["dim"])
        if n.attrs.get("act"):
            return None
        if r == 4 and dims == [2, 3]:
            y = B.avg_pool2d(self.b, x, x.sizes[2:], x.sizes[2:], [0, 0], False, True, self.target)
            return y if n.attrs["keepdim"] else B.view(self.b, y, y.sizes[:2])
        if r == 3 and dims == [1]:
            # [B,T,D] contiguous has the bytes of [B,D,T,1] channels-last: pool over T
            bsz, t, d = x.sizes
            v = self._raw_view(x, [bsz, d, t, 1], CHANNELS_LAST)
        elif r in (2, 3) and dims == [r - 1]:
            # rows of a contiguous tensor are the W axis of a C = 1 image
            rows = int(np.prod(x.sizes[:-1]))
            v = self._raw_view(x, [1, 1, rows, x.sizes[-1]], CHANNELS_LAST)
        else:
            return self.refuse(n, f"mean over dims {dims} of a rank-{r} tensor")
        k = v.sizes[2:] if r == 3 and dims == [1] else [1, v.sizes[3]]
        y = B.avg_pool2d(self.b, v, k, k, [0, 0], False, True, self.target)
        return self._raw_view(y, n.shape, list(range(len(n.shape))))

    def op_max_pool2d(self, n: Node):
        a = n.attrs
        if list(a["dilation"]) != [1, 1]:
            return self.refuse(n, f"dilation {list(a['dilation'])}: cortex_m::quantized_max_pool2d "
                                  "needs dilation 1")
        x = self.q(n.inputs[0])
        if len(x.sizes) != 4:
            return self.refuse(n, "input is not 4-D")
        if a["ceil_mode"]:
            # The extra bottom/right windows of ceil_mode see the input padded
            # with -128, which never wins a max (each window holds a real
            # value), so ceil_mode becomes a pad and an ordinary pool.
            extra = [(o - 1) * s + k - (i + 2 * p) for o, s, k, i, p in
                     zip(n.shape[2:], a["stride"], a["kernel"], x.sizes[2:], a["padding"])]
            if max(extra) > 0:
                x = B.pad(self.b, x, [0, 0, 0, 0], [0, max(extra[0], 0), max(extra[1], 0), 0],
                          qm.QMIN)
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
        r = len(x.sizes)
        if not 1 <= r <= 4:
            return self.refuse(n, f"rank {r}: cortex_m::softmax takes rank 1 to 4")
        d = n.attrs["dim"] % r
        # Work on the physical (contiguous) shape, bring the softmax dim
        # innermost with cortex_m::transpose when it is not, and run rows.
        if r == 4:        # channels-last: physical NHWC; the channel dim is already innermost
            phys = [x.sizes[i] for i in CHANNELS_LAST]
            xp, pos = self._raw_view(x, phys, [0, 1, 2, 3]), CHANNELS_LAST.index(d)
        else:
            xp, pos = x, d
        perm = list(range(r))
        perm[pos], perm[-1] = perm[-1], perm[pos]
        if pos != r - 1:
            xp = B.transpose(self.b, xp, perm)
        rows = self._raw_view(xp, [int(np.prod(xp.sizes[:-1])), xp.sizes[-1]], [0, 1])
        y = B.softmax(self.b, rows, -1)
        y = self._raw_view(y, xp.sizes, list(range(r)))
        if pos != r - 1:
            y = B.transpose(self.b, y, perm)
        return self._raw_view(y, x.sizes, B.layout(x.sizes))

    def op_sigmoid(self, n: Node):
        return B.activation_lut(self.b, self.q(n.inputs[0]), lambda v: 1.0 / (1.0 + np.exp(-v)),
                                n.qparams[0], n.qparams[1])

    def op_tanh(self, n: Node):
        return B.activation_lut(self.b, self.q(n.inputs[0]), np.tanh, n.qparams[0], n.qparams[1])

    def op_constant(self, n: Node):
        """A constant, made on first use: as int8 quantized ahead of time for
        int8 consumers (q), as float32 for float ones (f), not at all when a
        lowering folds it (a number operand becomes part of a LUT)."""
        value = np.asarray(n.attrs["value"], np.float32)

        def make():
            return B.Act(self.b.constant(value), list(value.shape), ScalarType.FLOAT)
        self.deferred[n.name] = make
        return _DEFERRED

    def const_q(self, name: str, scale: float, zp: int, sizes=None) -> B.Act:
        """A constant node (reshaped to `sizes`) as an int8 constant on the grid
        (scale, zp), with the numerics of quantize_per_tensor; 4-D constants
        are stored channels-last like activations."""
        from .reference.cortex_m import quantize_per_tensor
        value = np.asarray(self.g.node(name).attrs["value"], np.float32)
        if sizes is not None:
            value = value.reshape([int(d) for d in sizes])
        q8 = quantize_per_tensor(value, scale, zp, qm.QMIN, qm.QMAX)
        if q8.ndim == 4:
            v = self.b.constant(np.ascontiguousarray(q8.transpose(0, 2, 3, 1)))
            t = self.b.values[v].val
            t.sizes, t.dim_order = list(q8.shape), bytes(CHANNELS_LAST)
        else:
            v = self.b.constant(q8)
        return B.Act(v, list(q8.shape), ScalarType.CHAR, scale, zp)

    def _raw_view(self, x: B.Act, sizes, dim_order) -> B.Act:
        """The same bytes under other sizes and dim order (no instruction)."""
        v = self.b.view(x.value, [int(s) for s in sizes], list(dim_order))
        return B.Act(v, [int(s) for s in sizes], x.dtype, x.scale, x.zp)

    def _requantize(self, x: B.Act, scale: float, zp: int) -> B.Act:
        """x on another int8 grid: an identity LUT (one 256-byte table)."""
        if (float(x.scale), int(x.zp)) == (float(scale), int(zp)):
            return x
        return B.activation_lut(self.b, x, lambda v: v, scale, zp)

    def _number(self, name: str) -> Optional[float]:
        node = self.g.node(name)
        if node.op == "constant" and np.asarray(node.attrs["value"]).size == 1:
            return float(np.asarray(node.attrs["value"], np.float64).reshape(-1)[0])
        return None

    def _lut_with_number(self, n: Node, fn) -> Optional[B.Act]:
        """x (op) c or c (op) x with a number c is a function of one int8
        tensor: a 256-entry LUT (quantized_activation), fused clamp included."""
        a, b = n.inputs
        ca, cb = self._number(a), self._number(b)
        if (ca is None) == (cb is None):
            return None
        x = self.q(a if cb is not None else b)
        act = n.attrs.get("act") or (None, None)
        lo = -np.inf if act[0] is None else act[0]
        hi = np.inf if act[1] is None else act[1]

        def f(v):
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                y = fn(v, cb) if cb is not None else fn(ca, v)
            return np.clip(np.nan_to_num(y, nan=0.0, posinf=1e30, neginf=-1e30), lo, hi)
        return B.activation_lut(self.b, x, f, n.qparams[0], n.qparams[1])

    def op_sub(self, n: Node):
        lut = self._lut_with_number(n, np.subtract)
        if lut is not None:
            return lut
        # a - b = a + (-b). On the grid (s, -1 - zp) the negation is exact:
        # q -> -q - 1, a bijection of [-128, 127], as a LUT.
        x1, x2 = self.q(n.inputs[0]), self.q(n.inputs[1])
        if not self._broadcastable(x1.sizes, x2.sizes):
            return self.refuse(n, f"shapes {x1.sizes} and {x2.sizes}: cortex_m::quantized_add "
                                  "broadcasts over channels only")
        neg = B.activation_lut(self.b, x2, np.negative, x2.scale, -1 - int(x2.zp))
        lo, hi = _act_range(n)
        return B.add(self.b, x1, neg, n.qparams[0], n.qparams[1], lo, hi)

    def op_div(self, n: Node):
        lut = self._lut_with_number(n, np.divide)
        if lut is not None:
            return lut
        x1, x2 = self.q(n.inputs[0]), self.q(n.inputs[1])
        if x1.sizes != x2.sizes:
            return self.refuse(n, f"shapes {x1.sizes} and {x2.sizes}: cortex_m::quantized_div "
                                  "does not broadcast")
        return B.div(self.b, x1, x2, n.qparams[0], n.qparams[1])

    def _min_max(self, n: Node, key: str):
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
        xs = []
        for i in n.inputs:
            want = operand_sizes(self.g.node(i).shape)
            if self.g.node(i).op == "constant":
                xs.append(self.const_q(i, s, z, want))
                continue
            x = self._requantize(self.q(i), s, z)
            if x.sizes != want:
                x = (self._raw_view(x, want, B.layout(want)) if int(np.prod(want)) == 1
                     else B.view(self.b, x, want))
            xs.append(x)
        out = B.new_act(self.b, B.I8, out_sizes, s, z)
        self.b.call(f"cortex_m::{key}.out", self=xs[0].value, other=xs[1].value, out=out.value)
        return out

    def op_minimum(self, n: Node):
        return self._min_max(n, "minimum")

    def op_maximum(self, n: Node):
        return self._min_max(n, "maximum")

    def _lut(self, n: Node):
        return B.activation_lut(self.b, self.q(n.inputs[0]), _unary_numpy(n),
                                n.qparams[0], n.qparams[1])

    op_silu = op_gelu = op_hardswish = op_hardsigmoid = op_leaky_relu = op_elu = _lut

    def op_conv_transpose2d(self, n: Node):
        a = n.attrs
        x = self.q(n.inputs[0])
        if len(x.sizes) != 4:
            return self.refuse(n, "input is not 4-D")
        if a["groups"] != 1:
            return self.refuse(n, f"groups {a['groups']}: cortex_m::quantized_transpose_conv2d "
                                  "needs groups 1")
        if any(a["output_padding"]):
            return self.refuse(n, f"output_padding {list(a['output_padding'])}: the int8 "
                                  "transposed convolution takes output_padding 0")
        if list(a["dilation"]) != [1, 1]:
            return self.refuse(n, f"dilation {list(a['dilation'])}: the int8 transposed "
                                  "convolution takes dilation 1")
        lo, hi = _act_range(n)
        return B.transpose_conv2d(self.b, x, a["weight_q"], a["bias_q"], a["weight_scales"],
                                  n.qparams[0], n.qparams[1], a["stride"], a["padding"],
                                  a["output_padding"], a["dilation"], lo, hi, self.target)

    def op_permute(self, n: Node):
        rank = len(self.g.node(n.inputs[0]).shape)
        perm = permutation(n, rank)
        if rank > 4:
            return self.refuse(n, f"rank {rank}: cortex_m::transpose takes rank 1 to 4")
        users = self.g.users(n.name)
        if (2 <= rank <= 3 and perm == list(range(rank - 2)) + [rank - 1, rank - 2] and users
                and n.name not in self.g.outputs
                and all(u.op == "matmul" and u.inputs == [u.inputs[0], n.name]
                        and u.inputs[0] != n.name for u in users)):
            # k.transpose(-2, -1) feeding matmuls as rhs: batch_matmul wants
            # rhs transposed, so it takes k as it is. Made only if needed.
            self.pre_transposed[n.name] = n.inputs[0]
            self.deferred[n.name] = lambda: self._permute(n, perm)
            return _DEFERRED
        return self._permute(n, perm)

    def _permute(self, n: Node, perm: List[int]) -> B.Act:
        x = self.q(n.inputs[0])
        out_sizes = [x.sizes[p] for p in perm]
        if len(x.sizes) == 4:
            # Permute the physical NHWC bytes: output physical dim i holds
            # logical dim CL[i] of the output, i.e. input logical perm[CL[i]].
            phys_in = [x.sizes[d] for d in CHANNELS_LAST]
            pp = [CHANNELS_LAST.index(perm[CHANNELS_LAST[i]]) for i in range(4)]
            xp = self._raw_view(x, phys_in, [0, 1, 2, 3])
            moved = [d for d in pp if phys_in[d] > 1]
            yp = xp if moved == sorted(moved) else B.transpose(self.b, xp, pp)
            return self._raw_view(yp, out_sizes, CHANNELS_LAST)
        moved = [d for d in perm if x.sizes[d] > 1]
        if moved == sorted(moved):           # only size-1 dims move: same bytes
            return self._raw_view(x, out_sizes, list(range(len(out_sizes))))
        return B.transpose(self.b, x, perm)

    def op_matmul(self, n: Node):
        a_name, b_name = n.inputs
        sa = list(self.g.node(a_name).shape)
        sb = list(self.g.node(b_name).shape)
        pre_t = self.pre_transposed.get(b_name) if b_name in self.deferred else None
        if pre_t is not None:
            src = list(self.g.node(pre_t).shape)
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
            return self.refuse(n, f"shapes {sa} @ {sb}")
        if ba == bb or (pa == 1 and pb == 1):
            lhs_sizes, bsz = [pa, m, k], pa
        elif pb == 1:                        # one rhs for every batch: fold the batch into M
            lhs_sizes, bsz = [1, pa * m, k], 1
        else:
            return self.refuse(n, f"batch dims {ba} and {bb}: only equal batch dims or a "
                                  "2-D rhs are lowered to cortex_m::quantized_batch_matmul")
        if self.g.node(a_name).op == "constant":
            s, z = self.g.node(a_name).qparams
            lhs = self.const_q(a_name, s, z, lhs_sizes)
        else:
            lhs = B.view(self.b, self.q(a_name), lhs_sizes)
        if pre_t is not None:
            rhs_t = B.view(self.b, self.q(pre_t), [bsz, ncols, k])
        elif self.g.node(b_name).op == "constant":
            s, z = self.g.node(b_name).qparams
            value = np.asarray(self.g.node(b_name).attrs["value"], np.float32)
            value = np.ascontiguousarray(value.reshape(bsz, k, ncols).transpose(0, 2, 1))
            from .reference.cortex_m import quantize_per_tensor
            v = self.b.constant(quantize_per_tensor(value, s, z, qm.QMIN, qm.QMAX))
            rhs_t = B.Act(v, [bsz, ncols, k], ScalarType.CHAR, s, z)
        else:
            rhs = B.view(self.b, self.q(b_name), [bsz, k, ncols])
            rhs_t = B.transpose(self.b, rhs, [0, 2, 1])
        y = B.batch_matmul(self.b, lhs, rhs_t, n.qparams[0], n.qparams[1], self.target)
        return B.view(self.b, y, n.shape)

    def op_pad(self, n: Node):
        a = n.attrs
        mode = a.get("mode", "constant")
        if mode != "constant":
            return self.refuse(n, f"mode {mode!r}: cortex_m::pad pads with a constant")
        x = self.q(n.inputs[0])
        r = len(x.sizes)
        pads = [int(p) for p in a["pad"]]
        if not 1 <= r <= 4 or len(pads) % 2 or len(pads) // 2 > r:
            return self.refuse(n, f"{len(pads) // 2} padded dims of a rank-{r} tensor: "
                                  "cortex_m::pad takes rank 1 to 4")
        if min(pads) < 0:
            return self.refuse(n, f"negative padding {pads} (cropping)")
        pre, post = [0] * r, [0] * r
        for i in range(len(pads) // 2):
            pre[r - 1 - i], post[r - 1 - i] = pads[2 * i], pads[2 * i + 1]
        s, z = n.qparams
        x = self._requantize(x, s, z)
        order = CHANNELS_LAST if r == 4 else list(range(r))     # physical slot order
        pre4 = [0] * (4 - r) + [pre[d] for d in order]
        post4 = [0] * (4 - r) + [post[d] for d in order]
        out = B.new_act(self.b, B.I8, [x.sizes[i] + pre[i] + post[i] for i in range(r)], s, z)
        self.b.call("cortex_m::pad.out", input=x.value, pre_pad=pre4, post_pad=post4,
                    pad_value=qm.quantize_value(float(a.get("value", 0.0)), s, z), out=out.value)
        return out

    def op_identity(self, n: Node):
        return self._get(n.inputs[0])

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
        if self.int8_io or not n.inputs:
            return False
        if n.op in ("add", "sub", "mul", "div"):
            # with a number operand these are cheap element-wise ops too
            tensors = [i for i in n.inputs if self._number(i) is None]
            return len(tensors) == 1 and tensors[0] in self.float_nodes
        return n.op in _FLOAT_FOLLOWERS and all(i in self.float_nodes for i in n.inputs)

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

