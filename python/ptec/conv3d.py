"""nn.Conv3d as 2-D convolutions ptec already lowers (capture's stand-in).

For output depth d the taps t of the kernel's depth read the padded input
at v = d * stride - pad_front + t * dilation. With zero padding a tap at a v
outside the input reads zeros and is dropped with its weight rows; with
padding_mode reflect, replicate or circular it reads the input depth that
mode copies to v (torch pads with F.pad, then convolves unpadded), and taps
that read the same input depth have their weights summed (one input, the
same sum). The input depths read are cut out as [N, C, H, W] slices (one
slice node and one squeeze per input depth, shared by every output depth
that reads it), joined along channels into [N, k * C, H, W], and run
through ONE conv2d whose weight has those taps moved into its input
channels: W3[o, c, t, h, w] -> W2[o, j * C + c, h, w] for the j-th depth
read. The sum over the depth taps is so inside one accumulator (no int8 add
between taps). An output depth whose taps all fall in zero padding is the
bias alone: a conv2d of input depth 0 by zero weights, so every plane is the
same kind of node. Each output depth [N, O, H', W'] is unsqueezed at dim 2
and the depths are joined along dim 2 into [N, O, D', H', W'].

groups G: the weight is [O, C / G, ...] and the conv2d is grouped, its
input joined group-major (python/ptec/depth_planes.py), so W2's formula is
the same. padding "same" / "valid" are the pads torch computes (more at the
end for an odd "same" total); in H and W the conv2d pads zeros itself when
both ends match, else each depth slice is padded first.
"""
from __future__ import annotations

from typing import Dict, List, Optional

import numpy as np
import torch.nn as nn

from .depth_planes import DepthPlanes, bind_constant_call, constant_weights, triple
from .ir import Node


def conv3d_nodes(name: str, what: str, m: nn.Conv3d, ins: List[str], in_shape, error) -> List[Node]:
    """The nodes standing for `m` applied to `ins[0]` of shape in_shape
    [N, C, D, H, W]; the last node carries `name`. `error` is the exception
    class a model ptec cannot take this way raises, in one line naming the
    layer as `what` does."""
    return conv3d_planes(what, name, ins[0], m.weight, m.bias, m.stride, m.padding,
                         m.dilation, m.groups, in_shape, error, m.padding_mode)


def _pads(padding, kernel, dilation):
    """(front, back) pads per dim of a padding given as numbers or as
    torch's "same" / "valid"."""
    if isinstance(padding, str):
        total = [0] * 3 if padding == "valid" else [dilation[i] * (kernel[i] - 1) for i in range(3)]
        return [t // 2 for t in total], [t - t // 2 for t in total]
    p = triple(padding)
    return p, p


def _source_depth(v: int, depth: int, mode: str) -> Optional[int]:
    """The input depth padding_mode `mode` puts at padded position v (None:
    a zero)."""
    if 0 <= v < depth:
        return v
    if mode == "zeros":
        return None
    if mode == "replicate":
        return min(max(v, 0), depth - 1)
    if mode == "circular":
        return v % depth
    return -v if v < 0 else 2 * (depth - 1) - v          # reflect (torch: pad < depth)


def conv3d_planes(what: str, name: str, x: str, weight, bias, stride, padding, dilation, groups,
                  in_shape, error, padding_mode: str = "zeros") -> List[Node]:
    """conv3d of node x (shape in_shape) by the constant weight (and bias):
    the nodes, the last one named `name`; `what` names the layer in errors."""
    if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
        raise error(f"{what}: padding_mode {padding_mode} is not supported")
    w3, bias = constant_weights(what, weight, bias, in_shape, error)
    groups = int(groups)
    o, cg, kd, kh, kw = (int(s) for s in w3.shape)
    stride, dilation = triple(stride), triple(dilation)
    lo, hi = _pads(padding, [kd, kh, kw], dilation)
    depth = int(in_shape[2])
    out_depth = (depth + lo[0] + hi[0] - dilation[0] * (kd - 1) - 1) // stride[0] + 1
    if out_depth < 1:
        raise error(f"{what}: the input depth {depth} is smaller than the kernel's")
    own = padding_mode == "zeros" and lo[1:] == hi[1:]        # the conv2d pads H and W itself
    hw_pad = None if own or not any(lo[1:] + hi[1:]) else dict(
        pad=[lo[2], hi[2], lo[1], hi[1]], mode="constant" if padding_mode == "zeros" else padding_mode,
        value=0.0)
    planes = DepthPlanes(name, x, out_depth, hw_pad, [int(s) for s in in_shape[:2]] + [int(s) for s in in_shape[3:]],
                         what, error)
    for d in range(out_depth):
        reads: Dict[int, np.ndarray] = {}            # input depth -> its summed tap weights, in tap order
        for t in range(kd):
            i = _source_depth(d * stride[0] - lo[0] + t * dilation[0], depth, padding_mode)
            if i is not None:
                reads[i] = reads[i] + w3[:, :, t] if i in reads else w3[:, :, t].copy()
        if not reads:           # only zero padding: the bias alone
            reads = {0: np.zeros_like(w3[:, :, 0])}
        depths = list(reads)
        w2 = np.ascontiguousarray(np.stack([reads[i] for i in depths], axis=1).reshape(
            o, len(depths) * cg, kh, kw))
        planes.plane(d, depths, "conv2d", dict(
            weight=w2, bias=None if bias is None else bias.copy(),
            stride=stride[1:], padding=lo[1:] if own else [0, 0], dilation=dilation[1:], groups=groups),
            groups, cg)
    return planes.nodes()


def functional_conv3d_nodes(name: str, what: str, args, kwargs, ins: List[str], constants, in_shape,
                            error) -> Optional[List[Node]]:
    """F.conv3d(x, weight, bias, stride, padding, dilation, groups) whose
    weight (and bias) are constants: `constants` maps a node name to its
    value. None when the weight is not a constant (the call stays what it was)."""
    call = bind_constant_call(["input", "weight", "bias", "stride", "padding", "dilation", "groups"],
                              dict(bias=None, stride=1, padding=0, dilation=1, groups=1), args, kwargs, constants)
    if call is None:
        return None
    x, weight, bias, bound = call
    return conv3d_planes(what, name, x, weight, bias, bound["stride"], bound["padding"], bound["dilation"],
                         bound["groups"], in_shape, error)
