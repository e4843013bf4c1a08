"""nn.Conv3d as 2-D convolutions ptec already lowers (capture's stand-in).

For output depth d the taps t of the kernel's depth read input depth
i = d * stride - padding + t * dilation. The taps that land inside the input
are cut out as [N, C, H, W] slices (one slice node and one squeeze per input
depth, shared by every output depth that reads it), joined along channels
into [N, k * C, H, W], and run through ONE conv2d whose weight has those
taps moved into its input channels: W3[o, c, t, h, w] -> W2[o, j * C + c, h, w]
for the j-th tap kept. The sum over the depth taps is so inside one
accumulator (no int8 add between taps); a tap in the zero padding is dropped
with its weight rows. Each output depth [N, O, H', W'] is unsqueezed at dim 2
and the depths are joined along dim 2 into [N, O, D', H', W'].
"""
from __future__ import annotations

from typing import List, Optional

import numpy as np
import torch.nn as nn

from .depth_planes import DepthPlanes, bind_constant_call, constant_weights, triple, zero_padding_only
from .ir import Node


def conv3d_nodes(name: str, what: str, m: nn.Conv3d, ins: List[str], in_shape, error) -> List[Node]:
    """The nodes standing for `m` applied to `ins[0]` of shape in_shape
    [N, C, D, H, W]; the last node carries `name`. `error` is the exception
    class a model ptec cannot take this way raises, in one line naming the
    layer as `what` does."""
    zero_padding_only(what, m, error)
    return conv3d_planes(what, name, ins[0], m.weight, m.bias, m.stride, m.padding,
                         m.dilation, m.groups, in_shape, error)


def conv3d_planes(what: str, name: str, x: str, weight, bias, stride, padding, dilation, groups,
                  in_shape, error) -> List[Node]:
    """conv3d of node x (shape in_shape) by the constant weight (and bias):
    the nodes, the last one named `name`; `what` names the layer in errors."""
    if isinstance(padding, str):
        raise error(f"{what}: string padding {padding!r} is not supported")
    w3, bias = constant_weights(what, weight, bias, groups, in_shape, error)
    o, c, kd = int(w3.shape[0]), int(w3.shape[1]), int(w3.shape[2])
    stride, padding, dilation = triple(stride), triple(padding), triple(dilation)
    depth = int(in_shape[2])
    out_depth = (depth + 2 * padding[0] - dilation[0] * (kd - 1) - 1) // stride[0] + 1
    if out_depth < 1:
        raise error(f"{what}: the input depth {depth} is smaller than the kernel's")
    planes = DepthPlanes(name, x, out_depth)
    for d in range(out_depth):
        taps = [t for t in range(kd) if 0 <= d * stride[0] - padding[0] + t * dilation[0] < depth]
        if not taps:
            raise error(f"{what}: output depth {d} reads only padding "
                        f"(padding {padding[0]} is not supported with this kernel)")
        w2 = np.ascontiguousarray(
            w3[:, :, taps].transpose(0, 2, 1, 3, 4).reshape(o, len(taps) * c, w3.shape[3], w3.shape[4]))
        planes.plane(d, [d * stride[0] - padding[0] + t * dilation[0] for t in taps], "conv2d", dict(
            weight=w2, bias=None if bias is None else bias.copy(),
            stride=stride[1:], padding=padding[1:], dilation=dilation[1:], groups=1))
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
