"""Which graph nodes the cortex_m backend takes, and why it refuses the
others, from the graph alone: the op has an int8 lowering, and its shapes
and attributes fit the kernel. A value's sizes in the lowering are its
node's captured shape (a constant's: its value's), so these checks see what
the lowering will see. Facts the graph does not show (the int8 grid a value
was actually made on, an absorbed transpose) are checked by the lowering,
which hands the node back with its reason."""
from __future__ import annotations

from typing import Callable, Dict, Optional

import numpy as np

from ...ir import Node
from .lowering import LOWERINGS

# Ops that stay in fp32 when their input already is fp32 because the fallback
# produced it: a quantize/dequantize pair around a cheap op would only lose
# precision. Their int8 lowering still applies to int8 inputs.
FLOAT_FOLLOWERS = ("sigmoid", "tanh", "clamp", "softmax", "reshape", "permute", "channel_shuffle")


def _stays_float(n: Node, ctx) -> bool:
    if ctx.int8_io or not n.inputs:
        return False
    if n.op in ("add", "sub", "mul", "div"):
        # with a number operand these are cheap element-wise ops too
        tensors = [i for i in n.inputs if ctx.number(i) is None]
        return len(tensors) == 1 and ctx.on_float_backend(tensors[0])
    if n.op == "linear" and n.attrs.get("exact_sum"):
        # a sum (ptec.exact_sums) of fp32 values: the fp32 sum, not a rounding onto an int8 grid
        return ctx.on_float_backend(n.inputs[0])
    return n.op in FLOAT_FOLLOWERS and all(ctx.on_float_backend(i) for i in n.inputs)


def _shape(ctx, name: str):
    """A value's logical sizes: a constant's are its value's (that is how it
    is stored), any other node's are its captured shape."""
    node = ctx.g.node(name)
    if node.op == "constant":
        return list(np.shape(node.attrs["value"]))
    return list(node.shape)


def _broadcastable(s1, s2) -> bool:
    """Same shapes, or one operand a [1,C,1,1]-like per-channel vector of a 4-D other."""
    if s1 == s2:
        return True
    if len(s1) == 4 and len(s2) == 4 and s1[1] == s2[1]:
        return int(np.prod(s1)) == s1[1] or int(np.prod(s2)) == s2[1]
    return False


def _number_operand(n: Node, ctx) -> bool:
    """Exactly one operand is a number: the op is a LUT of the other."""
    return sum(ctx.number(i) is not None for i in n.inputs) == 1


def _elementwise(kernel: str, broadcast: bool):
    def check(n: Node, ctx) -> Optional[str]:
        if _number_operand(n, ctx):
            return None
        s1, s2 = (_shape(ctx, i) for i in n.inputs)
        if broadcast and not _broadcastable(s1, s2):
            return f"shapes {s1} and {s2}: cortex_m::{kernel} broadcasts over channels only"
        if not broadcast and s1 != s2:
            return f"shapes {s1} and {s2}: cortex_m::{kernel} does not broadcast"
        if kernel == "quantized_mul" and n.attrs.get("act"):
            return "a fused activation: cortex_m::quantized_mul has no clamp"
        return None
    return check


def _rank(ranks, what: str):
    def check(n: Node, ctx) -> Optional[str]:
        r = len(_shape(ctx, n.inputs[0]))
        return None if r in ranks else f"rank {r}: {what}"
    return check


def _softmax(n: Node, ctx) -> Optional[str]:
    """Rows of a 2-D view: any rank when the dim is the last (a rank-5+ tensor
    is contiguous); another dim is moved innermost by cortex_m::transpose,
    which takes rank 1 to 4."""
    r = len(_shape(ctx, n.inputs[0]))
    if r <= 4 or int(n.attrs["dim"]) % r == r - 1:
        return None
    return f"rank {r} over dim {int(n.attrs['dim']) % r}: only the last dim of a rank-5+ tensor"


def _masked_softmax(n: Node, ctx) -> Optional[str]:
    """ptec's masked softmax runs over the last dim of contiguous rows (an
    int8 value of rank <= 3 is contiguous). It has no fp32 fallback:
    refused, the node is reported as an operator ptec cannot run."""
    r = len(_shape(ctx, n.inputs[0]))
    if r > 3:
        return f"rank {r}: ptec's masked softmax takes contiguous rows (rank <= 3)"
    if int(n.attrs["dim"]) % r != r - 1:
        return "ptec's masked softmax runs over the last dim only"
    return None


NO_CLAMP = "a fused activation: cortex_m::quantized_avg_pool2d has no clamp"


def _avg_pool2d(n: Node, ctx) -> Optional[str]:
    if n.attrs.get("divisor_override"):
        return "divisor_override: cortex_m::quantized_avg_pool2d divides by the window"
    return NO_CLAMP if n.attrs.get("act") else None


def _adaptive_avg_pool2d(n: Node, ctx) -> Optional[str]:
    _, _, h, w = _shape(ctx, n.inputs[0])
    oh, ow = n.attrs["output_size"]
    if h % oh or w % ow:
        return f"output {[oh, ow]} does not divide input {[h, w]}"
    return NO_CLAMP if n.attrs.get("act") else None


# The reductions cortex_m::quantized_avg_pool2d does: (rank, sorted dims)
MEAN_DIMS = [(4, [2, 3]), (3, [1]), (3, [2]), (2, [1])]


def _mean(n: Node, ctx) -> Optional[str]:
    if n.attrs.get("act"):
        return NO_CLAMP
    r = len(_shape(ctx, n.inputs[0]))
    dims = sorted(d % r for d in n.attrs["dim"])
    return None if (r, dims) in MEAN_DIMS else f"mean over dims {dims} of a rank-{r} tensor"


def _max_pool2d(n: Node, ctx) -> Optional[str]:
    # (dilation: the lowering takes the maximum of strided slices)
    return _rank([4], "input is not 4-D")(n, ctx)


def _conv_transpose2d(n: Node, ctx) -> Optional[str]:
    a = n.attrs
    if len(_shape(ctx, n.inputs[0])) != 4:
        return "input is not 4-D"
    if a["groups"] != 1:
        return f"groups {a['groups']}: cortex_m::quantized_transpose_conv2d needs groups 1"
    if any(a["output_padding"]):
        return (f"output_padding {list(a['output_padding'])}: the int8 transposed "
                "convolution takes output_padding 0")
    if list(a["dilation"]) != [1, 1]:
        return f"dilation {list(a['dilation'])}: the int8 transposed convolution takes dilation 1"
    return None


def _min_max(n: Node, ctx) -> Optional[str]:
    """The operands take the result's rank (broadcast), which the kernel
    takes up to 4."""
    r = len(n.shape or [])
    return f"rank {r}: cortex_m::{n.op} takes rank <= 4" if r > 4 else None


def _permute(n: Node, ctx) -> Optional[str]:
    r = len(_shape(ctx, n.inputs[0]))
    return f"rank {r}: cortex_m::transpose takes rank 1 to 4" if r > 4 else None


def _edge_pad(n: Node, ctx) -> Optional[str]:
    """reflect / replicate: aten::reflection_pad / replication_pad (1d on
    [N, C, L], 2d on [N, C, H, W]), which copy int8 bytes."""
    mode = n.attrs.get("mode")
    if mode not in ("reflect", "replicate"):
        return f"padding mode {mode!r}: ptec pads with a constant, by reflection or by replication"
    shape = _shape(ctx, n.inputs[0])
    pads = [int(p) for p in n.attrs["pad"]]
    if len(shape) not in (3, 4) or len(pads) not in (2, 4) or len(pads) // 2 > len(shape) - 2:
        return f"{mode} padding of {len(pads) // 2} dims of a rank-{len(shape)} tensor: ptec pads the last " \
               "dim of [N, C, L] or the last one or two of [N, C, H, W]"
    if min(pads) < 0:
        return f"negative padding {pads} (cropping)"
    sizes = list(reversed(shape))   # pads list the last dim first
    if mode == "reflect" and any(p >= sizes[i // 2] for i, p in enumerate(pads)):
        return f"reflect padding {pads} is not smaller than the padded dims {shape}"
    return None


def _pad(n: Node, ctx) -> Optional[str]:
    if n.attrs.get("mode", "constant") != "constant":
        return _edge_pad(n, ctx)
    r = len(_shape(ctx, n.inputs[0]))
    pads = [int(p) for p in n.attrs["pad"]]
    if not 1 <= r <= 4 or len(pads) % 2 or len(pads) // 2 > r:
        return f"{len(pads) // 2} padded dims of a rank-{r} tensor: cortex_m::pad takes rank 1 to 4"
    if min(pads) < 0:
        return f"negative padding {pads} (cropping)"
    return None


def _cat(n: Node, ctx) -> Optional[str]:
    if n.attrs.get("act"):
        return "a fused activation: the int8 cat copies bytes"
    if any(not ctx.g.node(i).qparams for i in n.inputs):
        return "an input is not quantized"
    return None


# graph op -> its check (ops with a lowering and no entry take every node)
def _layer_norm(n: Node, ctx) -> Optional[str]:
    """ptec's int8 layer norm only when the compile asked for it (it is not
    upstream's: `--int8-layernorm` marks the nodes), over contiguous rows."""
    if not n.attrs.get("int8_kernel"):
        return "upstream has no int8 layer norm (compile --int8-layernorm uses ptec's own)"
    r = len(_shape(ctx, n.inputs[0]))
    return None if r <= 3 else f"rank {r}: ptec's int8 layer norm takes contiguous rows (rank <= 3)"


def _lstm(n: Node, ctx) -> Optional[str]:
    """ptec::quantized_lstm takes [B, T, I] sequences (capture's LSTMLayer)."""
    shape = _shape(ctx, n.inputs[0])
    return None if len(shape) == 3 else f"input {shape}: the int8 LSTM takes [B, T, I] sequences"


def _svdf(n: Node, ctx) -> Optional[str]:
    """ptec::quantized_svdf runs one sequence: [1, T, input_size]."""
    s = _shape(ctx, n.inputs[0])
    return None if len(s) == 3 and s[0] == 1 else f"input {s}: ptec::quantized_svdf takes one sequence [1, T, features]"


CHECKS: Dict[str, Callable[[Node, object], Optional[str]]] = {
    "lstm": _lstm,
    "svdf": _svdf,
    "layer_norm": _layer_norm,
    "conv2d": _rank([4], "input is not 4-D"),
    "conv_transpose2d": _conv_transpose2d,
    "add": _elementwise("quantized_add", True),
    "sub": _elementwise("quantized_add", True),
    "mul": _elementwise("quantized_mul", True),
    "div": _elementwise("quantized_div", False),
    "avg_pool2d": _avg_pool2d,
    "adaptive_avg_pool2d": _adaptive_avg_pool2d,
    "mean": _mean,
    "max_pool2d": _max_pool2d,
    "softmax": _softmax,
    "masked_softmax": _masked_softmax,
    "permute": _permute,
    "minimum": _min_max,
    "maximum": _min_max,
    "channel_shuffle": _rank([4], "input is not 4-D"),
    "pad": _pad,
    "cat": _cat,
    "upsample_nearest": _rank([4], "input is not 4-D"),
    "pixel_shuffle": _rank([4], "input is not 4-D"),
}


def refusal(n: Node, ctx) -> Optional[str]:
    """None when cortex_m takes n, else why not."""
    if n.attrs.get("fp32"):
        return n.attrs["fp32"]          # a step its capture computes in fp32 on purpose (its reason)
    if n.op not in LOWERINGS:
        return ("no int8 lowering for it" if n.op == "unsupported"
                else f"no int8 lowering for {n.op}")
    if _stays_float(n, ctx):
        return "its input is fp32 from the fallback, and a cheap op stays in fp32"
    check = CHECKS.get(n.op)
    return None if check is None else check(n, ctx)
