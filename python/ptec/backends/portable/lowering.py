"""The portable fp32 fallback: a graph node on an ATen kernel of
src/kernels/portable, with exactly that kernel's schema
(docs/portable-ops.md). 4-D values are channels-last, which every
layout-sensitive kernel addresses through its dim order; linear wants
contiguous operands. One entry per ATen operator in CALLS."""
from __future__ import annotations

from typing import Callable, Dict, List

import numpy as np

from ...ir import Node
from ...lowered import Act, clone_dim_order, layout, needs_relayout, new_act
from ...ops import SIGNATURES
from ...pte.program_builder import ProgramBuilder
from ...pte.schema import ScalarType

# graph op -> ATen kernel; any other op `x` is tried as aten::x.out
ATEN_KEYS = {
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


def _const(b: ProgramBuilder, v):
    return None if v is None else b.constant(np.asarray(v, np.float32))


def _convolution(b, key, n, ins, out):
    a = n.attrs
    b.call(key, input=ins[0].value, weight=_const(b, a["weight"]), bias=_const(b, a.get("bias")),
           stride=list(a["stride"]), padding=list(a["padding"]),
           dilation=list(a["dilation"]), transposed=False, output_padding=[0, 0],
           groups=int(a["groups"]), out=out.value)


def _binary_alpha(b, key, n, ins, out):
    b.call(key, self=ins[0].value, other=ins[1].value, alpha=1, out=out.value)


def _binary(b, key, n, ins, out):
    b.call(key, self=ins[0].value, other=ins[1].value, out=out.value)


def _unary(b, key, n, ins, out):
    b.call(key, self=ins[0].value, out=out.value)


def _softmax(b, key, n, ins, out):
    b.call(key, self=ins[0].value, dim=int(n.attrs["dim"]) % len(n.shape), half_to_float=False,
           out=out.value)


def _cat(b, key, n, ins, out):
    b.call(key, tensors=[i.value for i in ins], dim=int(n.attrs["dim"]) % len(n.shape),
           out=out.value)


def _view_copy(b, key, n, ins, out):
    b.call(key, self=ins[0].value, size=list(n.shape), out=out.value)


def _permute_copy(b, key, n, ins, out):
    b.call(key, self=ins[0].value, dims=[int(d) for d in n.attrs["dims"]], out=out.value)


def _avg_pool2d(b, key, n, ins, out):
    a = n.attrs
    b.call(key, self=ins[0].value, kernel_size=list(a["kernel"]), stride=list(a["stride"]),
           padding=list(a["padding"]), ceil_mode=bool(a["ceil_mode"]),
           count_include_pad=bool(a["count_include_pad"]),
           divisor_override=a.get("divisor_override"), out=out.value)


def _max_pool2d_with_indices(b, key, n, ins, out):
    a = n.attrs
    indices = b.tensor(ScalarType.LONG, n.shape, layout(n.shape))
    b.call(key, self=ins[0].value, kernel_size=list(a["kernel"]), stride=list(a["stride"]),
           padding=list(a["padding"]), dilation=list(a["dilation"]),
           ceil_mode=bool(a["ceil_mode"]), out=out.value, indices=indices)


def _adaptive_avg_pool2d(b, key, n, ins, out):
    b.call(key, self=ins[0].value, output_size=list(n.attrs["output_size"]), out=out.value)


def _mean(b, key, n, ins, out):
    a = n.attrs
    b.call(key, self=ins[0].value, dim=[int(d) for d in a["dim"]], keepdim=bool(a["keepdim"]),
           dtype=None, out=out.value)


def _batch_norm(b, key, n, ins, out):
    a = n.attrs
    b.call(key, input=ins[0].value, weight=_const(b, a.get("gamma")), bias=_const(b, a.get("beta")),
           running_mean=_const(b, a["mean"]), running_var=_const(b, a["var"]), momentum=0.1,
           eps=float(a["eps"]), out0=out.value, out1=b.tensor(ScalarType.FLOAT, [0]),
           out2=b.tensor(ScalarType.FLOAT, [0]))


# ATen kernel -> how to call it: fn(builder, key, node, fp32 inputs, fp32 out)
CALLS: Dict[str, Callable] = {
    "aten::convolution.out": _convolution,
    "aten::add.out": _binary_alpha, "aten::sub.out": _binary_alpha,
    "aten::mul.out": _binary, "aten::div.out": _binary,
    "aten::sigmoid.out": _unary, "aten::tanh.out": _unary,
    "aten::_softmax.out": _softmax,
    "aten::cat.out": _cat,
    "aten::view_copy.out": _view_copy,
    "aten::permute_copy.out": _permute_copy,
    "aten::avg_pool2d.out": _avg_pool2d,
    "aten::max_pool2d_with_indices.out": _max_pool2d_with_indices,
    "aten::_adaptive_avg_pool2d.out": _adaptive_avg_pool2d,
    "aten::mean.out": _mean,
    "aten::_native_batch_norm_legit_no_training.out": _batch_norm,
}


def _relayout(b: ProgramBuilder, x: Act, dim_order) -> Act:
    """x with the given dim order: itself, or a _clone_dim_order copy."""
    t = b.values[x.value].val
    if list(t.dim_order) == list(dim_order) or not needs_relayout(x.sizes):
        return x
    return clone_dim_order(b, x, list(dim_order))


def _activation(b: ProgramBuilder, x: Act, lo, hi) -> Act:
    out = new_act(b, ScalarType.FLOAT, x.sizes)
    if lo == 0 and hi is None:
        b.call("aten::relu.out", self=x.value, out=out.value)
    else:
        b.call("aten::clamp.out", self=x.value, min=None if lo is None else float(lo),
               max=None if hi is None else float(hi), out=out.value)
    return out


def _combine_bounds(a, b):
    """Two clamps in a row as one: the tighter bound on each side."""
    if b is None:
        return a
    lo = b[0] if a[0] is None else (a[0] if b[0] is None else max(a[0], b[0]))
    hi = b[1] if a[1] is None else (a[1] if b[1] is None else min(a[1], b[1]))
    return lo, hi


def lower_fp32(n: Node, ins: List[Act], b: ProgramBuilder, fallbacks: List[str]) -> Act:
    """n on a portable kernel; ins are its inputs in fp32. Appends
    "node: kernel" to fallbacks."""
    a = n.attrs
    if n.op == "unsupported":
        out = new_act(b, ScalarType.FLOAT, n.shape)
        # No schema known: the call lists inputs, out and the return slot.
        # The name is what the model called; ptec's kernel check rejects it.
        key = f"aten::{a.get('what', 'unknown')}.out"
        if key in SIGNATURES:
            key = f"ptec_unsupported::{a.get('what', 'unknown')}"
        b.call_raw(key, [i.value for i in ins] + [out.value, out.value])
        fallbacks.append(f"{n.name}: {key}")
        return out
    key = ATEN_KEYS.get(n.op) or f"aten::{n.op}.out"
    act = a.get("act")
    if n.op == "clamp":
        lo, hi = _combine_bounds((a["lo"], a["hi"]), act)
        fallbacks.append(f"{n.name}: " + ("aten::relu.out" if lo == 0 and hi is None
                                          else "aten::clamp.out"))
        return _activation(b, ins[0], lo, hi)
    if key == "aten::linear.out":
        x = _relayout(b, ins[0], list(range(len(ins[0].sizes))))
        y = new_act(b, ScalarType.FLOAT, n.shape, dim_order=list(range(len(n.shape))))
        b.call(key, input=x.value, weight=_const(b, a["weight"]), bias=_const(b, a.get("bias")),
               out=y.value)
        out = _relayout(b, y, layout(n.shape))
    else:
        out = new_act(b, ScalarType.FLOAT, n.shape)
        call = CALLS.get(key)
        if call is not None:
            call(b, key, n, ins, out)
        else:
            b.call_raw(key, [i.value for i in ins] + [out.value, out.value])
    if act:
        out = _activation(b, out, act[0], act[1])
    fallbacks.append(f"{n.name}: {key}")
    return out
