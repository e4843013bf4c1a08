"""3-D pools and pads as 2-D nodes ptec already lowers (capture's stand-ins).

A 5-D tensor [N, C, D, H, W] is, byte for byte, the 4-D tensors
[N, C*D, H, W] (every depth plane its own channel) and [N, C, D, H*W]
(a plane flattened into a row). A pool or pad over H and W is the 2-D op
on the first view; one over the depth is the 2-D op with a unit width on
the second. Both views are reshapes; in int8 a reshape is a byte copy
(at most a layout change), so only the 2-D ops themselves round.

Max pools: max_pool2d over H, W, then max_pool2d of kernel (kd, 1) over
the depth; exact on the int8 grid (a max only picks a byte). A dilated
depth window is not a 2-D pool ptec lowers: each output depth is then the
elementwise maximum of the input depth slices its window reads (a slice
in the padding holds -inf: it is left out); the maxima and their join keep
the input's grid (quantize). Dilation over H, W is the 2-D pool's, which
ptec runs in fp32 as for nn.MaxPool2d. Adaptive pools: adaptive_pool3d_nodes.

Average pools: torch divides a window's sum by the product of its counts
per dim (each clipped to the padded input, and to the input itself when
count_include_pad is False). When every window over H, W holds kh * kw
counted values (no ceil_mode window past the padding; the padding counted,
or none), output depth o is one grouped conv2d over its window's input
depths as channels, with constant weights 1 / count: the sum in one
accumulator, one rounding, within 1/2 output step of the exact average of
the int8 input. divisor_override is such a conv with weights 1 / divisor,
after a zero pad (exact on every int8 grid) of the padding and of what
ceil_mode's last windows run past. A window that covers whole planes
(AdaptiveAvgPool3d(1)) is one avg_pool2d over [N, C, D, H*W], and a pool
that is the identity over H, W or over the depth the one 2-D average that
is left: one rounding each. Otherwise (counts varying over H, W) the 2-D
average over H, W, then the one over the depth, each with its own count
(the product is torch's): two roundings (avg_pool2d keeps its input's grid
and rounds to nearest), within 1 output step.

Pads: a constant pad is one 4-D pad of [N*C, D, H, W]; a reflect or
replicate pad the 2-D edge pad of H, W on [N, C*D, H, W], then of the
depth on [N, C, D, H'*W']. Byte copies, exact.

An unbatched [C, D, H, W] input is taken as N = 1.
"""
from __future__ import annotations

from typing import List, Optional, Sequence

import numpy as np
import torch.nn as nn

from .ir import Node

POOLS_3D = (nn.MaxPool3d, nn.AvgPool3d, nn.AdaptiveMaxPool3d, nn.AdaptiveAvgPool3d)
PADS_3D = (nn.ConstantPad3d, nn.ReflectionPad3d, nn.ReplicationPad3d)


def _triple(v) -> List[int]:
    return [int(v)] * 3 if isinstance(v, int) else [int(x) for x in v]


def pool_out_size(size: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    """torch's pooled length (pooling_output_shape): with ceil_mode a last
    window that would start in the right padding is dropped."""
    span = size + 2 * p - d * (k - 1) - 1
    out = (span + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


class _Builder:
    """Nodes named after the layer; the last one made takes the layer's name.
    `shape` is the current value's shape when a node made it known."""

    def __init__(self, name: str, x: str):
        self.name, self.cur, self.nodes, self.shape = name, x, [], None

    def add(self, tag: str, op: str, attrs, inputs: Optional[List[str]] = None, shape=None) -> str:
        node = Node(f"{self.name}_{tag}", op, inputs if inputs is not None else [self.cur], attrs)
        self.nodes.append(node)
        self.cur, self.shape = node.name, None if shape is None else [int(v) for v in shape]
        return node.name

    def reshape(self, tag: str, shape: Sequence[int]) -> str:
        return self.add(tag, "reshape", dict(target_shape=[int(s) for s in shape]), shape=shape)

    def finish(self, shape: Sequence[int]) -> List[Node]:
        """The layer's name goes to the last node when it already has the
        output's shape (so that a batch-norm or an activation after the
        layer sees the node that made it: quantize.prepare folds them into
        per-depth convs), else to a last reshape to that shape."""
        if self.shape != [int(v) for v in shape] or not self.nodes or self.nodes[-1].name != self.cur:
            self.reshape("out", shape)
        self.nodes[-1].name = self.name
        return self.nodes


def _batched(in_shape, what: str, error) -> List[int]:
    if in_shape is None or len(in_shape) not in (4, 5):
        raise error(f"{what}: needs a traced 4-D or 5-D input (got {list(in_shape or [])})")
    return [1] + list(in_shape) if len(in_shape) == 4 else list(in_shape)


def _unbatched(shape: List[int], in_shape) -> List[int]:
    return shape[1:] if len(in_shape) == 4 else shape


def pool3d_nodes(name: str, what: str, kind: str, x: str, in_shape, error, kernel, stride=None, padding=0,
                 dilation=1, ceil_mode=False, count_include_pad=True, divisor_override=None) -> List[Node]:
    """max (kind "max") or average ("avg") pool of node x over its last three
    dims, with torch's arguments; the last node is named `name`, `what`
    names the layer in errors (`error` is the exception class)."""
    n, c, d, h, w = _batched(in_shape, what, error)
    k = _triple(kernel)
    s = _triple(stride) if stride not in (None, [], ()) else list(k)
    p, dil = _triple(padding), _triple(dilation)
    if kind == "avg" and dil != [1, 1, 1]:
        raise error(f"{what}: an average pool has no dilation")
    if any(2 * p[i] > k[i] for i in range(3)):
        raise error(f"{what}: padding {p} must be at most half the kernel {k}")
    sizes = [d, h, w]
    out = [pool_out_size(sizes[i], k[i], s[i], p[i], dil[i], bool(ceil_mode)) for i in range(3)]
    if min(out) < 1:
        raise error(f"{what}: the input {list(in_shape)} is smaller than the window {k}")
    od, oh, ow = out
    b = _Builder(name, x)
    final = _unbatched([n, c, od, oh, ow], in_shape)
    if kind == "avg" and divisor_override:
        return _divided_sum_nodes(b, what, [n, c, d, h, w], k, s, p, out, float(divisor_override), final, error)

    def pool2d(tag: str, kk, ss, pp, dd):
        if kind == "max":
            return b.add(tag, "max_pool2d", dict(kernel=list(kk), stride=list(ss), padding=list(pp),
                                                 dilation=list(dd), ceil_mode=bool(ceil_mode)))
        return b.add(tag, "avg_pool2d", dict(kernel=list(kk), stride=list(ss), padding=list(pp),
                                             ceil_mode=bool(ceil_mode), count_include_pad=bool(count_include_pad),
                                             divisor_override=None))

    plane_is_identity = k[1:] == [1, 1] and s[1:] == [1, 1] and p[1:] == [0, 0]
    depth_is_identity = k[0] == 1 and s[0] == 1 and p[0] == 0
    whole_planes = kind == "avg" and k[1:] == [h, w] and p[1:] == [0, 0] and [oh, ow] == [1, 1]
    # every window over H, W holds kh * kw counted values: no ceil_mode window
    # past the padding, and the padding counted (or none)
    even_planes = all((out[i] - 1) * s[i] - p[i] + k[i] <= sizes[i] + p[i] for i in (1, 2)) and (
        count_include_pad or p[1:] == [0, 0])
    if whole_planes:
        # one average over [N, C, D, H*W]: the window is kd rows of whole planes
        b.reshape("rows", [n, c, d, h * w])
        pool2d("pool", [k[0], h * w], [s[0], h * w], [p[0], 0], [1, 1])
    elif kind == "avg" and not plane_is_identity and not depth_is_identity and even_planes:
        b.reshape("volume", [n, c, d, h, w])
        _mean_by_convs(b, [n, c, d, h, w], k, s, p, out, [
            _depth_count(o, d, k[0], s[0], p[0], count_include_pad) * k[1] * k[2] for o in range(od)])
    else:
        if not plane_is_identity:
            b.reshape("planes", [n, c * d, h, w])
            pool2d("plane_pool", k[1:], s[1:], p[1:], dil[1:])
        if not depth_is_identity and dil[0] == 1:
            b.reshape("rows", [n, c, d, oh * ow])
            pool2d("depth_pool", [k[0], 1], [s[0], 1], [p[0], 0], [1, 1])
        elif not depth_is_identity:
            _dilated_depth_max(b, [n, c, d, oh * ow], k[0], s[0], p[0], dil[0], od)
    return b.finish(final)


def _depth_count(o: int, depth: int, k: int, s: int, p: int, count_include_pad: bool) -> int:
    """torch's count along the depth for output depth o: the window clipped
    to the padded input, and to the input itself without count_include_pad."""
    start = o * s - p
    if count_include_pad:
        return min(start + k, depth + p) - start
    return min(start + k, depth) - max(start, 0)


def _mean_by_convs(b: _Builder, shape5, k, s, p, out, divisors) -> None:
    """Each output depth o: its window's input depths, a slice [N, C, kv, H, W]
    of the volume, are the channels of [N, C*kv, H, W] (channel c's kv depths
    side by side), and one grouped conv2d (groups C, zero padding in H, W)
    whose weights are all 1 / divisors[o] sums them: one accumulator, one
    rounding (1/2 output step). No weight rounding: each channel's one
    value is 127 steps of its own scale. Depths in the padding are zeros:
    left out. The planes joined along the depth."""
    n, c, depth, h, w = shape5
    vol = b.cur
    planes = []
    for o in range(out[0]):
        start = o * s[0] - p[0]
        i0, i1 = max(start, 0), min(start + k[0], depth)
        b.add(f"o{o}_window", "slice", dict(dim=2, start=i0, end=i1), inputs=[vol])
        b.reshape(f"o{o}_channels", [n, c * (i1 - i0), h, w])
        b.add(f"o{o}_mean", "conv2d", dict(
            weight=np.full((c, i1 - i0, k[1], k[2]), 1.0 / divisors[o], np.float32), bias=None,
            stride=list(s[1:]), padding=list(p[1:]), dilation=[1, 1], groups=c))
        planes.append(b.reshape(f"o{o}_plane", [n, c, 1, out[1], out[2]]))
    if len(planes) > 1:
        b.add("depths", "cat", dict(dim=2), inputs=planes, shape=[n, c, out[0], out[1], out[2]])


def _divided_sum_nodes(b: _Builder, what: str, shape5, k, s, p, out, divisor: float, final, error) -> List[Node]:
    """avg_pool3d with divisor_override: each window's sum over the zero
    padded input, divided by `divisor`. The input is zero padded by the
    padding and by what ceil_mode's last windows run past it (a constant
    pad: zero is exact on every int8 grid), so that every window holds
    kd * kh * kw values; then the grouped convolutions above with weights
    1 / divisor: one rounding."""
    sizes = shape5[2:]
    extra = [max(0, (out[i] - 1) * s[i] - p[i] + k[i] - (sizes[i] + p[i])) for i in range(3)]
    padded = list(shape5)
    if any(p) or any(extra):
        pads = []
        for i in reversed(range(3)):                    # F.pad's order: the last dim first
            pads += [p[i], p[i] + extra[i]]
        b.nodes += pad3d_nodes(f"{b.name}_zero_padded", what, b.cur, shape5, pads, "constant", 0.0, error)
        b.cur = f"{b.name}_zero_padded"
        padded = shape5[:2] + [sizes[i] + 2 * p[i] + extra[i] for i in range(3)]
    else:
        b.reshape("volume", shape5)
    _mean_by_convs(b, padded, k, s, [0, 0, 0], out, [divisor] * out[0])
    return b.finish(final)


def _dilated_depth_max(b: _Builder, rows, k: int, s: int, p: int, dil: int, out_depth: int) -> None:
    """Each output depth the elementwise maximum of the input depth slices
    its dilated window reads (padding slices, -inf, left out), on the 4-D
    view `rows` [N, C, D, H*W] (cortex_m::maximum takes rank <= 4); the
    maxima joined along the depth."""
    x = b.reshape("rows", rows)
    depth = rows[2]
    sliced = {}
    planes = []
    for o in range(out_depth):
        taps = [o * s - p + t * dil for t in range(k) if 0 <= o * s - p + t * dil < depth]
        for i in taps:
            if i not in sliced:
                sliced[i] = b.add(f"d{i}", "slice", dict(dim=2, start=i, end=i + 1), inputs=[x])
        cur = sliced[taps[0]]
        for j, i in enumerate(taps[1:]):
            cur = b.add(f"o{o}_max{j}", "maximum", {}, inputs=[cur, sliced[i]])
        planes.append(cur)
    if len(planes) > 1:
        b.add("depths", "cat", dict(dim=2), inputs=planes)
    else:
        b.cur = planes[0]


def adaptive_pool3d_nodes(name: str, what: str, kind: str, x: str, in_shape, output_size, error) -> List[Node]:
    """An adaptive 3-D pool. When its output divides the input in every dim:
    the pool of kernel = stride = input / output. Otherwise torch's windows
    are still boxes (output i of a dim of length L reads
    [floor(i L / o), ceil((i + 1) L / o)) along it), so the pool is one
    1-D pool per dim (W, then H on [N, C*D, H, W], then the depth on
    [N, C, D, H'*W']): a dim the output divides is one pool, any other one
    window each (a slice and a pool of the slice's length), joined by a cat.
    A max stays exact; an average rounds once per pooled dim (at most
    3 / 2 output steps from the exact average of the int8 input)."""
    n, c, d, h, w = _batched(in_shape, what, error)
    out = list(output_size) if isinstance(output_size, (tuple, list)) else [output_size] * 3
    out = [[d, h, w][i] if out[i] is None else int(out[i]) for i in range(3)]
    if min(out) < 1:
        raise error(f"{what}: output size {out} must be positive")
    if all([d, h, w][i] % o == 0 for i, o in enumerate(out)):
        k = [[d, h, w][i] // out[i] for i in range(3)]
        return pool3d_nodes(name, what, kind, x, in_shape, error, k, k)
    b = _Builder(name, x)
    od, oh, ow = out
    if [h, w] != [oh, ow]:
        b.reshape("planes", [n, c * d, h, w])
        if h % oh == 0 and w % ow == 0:         # one 2-D pool (one rounding) for both
            _adaptive_dim(b, kind, "hw", (2, 3), (h, w), (oh, ow))
        else:
            _adaptive_dim(b, kind, "w", 3, w, ow)
            _adaptive_dim(b, kind, "h", 2, h, oh)
    if d != od:
        b.reshape("rows", [n, c, d, oh * ow])
        _adaptive_dim(b, kind, "d", 2, d, od)
    return b.finish(_unbatched([n, c] + out, in_shape))


def _adaptive_dim(b: _Builder, kind: str, tag: str, dim, size, out) -> None:
    """The adaptive pool of dim 2 or 3 of the current 4-D value from `size`
    to `out` (nothing when equal), or of both (dim (2, 3)) when the output
    divides each."""
    dims, sizes, outs = (list(dim), list(size), list(out)) if isinstance(dim, tuple) else ([dim], [size], [out])
    if sizes == outs:
        return

    def pool(t: str, lengths, src: str, stride=None) -> str:
        k, st = [1, 1], [1, 1]
        for i, dd in enumerate(dims):
            k[dd - 2] = lengths[i]
            st[dd - 2] = lengths[i] if stride is None else stride
        if kind == "max":
            return b.add(t, "max_pool2d", dict(kernel=k, stride=st, padding=[0, 0], dilation=[1, 1],
                                               ceil_mode=False), inputs=[src])
        return b.add(t, "avg_pool2d", dict(kernel=k, stride=st, padding=[0, 0], ceil_mode=False,
                                           count_include_pad=True, divisor_override=None), inputs=[src])
    if all(sz % o == 0 for sz, o in zip(sizes, outs)):
        pool(f"{tag}_pool", [sz // o for sz, o in zip(sizes, outs)], b.cur)
        return
    src, pieces = b.cur, []
    size, out = sizes[0], outs[0]
    for i in range(out):
        start, end = (i * size) // out, -(-((i + 1) * size) // out)
        cut = b.add(f"{tag}{i}", "slice", dict(dim=dims[0], start=start, end=end), inputs=[src])
        pieces.append(pool(f"{tag}{i}_pool", [end - start], cut, stride=1))
    b.add(f"{tag}_pooled", "cat", dict(dim=dims[0]), inputs=pieces)


def module_pool3d_nodes(name: str, what: str, m: nn.Module, ins: List[str], in_shape, error) -> List[Node]:
    """nn.MaxPool3d, nn.AvgPool3d, nn.AdaptiveMaxPool3d, nn.AdaptiveAvgPool3d."""
    if getattr(m, "return_indices", False):
        raise error(f"{what}: return_indices is not supported")
    if isinstance(m, nn.MaxPool3d):
        return pool3d_nodes(name, what, "max", ins[0], in_shape, error, m.kernel_size, m.stride, m.padding,
                            m.dilation, m.ceil_mode)
    if isinstance(m, nn.AvgPool3d):
        return pool3d_nodes(name, what, "avg", ins[0], in_shape, error, m.kernel_size, m.stride, m.padding,
                            1, m.ceil_mode, m.count_include_pad, m.divisor_override)
    kind = "max" if isinstance(m, nn.AdaptiveMaxPool3d) else "avg"
    return adaptive_pool3d_nodes(name, what, kind, ins[0], in_shape, m.output_size, error)


def functional_pool3d_module(target, arg) -> Optional[nn.Module]:
    """The module a functional 3-D pool call stands for; `arg(i, key,
    default)` reads the call's i-th positional or keyword argument. None
    for any other function."""
    import torch.nn.functional as F
    if target is F.max_pool3d:
        return nn.MaxPool3d(arg(1, "kernel_size", None), arg(2, "stride", None), arg(3, "padding", 0),
                            arg(4, "dilation", 1), arg(6, "return_indices", False), arg(5, "ceil_mode", False))
    if target is F.avg_pool3d:
        return nn.AvgPool3d(arg(1, "kernel_size", None), arg(2, "stride", None), arg(3, "padding", 0),
                            arg(4, "ceil_mode", False), arg(5, "count_include_pad", True),
                            arg(6, "divisor_override", None))
    if target is F.adaptive_avg_pool3d:
        return nn.AdaptiveAvgPool3d(arg(1, "output_size", None))
    if target is F.adaptive_max_pool3d:
        return nn.AdaptiveMaxPool3d(arg(1, "output_size", None), arg(2, "return_indices", False))
    return None


def pad3d_nodes(name: str, what: str, x: str, in_shape, pads, mode: str, value: float, error) -> Optional[List[Node]]:
    """A pad of the last three dims (or fewer) of a 5-D input (F.pad's
    order: the last dim's pair first), or a reflect / replicate pad of all
    three of an unbatched [C, D, H, W] one; None when it is not one ptec
    takes this way (pads of N or C, cropping, circular; a constant pad of a
    4-D input is a plain pad already), which stays a plain pad (and is
    refused as such)."""
    pads = [int(v) for v in pads]
    rank = len(in_shape or [])
    if (rank not in (4, 5) or len(pads) % 2 or len(pads) > 6 or min(pads, default=0) < 0
            or mode not in ("constant", "reflect", "replicate")
            or (rank == 4 and (mode == "constant" or len(pads) != 6))):
        return None
    pads = pads + [0] * (6 - len(pads))
    n, c, d, h, w = _batched(in_shape, what, error)
    wl, wr, hl, hr, dl, dr = pads
    out = _unbatched([n, c, d + dl + dr, h + hl + hr, w + wl + wr], in_shape)
    if mode == "reflect" and any(p >= size for p, size in zip(pads, [w, w, h, h, d, d])):
        raise error(f"{what}: reflect padding {pads} must be smaller than the padded dims")
    b = _Builder(name, x)
    if mode == "constant":
        b.reshape("volumes", [n * c, d, h, w])
        b.add("pad", "pad", dict(pad=pads, mode="constant", value=float(value)))
        return b.finish(out)
    if any(pads[:4]):
        b.reshape("planes", [n, c * d, h, w])
        b.add("plane_pad", "pad", dict(pad=pads[:4], mode=mode, value=0.0))
    if dl or dr:
        b.reshape("rows", [n, c, d, (h + hl + hr) * (w + wl + wr)])
        b.add("depth_pad", "pad", dict(pad=[0, 0, dl, dr], mode=mode, value=0.0))
    return b.finish(out)


def module_pad3d_nodes(name: str, what: str, m: nn.Module, ins: List[str], in_shape, error) -> Optional[List[Node]]:
    """nn.ConstantPad3d (and ZeroPad3d), nn.ReflectionPad3d, nn.ReplicationPad3d (pad3d_nodes)."""
    mode = ("reflect" if isinstance(m, nn.ReflectionPad3d) else
            "replicate" if isinstance(m, nn.ReplicationPad3d) else "constant")
    return pad3d_nodes(name, what, ins[0], in_shape, m.padding, mode, float(getattr(m, "value", 0.0)), error)
