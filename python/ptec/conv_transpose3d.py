"""nn.ConvTranspose3d as 2-D transposed convolutions ptec already lowers
(capture's stand-in, the transposed twin of python/ptec/conv3d.py).

Input depth i with depth tap t lands on output depth
o = i * stride - padding + t * dilation. For each output depth the (i, t)
pairs that land on it are found, the input depth slices [N, C, H, W] joined
along channels into [N, k * C, H, W], and run through ONE conv_transpose2d
whose weight rows are the matching taps: W3[c, o, t, h, w] ->
W2[j * C + c, o, h, w] for the j-th pair. A transposed convolution sums
over its input channels, so the sum over the pairs stays in one
accumulator. An output depth no pair reaches (stride or dilation gaps,
output_padding at the end) is the bias alone: a conv_transpose2d of
input depth 0 by zero weights, so every plane is the same kind of node.

groups G (any transposed convolution): the weight becomes the groups-1
one, zero between groups (dense_transposed_weight), as the int8 kernel
takes groups 1 only.

ptec's int8 transposed convolution takes output_padding 0 and dilation 1
in H and W (the partitioner's limits), so those are rewritten into the
weight: a dilation d spreads the taps d apart with zeros between (the
same sums), and output_padding e appends e zero taps at the kernel's end,
which lengthens the uncropped output by e rows that only the bias reaches
beyond the real taps; cropping `padding` from each side then leaves
torch's output exactly (torch crops padding in front and padding - e
behind).
"""
from __future__ import annotations

from typing import List, Optional

import numpy as np
import torch.nn as nn

from .depth_planes import DepthPlanes, bind_constant_call, constant_weights, triple, zero_padding_only
from .ir import Node


def _spread(w: np.ndarray, dilation, output_padding) -> np.ndarray:
    """A [Cin, Cout, KH, KW] transposed-convolution weight with the given
    dilation and output_padding folded in (see the module docstring)."""
    cin, cout, kh, kw = w.shape
    dh, dw = int(dilation[0]), int(dilation[1])
    eh, ew = int(output_padding[0]), int(output_padding[1])
    out = np.zeros((cin, cout, dh * (kh - 1) + 1 + eh, dw * (kw - 1) + 1 + ew), np.float32)
    out[:, :, :dh * (kh - 1) + 1:dh, :dw * (kw - 1) + 1:dw] = w
    return out


def dense_transposed_weight(w: np.ndarray, groups: int) -> np.ndarray:
    """A grouped transposed-convolution weight [Cin, Cout / G, ...] as the
    groups-1 weight [Cin, Cout, ...] that equals it: input channel c of
    group g = c // (Cin / G) feeds only output channels g * Cout / G ...
    (g + 1) * Cout / G, so the weight is block-diagonal with zeros between
    groups. The zeros add exact zeros to each sum (in int8 too: a zero
    weight is code 0 on any scale), at G times the multiplies of the grouped
    form; ptec's int8 transposed convolution takes groups 1 only."""
    groups = int(groups)
    if groups == 1:
        return w
    cin, cout_g = int(w.shape[0]), int(w.shape[1])
    per = cin // groups
    dense = np.zeros((cin, cout_g * groups) + tuple(w.shape[2:]), np.float32)
    for g in range(groups):
        dense[g * per:(g + 1) * per, g * cout_g:(g + 1) * cout_g] = w[g * per:(g + 1) * per]
    return dense


def dense_groups(n: Node) -> None:
    """A captured conv_transpose2d node (nn.ConvTranspose2d / 1d) with
    groups > 1 rewritten to groups 1 by dense_transposed_weight."""
    a = n.attrs
    if int(a["groups"]) != 1:
        a["weight"] = dense_transposed_weight(np.asarray(a["weight"], np.float32), int(a["groups"]))
        a["groups"] = 1


def fold_dilation_and_output_padding(n: Node) -> None:
    """A captured conv_transpose2d node (nn.ConvTranspose2d / 1d, nn.Fold)
    with groups 1 (dense_groups made it so): its dilation and output_padding
    moved into the weight as above, so the int8 transposed convolution
    takes it."""
    a = n.attrs
    if int(a["groups"]) != 1 or (not any(a["output_padding"]) and list(a["dilation"]) == [1, 1]):
        return
    a["weight"] = _spread(np.asarray(a["weight"], np.float32), a["dilation"], a["output_padding"])
    a["output_padding"], a["dilation"] = [0, 0], [1, 1]


def conv_transpose3d_nodes(name: str, what: str, m: nn.ConvTranspose3d, ins: List[str], in_shape,
                           error) -> List[Node]:
    """The nodes standing for `m` applied to `ins[0]` of shape in_shape
    [N, C, D, H, W]; the last node carries `name`. `error` is the exception
    class a layer ptec cannot take this way raises, in one line naming it
    as `what` does."""
    zero_padding_only(what, m, error)
    return conv_transpose3d_planes(what, name, ins[0], m.weight, m.bias, m.stride, m.padding,
                                   m.output_padding, m.dilation, m.groups, in_shape, error)


def conv_transpose3d_planes(what: str, name: str, x: str, weight, bias, stride, padding, output_padding,
                            dilation, groups, in_shape, error) -> List[Node]:
    """conv_transpose3d of node x (shape in_shape) by the constant weight
    (and bias): the nodes, the last one named `name`."""
    w3, bias = constant_weights(what, weight, bias, in_shape, error)
    w3 = dense_transposed_weight(w3, groups)
    kd = int(w3.shape[2])
    stride, padding = triple(stride), triple(padding)
    output_padding, dilation = triple(output_padding), triple(dilation)
    depth = int(in_shape[2])
    out_depth = (depth - 1) * stride[0] - 2 * padding[0] + dilation[0] * (kd - 1) + output_padding[0] + 1
    if out_depth < 1:
        raise error(f"{what}: the padding leaves no output depth")
    planes = DepthPlanes(name, x, out_depth)
    for d in range(out_depth):
        pairs = [(i, t) for i in range(depth) for t in range(kd)
                 if i * stride[0] - padding[0] + t * dilation[0] == d]
        if pairs:
            depths = [i for i, _ in pairs]
            w2 = np.concatenate([w3[:, :, t] for _, t in pairs], axis=0)
        else:           # the bias alone: no input depth reaches this one
            depths = [0]
            w2 = np.zeros_like(w3[:, :, 0])
        planes.plane(d, depths, "conv_transpose2d", dict(
            weight=_spread(np.ascontiguousarray(w2), dilation[1:], output_padding[1:]),
            bias=None if bias is None else bias.copy(), stride=stride[1:], padding=padding[1:],
            output_padding=[0, 0], dilation=[1, 1], groups=1))
    return planes.nodes()


def functional_conv_transpose3d_nodes(name: str, what: str, args, kwargs, ins: List[str], constants, in_shape,
                                      error) -> Optional[List[Node]]:
    """F.conv_transpose3d(x, weight, bias, stride, padding, output_padding,
    groups, dilation) whose weight (and bias) are constants: `constants`
    maps a node name to its value. None when the weight is not a constant."""
    call = bind_constant_call(["input", "weight", "bias", "stride", "padding", "output_padding", "groups",
                               "dilation"], dict(bias=None, stride=1, padding=0, output_padding=0, groups=1,
                                                 dilation=1), args, kwargs, constants)
    if call is None:
        return None
    x, weight, bias, bound = call
    return conv_transpose3d_planes(what, name, x, weight, bias, bound["stride"], bound["padding"],
                                   bound["output_padding"], bound["dilation"], bound["groups"], in_shape, error)
