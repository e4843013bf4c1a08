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
import torch
import torch.nn as nn

from .ir import Node


def _triple(v) -> List[int]:
    return [int(v)] * 3 if isinstance(v, int) else [int(x) for x in v]


def conv3d_nodes(name: str, what: str, m: nn.Conv3d, ins: List[str], in_shape, error) -> List[Node]:
    """The nodes standing for `m` applied to `ins[0]` of shape in_shape
    [N, C, D, H, W]; the last node carries `name`. `error` is the exception
    class a model ptec cannot take this way raises, in one line naming the
    layer as `what` does."""
    if m.padding_mode != "zeros":
        raise error(f"{what}: padding_mode {m.padding_mode} is not supported")
    return conv3d_planes(what, name, ins[0], m.weight, m.bias, m.stride, m.padding,
                         m.dilation, m.groups, in_shape, error)


def conv3d_planes(what: str, name: str, x: str, weight, bias, stride, padding, dilation, groups,
                  in_shape, error) -> List[Node]:
    """conv3d of node x (shape in_shape) by the constant weight (and bias):
    the nodes, the last one named `name`; `what` names the layer in errors."""
    if isinstance(padding, str):
        raise error(f"{what}: string padding {padding!r} is not supported")
    if int(groups) != 1:
        raise error(f"{what}: groups={groups} is not supported (groups=1 only)")
    if in_shape is None or len(in_shape) != 5:
        raise error(f"{what}: needs a traced 5-D input")
    w3 = torch.as_tensor(weight).detach().cpu().numpy().astype(np.float32)
    bias = None if bias is None else torch.as_tensor(bias).detach().cpu().numpy().astype(np.float32)
    o, c, kd = int(w3.shape[0]), int(w3.shape[1]), int(w3.shape[2])
    stride, padding, dilation = _triple(stride), _triple(padding), _triple(dilation)
    depth = int(in_shape[2])
    out_depth = (depth + 2 * padding[0] - dilation[0] * (kd - 1) - 1) // stride[0] + 1
    if out_depth < 1:
        raise error(f"{what}: the input depth {depth} is smaller than the kernel's")
    nodes: List[Node] = []
    sliced = {}

    def depth_slice(i: int) -> str:
        if i not in sliced:
            cut, flat = f"{name}_d{i}_slice", f"{name}_d{i}"
            nodes.append(Node(cut, "slice", [x], dict(dim=2, start=i, end=i + 1)))
            nodes.append(Node(flat, "reshape", [cut], dict(squeeze=2)))
            sliced[i] = flat
        return sliced[i]

    planes = []
    for d in range(out_depth):
        taps = [t for t in range(kd) if 0 <= d * stride[0] - padding[0] + t * dilation[0] < depth]
        if not taps:
            raise error(f"{what}: output depth {d} reads only padding "
                        f"(padding {padding[0]} is not supported with this kernel)")
        slices = [depth_slice(d * stride[0] - padding[0] + t * dilation[0]) for t in taps]
        if len(slices) == 1:
            joined = slices[0]
        else:
            joined = f"{name}_o{d}_in"
            nodes.append(Node(joined, "cat", slices, dict(dim=1)))
        w2 = np.ascontiguousarray(
            w3[:, :, taps].transpose(0, 2, 1, 3, 4).reshape(o, len(taps) * c, w3.shape[3], w3.shape[4]))
        conv = f"{name}_o{d}"
        nodes.append(Node(conv, "conv2d", [joined], dict(
            weight=w2, bias=None if bias is None else bias.copy(),
            stride=stride[1:], padding=padding[1:], dilation=dilation[1:], groups=1)))
        plane = f"{name}_o{d}_5d" if out_depth > 1 else name
        nodes.append(Node(plane, "reshape", [conv], dict(unsqueeze=2)))
        planes.append(plane)
    if out_depth > 1:
        nodes.append(Node(name, "cat", planes, dict(dim=2)))
    return nodes


def functional_conv3d_nodes(name: str, what: str, args, kwargs, ins: List[str], constants, in_shape,
                            error) -> Optional[List[Node]]:
    """F.conv3d(x, weight, bias, stride, padding, dilation, groups) whose
    weight (and bias) are constants: `constants` maps a node name to its
    value. None when the weight is not a constant (the call stays what it was)."""
    names = ["input", "weight", "bias", "stride", "padding", "dilation", "groups"]
    defaults = dict(bias=None, stride=1, padding=0, dilation=1, groups=1)
    bound = {**defaults, **dict(zip(names, args)), **kwargs}
    ref = [getattr(bound.get(k), "name", None) for k in ("input", "weight", "bias")]
    if ref[0] is None or ref[1] not in constants or (bound["bias"] is not None and ref[2] not in constants):
        return None
    return conv3d_planes(what, name, ref[0], constants[ref[1]],
                         None if bound["bias"] is None else constants[ref[2]], bound["stride"],
                         bound["padding"], bound["dilation"], bound["groups"], in_shape, error)
