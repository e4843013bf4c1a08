"""Which graph nodes the cortex_m backend takes, and why it refuses the
others. These checks need only the graph; those that need the values the
lowering has made (their shapes and int8 grids) stay in the lowering, which
hands a node back with its reason."""
from __future__ import annotations

from typing import Optional

from ...ir import Node
from .lowering import LOWERINGS

# Ops that stay in fp32 when their input already is fp32 because the fallback
# produced it: a quantize/dequantize pair around a cheap op would only lose
# precision. Their int8 lowering still applies to int8 inputs.
FLOAT_FOLLOWERS = ("sigmoid", "tanh", "clamp", "softmax", "reshape", "permute")


def _stays_float(n: Node, ctx) -> bool:
    if ctx.int8_io or not n.inputs:
        return False
    if n.op in ("add", "sub", "mul", "div"):
        # with a number operand these are cheap element-wise ops too
        tensors = [i for i in n.inputs if ctx.number(i) is None]
        return len(tensors) == 1 and ctx.on_float_backend(tensors[0])
    return n.op in FLOAT_FOLLOWERS and all(ctx.on_float_backend(i) for i in n.inputs)


def refusal(n: Node, ctx) -> Optional[str]:
    """None when cortex_m takes n, else why not."""
    if n.op not in LOWERINGS:
        return f"no int8 lowering for {n.op}"
    if _stays_float(n, ctx):
        return "its input is fp32 from the fallback, and a cheap op stays in fp32"
    a = n.attrs
    if n.op == "avg_pool2d" and a.get("divisor_override"):
        return "divisor_override: cortex_m::quantized_avg_pool2d divides by the window"
    if n.op == "avg_pool2d" and a.get("act"):
        return "a fused activation: cortex_m::quantized_avg_pool2d has no clamp"
    if n.op == "max_pool2d" and list(a["dilation"]) != [1, 1]:
        return (f"dilation {list(a['dilation'])}: cortex_m::quantized_max_pool2d "
                "needs dilation 1")
    if n.op == "permute" and len(ctx.g.node(n.inputs[0]).shape) > 4:
        return (f"rank {len(ctx.g.node(n.inputs[0]).shape)}: cortex_m::transpose takes "
                "rank 1 to 4")
    if n.op == "pad" and a.get("mode", "constant") != "constant":
        return f"mode {a.get('mode')!r}: cortex_m::pad pads with a constant"
    if n.op == "cat":
        if a.get("act"):
            return "a fused activation: the int8 cat copies bytes"
        if any(tuple(ctx.g.node(i).qparams or ()) != tuple(n.qparams) for i in n.inputs):
            return "the inputs' int8 grids differ from the output's: the int8 cat copies bytes"
    return None
