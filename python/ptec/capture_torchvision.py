"""torchvision.ops.roi_align / RoIAlign, ps_roi_align, roi_pool / RoIPool,
ps_roi_pool, deform_conv2d / DeformConv2d and torch.istft written in the fx
graph as calls ptec runs, before the graph is read (issue 15). Boxes: a [K, 5]
tensor, or a list of one [K, 4] tensor per image (_boxes_arg).
torchvision's ops are traced as one call each (fx autowrap, also when
spelled `torchvision.ops.roi_align(...)`); the forms no rewrite covers
are then refused in one line naming them (REFUSED says why). nms and
batched_nms: capture_nms's doc (ptec::nms.out, any number of boxes;
batched_nms past 1,000 boxes on ptec::batched_nms.out).

roi_align and ps_roi_align, any sampling_ratio (the adaptive
ceil(size / output) grid, a count that depends on the box values,
included): one roi_align_kernel call in the fx graph, captured as one
fp32 `roi_align` node on ptec::roi_align.out (src/kernels/portable/op_roi_align.c:
torchvision 0.14's CPU arithmetic in its order, bit-equal to it; a
single image's [K, 4] boxes as they are, per-image lists joined into
[K, 5] rows first). It replaced a composition of grid_sample,
masks and avg_pool2d (within 2e-6 of torchvision, 19% of elements off by an
ulp or more). ps_roi_align: _ps_roi_align's doc; roi_pool: _RoiPool's;
deform_conv2d: _DeformConv's; istft: _istft's; MultiScaleRoIAlign:
multiscale_forward's (a module traced as these ops).
"""
from __future__ import annotations

from typing import Callable, List, Optional

import numbers
import operator
import sys

import torch
import torch.fx
import torch.nn.functional as F

from .fp32_ancestry import mark_fp32_ancestry
from .ir import UnsupportedOperator

# traced as one call each (fx autowrap), also when a model calls them as `torchvision.ops.roi_align`;
# the ones not rewritten then are one call refused by name (not torch.fx failing inside torchvision's checks)
LEAVES = ("roi_align", "roi_pool", "ps_roi_align", "ps_roi_pool", "deform_conv2d", "nms", "batched_nms")


def _tv_ops():
    """torchvision.ops when the model's code has imported torchvision (ptec
    itself never imports it: no cost or dependency for other models)."""
    if "torchvision" not in sys.modules:
        return None
    try:
        import torchvision.ops
        return torchvision.ops
    except Exception:       # noqa: BLE001 - a broken torchvision: no call of it to meet
        return None


def _tv_fn(name: str):
    ops = _tv_ops()
    return getattr(ops, name, None) if ops is not None else None


def torchvision_leaves():
    """(functions fx should keep as one call, modules to look them up in)."""
    ops = _tv_ops()
    if ops is None:
        return (), []
    # spelled torchvision.ops.boxes.nms too (the module that defines nms and batched_nms)
    boxes = [ops.boxes] if hasattr(ops, "boxes") else []
    return tuple(getattr(ops, n) for n in LEAVES if hasattr(ops, n)), [ops] + boxes

ROI_POOL_FP32 = "roi_pool's (ps_roi_pool's) windows (masks over the map) and their maxima (means), computed in fp32"
MAX_POOL_MASK = 1 << 22
ROI_POOL_LARGE = ("torchvision.ops.roi_pool is not supported on this map: ptec computes it as the max over "
                  "the whole map "
                  "masked per bin, {count} values (at most 4194304); pool a smaller map or fewer boxes")
def _shape(v) -> Optional[List[int]]:
    meta = v.meta.get("tensor_meta") if isinstance(v, torch.fx.Node) else None
    return [int(s) for s in meta.shape] if meta is not None and hasattr(meta, "shape") else None


def _pair(v):
    if isinstance(v, int) and not isinstance(v, bool):
        return v, v
    if isinstance(v, (list, tuple)) and len(v) == 2 and all(isinstance(i, int) for i in v):
        return int(v[0]), int(v[1])
    return None


STEEP = 2.0 ** 40


def _boxes_arg(gm, fn, boxes, n: int, why: str):
    """(boxes node, listed) for a [K, 5] tensor or a list of one [K, 4]
    tensor (listed: its batch index is 0); a list of N [K_i, 4] tensors
    (one per image) joined as torchvision does, cat([i column, b_i], 1)
    then cat over i, in fp32 nodes before fn; None for anything else."""
    if not isinstance(boxes, (list, tuple)):
        bs = _shape(boxes)
        return (boxes, False) if isinstance(boxes, torch.fx.Node) and bs is not None and len(bs) == 2 \
            and bs[1] == 5 else None
    shapes = [_shape(b) for b in boxes]
    if not boxes or any(not isinstance(b, torch.fx.Node) or sh is None or len(sh) != 2 or sh[1] != 4
                        for b, sh in zip(boxes, shapes)):
        return None
    if len(boxes) == 1 and n == 1:
        return boxes[0], True
    if len(boxes) != n:
        return None
    g, parts = gm.graph, []
    with g.inserting_before(fn):
        for i, (b, sh) in enumerate(zip(boxes, shapes)):
            attr = f"_ptec_{fn.name}_index{i}"
            gm.register_buffer(attr, torch.full((sh[0], 1), float(i)))
            parts.append(g.call_function(torch.cat, ([g.get_attr(attr), b], 1)))
        rois = g.call_function(torch.cat, (parts, 0))
    for node in parts + [rois]:
        node.meta["ptec_fp32"] = why
    rois.meta["tensor_meta"] = _Meta([sum(sh[0] for sh in shapes), 5])
    return rois, False


class _Meta:
    """The shape a made node will have (shape propagation runs after the pass)."""

    def __init__(self, shape):
        self.shape, self.dtype = torch.Size(shape), torch.float32


ROI_KERNEL = "roi_align / ps_roi_align on ptec::roi_align.out, in fp32 (torchvision's CPU arithmetic)"


def roi_align_kernel(x, rois, spatial_scale: float, pooled_height: int, pooled_width: int, sampling_ratio: int,
                     aligned: bool, position_sensitive: bool):
    """The call ptec::roi_align.out makes, as the fx graph holds it (one
    node: shapes and evaluation are torchvision's own op on rois [K, 5], or
    [K, 4] boxes of image 0 as a list of one tensor)."""
    ops = _tv_ops()
    if rois.shape[-1] == 4:
        rois = [rois]
    size = (pooled_height, pooled_width)
    if position_sensitive:
        return ops.ps_roi_align(x, rois, size, spatial_scale, sampling_ratio)
    return ops.roi_align(x, rois, size, spatial_scale, sampling_ratio, aligned)


def _kernel_call(gm, fn, x, boxes, listed, size, scale, sr, aligned, ps) -> None:
    """fn replaced by one roi_align_kernel call (captured as one roi_align
    node: roi_align_node); listed: a single image's [K, 4] boxes, which the
    kernel takes as they are (a joined 0 column would share the boxes' int8
    grid in a cat and widen it)."""
    with gm.graph.inserting_before(fn):
        call = gm.graph.call_function(roi_align_kernel, (x, boxes, float(scale), int(size[0]), int(size[1]),
                                                         int(sr), bool(aligned), bool(ps)))
    call.meta.update(fn.meta)
    call.meta["ptec_fp32"] = ROI_KERNEL
    # the call as the user wrote it (the node a refusal or a runtime error names)
    call.meta["ptec_roi_source"] = f"{fn.name} (torchvision.ops.{'ps_roi_align' if ps else 'roi_align'})"
    fn.replace_all_uses_with(call)
    gm.graph.erase_node(fn)


def roi_align_node(fn: torch.fx.Node, ins: List[str]):
    """A roi_align_kernel call as one `roi_align` node (ptec::roi_align.out), else None."""
    if fn.op != "call_function" or fn.target is not roi_align_kernel or len(ins) != 2:
        return None
    from .ir import Node
    scale, ph, pw, sr, aligned, ps = fn.args[2:]
    return Node(fn.name, "roi_align", list(ins), dict(spatial_scale=scale, pooled_height=ph, pooled_width=pw,
                                                     sampling_ratio=sr, aligned=aligned, position_sensitive=ps,
                                                     fp32=ROI_KERNEL,
                                                     source=fn.meta.get("ptec_roi_source", fn.name)))


def _roi_align(gm: torch.fx.GraphModule, fn: torch.fx.Node) -> bool:
    """roi_align, any sampling_ratio (the adaptive one included), on the
    kernel: bit-equal to torchvision's CPU op, where the composed form
    (_RoiAlign) was within 1.4e-6 of torch float64 only."""
    if fn.op != "call_function" or _tv_fn("roi_align") is None or fn.target is not _tv_fn("roi_align"):
        return False
    names = ("input", "boxes", "output_size", "spatial_scale", "sampling_ratio", "aligned")
    if len(fn.args) > len(names) or set(fn.kwargs) - set(names):
        return False
    got = dict(zip(names, fn.args))
    got.update(fn.kwargs)
    x, boxes = got.get("input"), got.get("boxes")
    size, scale = _pair(got.get("output_size")), got.get("spatial_scale", 1.0)
    sr, aligned = got.get("sampling_ratio", -1), got.get("aligned", False)
    if not isinstance(sr, int) or isinstance(sr, bool):
        return False
    xs = _shape(x)
    if (size is None or not isinstance(scale, (int, float)) or not isinstance(aligned, bool) or xs is None
            or len(xs) != 4 or not isinstance(x, torch.fx.Node)):
        return False
    n = xs[0]
    got_boxes = _boxes_arg(gm, fn, boxes, n, ROI_KERNEL)
    if got_boxes is None:
        return False
    _kernel_call(gm, fn, x, got_boxes[0], got_boxes[1], size, scale, sr, aligned, False)
    return True


BIG = 1e30


def _step(d):
    """1.0 where d > 0, else 0.0 (a nonzero difference of the values here
    is far above 2^-40)."""
    return torch.clamp(d * STEEP, 0.0, 1.0)


def _round_away(v, one):
    """std::round (halves away from zero), exact: fmod by 1 is exact, so
    t = v - fmod(v, 1) is trunc(v), f = v - t its fraction, and 2f's own
    trunc is -1, 0 or 1 (|f| >= 0.5 rounds away)."""
    t = v - torch.fmod(v, one)
    f2 = (v - t) * 2.0
    return t + (f2 - torch.fmod(f2, one))


class _RoiPool(torch.nn.Module):
    """torchvision's roi_pool: each bin the max over its integer window
    [floor(p * bin) + start, ceil((p + 1) * bin) + start) (clamped to the
    map), start = round(x1 * scale), size max(round(x2 * scale) - start + 1,
    1), bin = size / out; an empty window gives 0. Here the windows are 0/1
    masks over the map's rows and columns (r in the window iff
    p * bin < r - start + 1 and r - start < (p + 1) * bin, which for an
    integer r is the floor / ceil rule), the max that of x plus
    (mask - 1) * 1e30 over the whole map."""

    def __init__(self, n, c, h, w, kk, ph, pw, scale, listed, ps=False):
        super().__init__()
        self.dims, self.scale, self.listed, self.ps = (n, c, h, w, kk, ph, pw), float(scale), listed, ps
        if ps:
            # ps_roi_pool: size max(end - start, 1) (no + 1), windows clipped to [0, size - 1] at both
            # ends (torchvision's kernel never reads the last row or column), the window's mean, and
            # bin b of output channel c read from input channel c * PH * PW + b
            self.register_buffer("last_row", (torch.arange(h) < h - 1).to(torch.float32).view(1, 1, h))
            self.register_buffer("last_col", (torch.arange(w) < w - 1).to(torch.float32).view(1, 1, w))
            self.register_buffer("eye", torch.eye(ph * pw).view(1, ph * pw, 1, ph * pw))
        self.register_buffer("one", torch.ones(1))    # fmod by a tensor: the fp32 aten::fmod.Tensor_out
        self.register_buffer("rows", torch.arange(h, dtype=torch.float32).view(1, 1, h))
        self.register_buffer("cols", torch.arange(w, dtype=torch.float32).view(1, 1, w))
        self.register_buffer("ph", torch.arange(ph, dtype=torch.float32).view(1, ph, 1))
        self.register_buffer("pw", torch.arange(pw, dtype=torch.float32).view(1, pw, 1))
        self.register_buffer("batch", torch.arange(n, dtype=torch.float32).view(1, n))

    def _windows(self, lo, hi, bins, at, out: int):
        """[K, out, size] 0/1 masks of each bin's window along one axis."""
        start, end = _round_away(lo * self.scale, self.one), _round_away(hi * self.scale, self.one)
        size = torch.clamp(end - start + (0.0 if self.ps else 1.0), min=1.0)
        b = (size / float(out)).view(-1, 1, 1)                 # [K, 1, 1]
        n = at - start.view(-1, 1, 1)                          # r - start, [K, 1, size]
        return _step(n + 1.0 - bins * b) * _step((bins + 1.0) * b - n)

    def forward(self, x, rois):
        n, c, h, w, kk, ph, pw = self.dims
        cols = rois if self.listed else rois[:, 1:5]
        rm = self._windows(cols[:, 1], cols[:, 3], self.ph, self.rows, ph)     # [K, PH, H]
        cm = self._windows(cols[:, 0], cols[:, 2], self.pw, self.cols, pw)     # [K, PW, W]
        if self.ps:
            rm, cm = rm * self.last_row, cm * self.last_col
        mask = (rm.view(kk, ph, 1, h, 1) * cm.view(kk, 1, pw, 1, w)).reshape(kk * ph * pw, 1, h * w)
        if self.ps:
            return self._ps_mean(x, rois, rm, cm, mask)
        full = _step(rm.sum(2)).view(kk, 1, ph, 1) * _step(cm.sum(2)).view(kk, 1, 1, pw)
        penalty = (mask - 1.0) * BIG
        outs = []
        for i in range(n):
            v = (x[i].reshape(1, c, h * w) + penalty).amax(2)                  # [K*PH*PW, C]
            outs.append(v.reshape(kk, ph, pw, c).permute(0, 3, 1, 2) * full)
        if n == 1:
            return outs[0]
        d = rois[:, 0:1] - self.batch
        pick = torch.clamp(1.0 - d * d * STEEP, 0.0, 1.0)                      # [K, N]
        total = outs[0] * pick[:, 0:1].view(kk, 1, 1, 1)
        for i in range(1, n):
            total = total + outs[i] * pick[:, i:i + 1].view(kk, 1, 1, 1)
        return total

    def _ps_mean(self, x, rois, rm, cm, mask):
        n, c, h, w, kk, ph, pw = self.dims
        area = torch.clamp((rm.sum(2).view(kk, ph, 1) * cm.sum(2).view(kk, 1, pw)).reshape(kk * ph * pw, 1), min=1.0)
        total = None
        for i in range(n):
            v = (x[i].reshape(1, c, h * w) * mask).sum(2) / area                  # [K*PH*PW, C]: 0 when empty
            v = (v.reshape(kk, ph * pw, c // (ph * pw), ph * pw) * self.eye).sum(3)    # [K, bin, Cout]
            v = v.permute(0, 2, 1).reshape(kk, c // (ph * pw), ph, pw)
            if n > 1:
                d = rois[:, 0:1] - self.batch[:, i:i + 1]
                v = v * torch.clamp(1.0 - d * d * STEEP, 0.0, 1.0).view(kk, 1, 1, 1)
            total = v if total is None else total + v
        return total


def _ps_roi_align(gm: torch.fx.GraphModule, fn: torch.fx.Node) -> bool:
    """torchvision's ps_roi_align, any sampling_ratio: the kernel's position
    sensitive form (the half-pixel shift, sizes not clamped, output channel
    c's bin (p, q) the mean over input channel (c * PH + p) * PW + q)."""
    if fn.op != "call_function" or _tv_fn("ps_roi_align") is None or fn.target is not _tv_fn("ps_roi_align"):
        return False
    names = ("input", "boxes", "output_size", "spatial_scale", "sampling_ratio")
    if len(fn.args) > len(names) or set(fn.kwargs) - set(names):
        return False
    got = dict(zip(names, fn.args))
    got.update(fn.kwargs)
    x, size, scale = got.get("input"), _pair(got.get("output_size")), got.get("spatial_scale", 1.0)
    sr, xs = got.get("sampling_ratio", -1), _shape(got.get("input"))
    if not isinstance(sr, int) or isinstance(sr, bool):
        return False
    if (size is None or not isinstance(scale, (int, float)) or xs is None or len(xs) != 4
            or not isinstance(x, torch.fx.Node) or xs[1] % (size[0] * size[1])):
        return False
    got_boxes = _boxes_arg(gm, fn, got.get("boxes"), xs[0], ROI_KERNEL)
    if got_boxes is None:
        return False
    _kernel_call(gm, fn, x, got_boxes[0], got_boxes[1], size, scale, sr, True, True)
    return True


def _roi_pool(gm: torch.fx.GraphModule, fn: torch.fx.Node) -> bool:
    """roi_pool, and ps_roi_pool (its position-sensitive mean: _RoiPool(ps=True))."""
    if fn.op != "call_function" or not any(_tv_fn(k) is not None and fn.target is _tv_fn(k)
                                           for k in ("roi_pool", "ps_roi_pool")):
        return False
    ps = fn.target is _tv_fn("ps_roi_pool")
    names = ("input", "boxes", "output_size", "spatial_scale")
    if len(fn.args) > len(names) or set(fn.kwargs) - set(names):
        return False
    got = dict(zip(names, fn.args))
    got.update(fn.kwargs)
    x, boxes = got.get("input"), got.get("boxes")
    size, scale = _pair(got.get("output_size")), got.get("spatial_scale", 1.0)
    xs = _shape(x)
    if size is None or not isinstance(scale, (int, float)) or xs is None or len(xs) != 4 \
            or not isinstance(x, torch.fx.Node):
        return False
    n, c, h, w = xs
    bs = [_shape(b) for b in boxes] if isinstance(boxes, (list, tuple)) else [_shape(boxes)]
    count = sum(b[0] for b in bs if b) * size[0] * size[1] * c * h * w
    if count > MAX_POOL_MASK:
        raise UnsupportedOperator(ROI_POOL_LARGE.format(count=count))
    got_boxes = _boxes_arg(gm, fn, boxes, n, ROI_POOL_FP32)
    if got_boxes is None:
        return False
    boxes, listed = got_boxes
    bs = _shape(boxes)
    if ps and c % (size[0] * size[1]):
        return False
    _inline(gm, fn, _RoiPool(n, c, h, w, bs[0], size[0], size[1], scale, listed, ps), [x, boxes], ROI_POOL_FP32)
    return True


class _DeformConv(torch.nn.Module):
    """torchvision's deform_conv2d: each tap k = (ki, kj) of output (i, j)
    reads x at (i * sh - ph + ki * dh + dy, j * sw - pw + kj * dw + dx),
    (dy, dx) = offset[:, 2k], offset[:, 2k + 1]; its bilinear read is 0
    beyond -1 and the size, the neighbours outside the map 0: F.grid_sample
    with zero padding and align_corners False is that rule exactly. With
    offset groups G (offset [N, 2 * G * K, Ho, Wo], mask [N, G * K, Ho, Wo]),
    channel group g of Cin / G consecutive channels reads at its own pairs
    offset[:, 2 * (g * K + k)] (torchvision's im2col kernel: the group of a
    channel is c // (Cin / G)): x viewed [N * G, Cin / G, H, W] is sampled
    at [N * G] grids. The samples (times mask[:, g * K + k] when given) are
    the columns of the convolution: one 1x1 conv2d by the weight viewed
    [Cout, Cin / groups * kh * kw] with torch's weight groups (a column's
    channel c stays c: group c // (Cin / groups), as the grouped conv's)."""

    def __init__(self, n, cin, h, w, ho, wo, kh, kw, stride, padding, dilation, weight, bias, masked,
                 groups=1, offset_groups=1):
        super().__init__()
        self.dims, self.masked = (n, cin, h, w, ho, wo, kh * kw), masked
        self.groups, self.offset_groups = groups, offset_groups
        ys = torch.tensor([[i * stride[0] - padding[0] + ki * dilation[0] for i in range(ho)]
                           for ki in range(kh) for _ in range(kw)], dtype=torch.float32)
        xs = torch.tensor([[j * stride[1] - padding[1] + kj * dilation[1] for j in range(wo)]
                           for _ in range(kh) for kj in range(kw)], dtype=torch.float32)
        self.register_buffer("ys", ys.view(1, kh * kw, ho, 1))
        self.register_buffer("xs", xs.view(1, kh * kw, 1, wo))
        self.register_buffer("weight", weight.to(torch.float32).reshape(weight.shape[0], -1, 1, 1).contiguous())
        self.register_buffer("bias", (torch.zeros(weight.shape[0]) if bias is None else bias).to(torch.float32))

    def forward(self, x, offset, mask=None):
        n, cin, h, w, ho, wo, k = self.dims
        v = self._columns(x, offset, mask)
        return F.conv2d(v.reshape(n, cin * k, ho, wo), self.weight, self.bias, groups=self.groups)

    def _columns(self, x, offset, mask):
        """The samples times the mask: [N * G, Cin / G, K * Ho, Wo] (or [N * G, Cin / G, K, Ho, Wo])."""
        n, cin, h, w, ho, wo, k = self.dims
        g = self.offset_groups
        pairs = offset.view(n * g, k, 2, ho, wo)
        py = pairs[:, :, 0] + self.ys                  # [N * G, K, Ho, Wo] rows read
        px = pairs[:, :, 1] + self.xs
        grid = torch.stack([(px * 2.0 + 1.0) / float(w) - 1.0, (py * 2.0 + 1.0) / float(h) - 1.0], 4)
        v = F.grid_sample(x.reshape(n * g, cin // g, h, w), grid.reshape(n * g, k * ho, wo, 2), "bilinear",
                          "zeros", False)                                  # [N * G, Cin / G, K * Ho, Wo]
        if self.masked:
            v = v.reshape(n * g, cin // g, k, ho, wo) * mask.view(n * g, 1, k, ho, wo)
        return v


class _DeformConvComputed(_DeformConv):
    """deform_conv2d whose weight (and bias, when not a constant) is computed
    in the program: the same sampled columns, and the 1x1 convolution as
    the product it is, weight viewed [groups, Cout / groups, Cin / groups * K]
    times the columns viewed [N, groups, Cin / groups * K, Ho * Wo] (one fp32
    matmul, both operands computed: a conv's weight is a compile-time
    constant in ptec's IR, a matmul's operands are not)."""

    def __init__(self, n, cin, h, w, ho, wo, kh, kw, stride, padding, dilation, cout, bias, masked,
                 groups=1, offset_groups=1):
        super().__init__(n, cin, h, w, ho, wo, kh, kw, stride, padding, dilation, torch.zeros(cout, cin // groups,
                         kh, kw), bias if isinstance(bias, torch.Tensor) else None, masked, groups, offset_groups)
        del self.weight
        self.cout, self.bias_in = cout, isinstance(bias, str)
        if bias is None:
            del self.bias       # no constant bias: none added

    def forward(self, x, offset, weight, extra=None, extra2=None):
        mask, bias = (extra, extra2) if self.masked else (None, extra)
        n, cin, h, w, ho, wo, k = self.dims
        gw, cout = self.groups, self.cout
        v = self._columns(x, offset, mask)
        # a column's channel c stays c (group c // (Cin / groups)), its rows c * K + tap: the weight's order
        cols = v.reshape(n, gw, cin // gw * k, ho * wo)
        out = torch.matmul(weight.reshape(gw, cout // gw, cin // gw * k), cols).reshape(n, cout, ho, wo)
        if self.bias_in:
            return out + bias.reshape(1, cout, 1, 1)
        if hasattr(self, "bias"):
            return out + self.bias.view(1, cout, 1, 1)
        return out


DCN_FP32 = "deform_conv2d's sample positions, samples and their convolution, computed in fp32"


def _deform_conv(gm: torch.fx.GraphModule, fn: torch.fx.Node) -> bool:
    from .capture_composed import _constant
    if fn.op != "call_function" or _tv_fn("deform_conv2d") is None or fn.target is not _tv_fn("deform_conv2d"):
        return False
    names = ("input", "offset", "weight", "bias", "stride", "padding", "dilation", "mask")
    if len(fn.args) > len(names) or set(fn.kwargs) - set(names):
        return False
    got = dict(zip(names, fn.args))
    got.update(fn.kwargs)
    x, offset, mask = got.get("input"), got.get("offset"), got.get("mask")
    weight = _constant(gm, got.get("weight"))
    bias = _constant(gm, got.get("bias")) if got.get("bias") is not None else None
    if weight is None and isinstance(got.get("weight"), torch.fx.Node):
        return _deform_conv_computed(gm, fn, got, bias)
    pairs = [_pair(got.get(k, d)) for k, d in (("stride", 1), ("padding", 0), ("dilation", 1))]
    xs, os_, out = _shape(x), _shape(offset), _shape(fn)
    if (weight is None or not isinstance(weight, torch.Tensor) or weight.dim() != 4 or any(p is None for p in pairs)
            or (got.get("bias") is not None and bias is None) or xs is None or os_ is None or out is None
            or len(xs) != 4 or not isinstance(x, torch.fx.Node) or not isinstance(offset, torch.fx.Node)
            or (mask is not None and not isinstance(mask, torch.fx.Node))):
        return False
    n, cin, h, w = xs
    cout, cin_g, kh, kw = weight.shape
    ho, wo = out[2], out[3]
    # torchvision's groups are Cin / weight's in-channels, its offset groups offset's channels / (2 kh kw)
    groups, offset_groups = (cin // cin_g if cin_g else 0), os_[1] // (2 * kh * kw)
    if (groups < 1 or cin % cin_g or cout % groups or offset_groups < 1 or cin % offset_groups
            or os_ != [n, 2 * offset_groups * kh * kw, ho, wo]
            or (mask is not None and _shape(mask) != [n, offset_groups * kh * kw, ho, wo])):
        return False        # shapes torchvision refuses: stays the call, refused by name
    module = _DeformConv(n, cin, h, w, ho, wo, kh, kw, pairs[0], pairs[1], pairs[2], weight, bias, mask is not None,
                         groups, offset_groups)
    _inline(gm, fn, module, [x, offset] + ([mask] if mask is not None else []), DCN_FP32)
    return True


def _deform_conv_computed(gm, fn, got, bias) -> bool:
    """deform_conv2d with a weight (and maybe bias) computed in the program:
    _DeformConvComputed, the same shape rules as the constant weight's."""
    x, offset, mask, wnode, bnode = (got.get(k) for k in ("input", "offset", "mask", "weight", "bias"))
    pairs = [_pair(got.get(k, d)) for k, d in (("stride", 1), ("padding", 0), ("dilation", 1))]
    xs, os_, out, ws = _shape(x), _shape(offset), _shape(fn), _shape(wnode)
    computed_bias = bnode is not None and bias is None
    if (ws is None or len(ws) != 4 or any(p is None for p in pairs) or xs is None or os_ is None or out is None
            or len(xs) != 4 or not isinstance(x, torch.fx.Node) or not isinstance(offset, torch.fx.Node)
            or (mask is not None and not isinstance(mask, torch.fx.Node))
            or (computed_bias and (not isinstance(bnode, torch.fx.Node) or _shape(bnode) != [ws[0]]))):
        return False
    n, cin, h, w = xs
    cout, cin_g, kh, kw = ws
    ho, wo = out[2], out[3]
    groups, offset_groups = (cin // cin_g if cin_g else 0), os_[1] // (2 * kh * kw)
    if (groups < 1 or cin % cin_g or cout % groups or offset_groups < 1 or cin % offset_groups
            or os_ != [n, 2 * offset_groups * kh * kw, ho, wo]
            or (mask is not None and _shape(mask) != [n, offset_groups * kh * kw, ho, wo])):
        return False
    module = _DeformConvComputed(n, cin, h, w, ho, wo, kh, kw, pairs[0], pairs[1], pairs[2], cout,
                                 "input" if computed_bias else bias, mask is not None, groups, offset_groups)
    args = [x, offset, wnode] + ([mask] if mask is not None else []) + ([bnode] if computed_bias else [])
    _inline(gm, fn, module, args, DCN_FP32)
    return True


_ISTFT_ARGS = ("input", "n_fft", "hop_length", "win_length", "window", "center", "normalized", "onesided", "length",
               "return_complex")


def istft_plan(n_fft: int, hop: int, win_length: int, window, frames: int, center: bool, normalized: bool,
               length):
    """torch.istft's constants for frames of n_fft samples: the per-sample
    weight of a frame (the window padded to n_fft in the middle, times
    sqrt(n_fft) when normalized: torch scales the inverse so), the overlap-
    added length, the kept range [start, end), the reciprocal of the window
    envelope (the overlap-add of window^2) over it, and the zeros torch pads
    after it up to `length`; None when the envelope is below torch's 1e-11
    somewhere in the range (torch raises)."""
    w = torch.ones(win_length, dtype=torch.float64) if window is None else window.to(torch.float64).reshape(-1)
    left = (n_fft - win_length) // 2
    full = torch.zeros(n_fft, dtype=torch.float64)
    full[left:left + win_length] = w
    total, start, end, pad = istft_range(n_fft, hop, frames, center, length)
    env = torch.zeros(total, dtype=torch.float64)
    for t in range(frames):
        env[t * hop:t * hop + n_fft] += full * full
    if end <= start or bool((env[start:end].abs() < 1e-11).any()):
        return None
    scale = full * (n_fft ** 0.5 if normalized else 1.0)
    return scale, total, start, end, 1.0 / env[start:end], pad


def istft_range(n_fft: int, hop: int, frames: int, center: bool, length):
    """torch.istft's overlap-added length, the kept range [start, end) and
    the zeros padded after it up to `length` (end <= start: torch raises)."""
    total = n_fft + hop * (frames - 1)
    start = n_fft // 2 if center else 0
    if length is not None:
        end = min(start + int(length), total)
    else:
        end = total - n_fft // 2 if center else total
    pad = int(length) - (end - start) if length is not None else 0
    return total, start, end, pad


ISTFT_FP32 = ("torch.istft's window product, overlap-add and division by the window envelope, computed in fp32 "
              "(the envelope, the overlap-add of window^2, is small where few frames overlap: at the ends when not "
              "centred, at a last partial frame; the division would magnify an int8 error as much; the inverse "
              "DFT stays an int8 linear)")


def _overlap_add(frames, b: int, n_fft: int, hop: int, frames_n: int, total: int, zeros: List):
    """F.fold((1, total), (1, n_fft), stride (1, hop)) of frames [B, n_fft, T]
    as R = ceil(n_fft / hop) shifted sums: frame rows r*hop .. r*hop + hop - 1
    land on the output's hop-wide rows t + r, so y viewed [B, T + R - 1, hop]
    is the sum over r of rows r of each frame shifted down r rows (zeros
    around: `zeros[k]` a [b, k, hop] constant, zeros[0] [b, R * hop - n_fft, T]). O(R * total) steps, where an
    fp32 transposed convolution of fold's [n_fft, 1, 1, n_fft] weight visits
    n_fft^2 taps per output sample."""
    r_n = -(-n_fft // hop)
    if r_n * hop > n_fft:
        frames = torch.cat([frames, zeros[0]], 1)
    rows = frames.reshape(b, r_n, hop, frames_n).permute(0, 1, 3, 2)          # [B, R, T, hop]
    y = None
    for r in range(r_n):
        parts = ([zeros[r]] if r else []) + [rows[:, r]] + ([zeros[r_n - 1 - r]] if r < r_n - 1 else [])
        part = torch.cat(parts, 1) if len(parts) > 1 else parts[0]
        y = part if y is None else y + part
    return y.reshape(b, (frames_n + r_n - 1) * hop)[:, :total]


class _OverlapAdd(torch.nn.Module):
    def __init__(self, n_fft, hop, frames, batch):
        super().__init__()
        self.n_fft, self.hop, self.frames, self.batch = n_fft, hop, frames, batch
        self.r_n = -(-n_fft // hop)
        self.total = n_fft + hop * (frames - 1)
        # per batch size b (the spectrum's, and 1 for the envelope): zeros_b_0 pads the frames to R * hop
        # rows, zeros_b_k are k shifted rows of hop
        for b in sorted({1, batch}):
            if self.r_n * hop > n_fft:
                self.register_buffer(f"zeros_{b}_0", torch.zeros(b, self.r_n * hop - n_fft, frames))
            for k in range(1, self.r_n):
                self.register_buffer(f"zeros_{b}_{k}", torch.zeros(b, k, hop))

    def overlap_add(self, frames, b):
        zeros = [getattr(self, f"zeros_{b}_{k}", None) for k in range(self.r_n)]
        return _overlap_add(frames, b, self.n_fft, self.hop, self.frames, self.total, zeros)


class _Istft(_OverlapAdd):
    def __init__(self, n_fft, hop, frames, plan, batched, batch):
        super().__init__(n_fft, hop, frames, batch)
        scale, total, start, end, inv, pad = plan
        self.start, self.end, self.batched = start, end, batched
        self.register_buffer("scale", scale.to(torch.float32).view(n_fft, 1))
        self.register_buffer("inv", inv.to(torch.float32).view(1, end - start))

    def forward(self, spec):
        if not self.batched:
            spec = spec.unsqueeze(0)
        frames = torch.fft.irfft(spec, n=self.n_fft, dim=1) * self.scale       # [B, n_fft, T]
        y = self.overlap_add(frames, self.batch)[:, self.start:self.end] * self.inv
        return y if self.batched else y.squeeze(0)


class _IstftWindowed(_OverlapAdd):
    """torch.istft with a window computed in the program: the window placed
    in the middle of n_fft samples (a constant 0/1 linear when win_length <
    n_fft), each frame's irfft times it; the envelope (the overlap-add of
    window^2 over the frames, torch's normalisation) is the same overlap-add
    of the squared window repeated per frame, so it is computed in the
    program too, and the kept range divided by it. Where torch raises (the
    envelope below 1e-11 in the kept range: only the run knows the window)
    the quotient is the division's (inf / nan)."""

    def __init__(self, n_fft, hop, frames, win_length, normalized, span, batched, batch):
        super().__init__(n_fft, hop, frames, batch)
        _, self.start, self.end, _ = span
        self.batched, self.placed = batched, win_length < n_fft
        left = (n_fft - win_length) // 2
        place = torch.zeros(n_fft, win_length)
        place[left:left + win_length] = torch.eye(win_length)
        self.register_buffer("place", place)
        self.gain = n_fft ** 0.5 if normalized else 1.0
        self.register_buffer("ones", torch.ones(1, frames))

    def forward(self, spec, window):
        if not self.batched:
            spec = spec.unsqueeze(0)
        full = (F.linear(window, self.place) if self.placed else window).reshape(self.n_fft, 1)
        frames = torch.fft.irfft(spec, n=self.n_fft, dim=1) * (full * self.gain)     # [B, n_fft, T]
        env = self.overlap_add((full * full * self.ones).unsqueeze(0), 1)
        y = self.overlap_add(frames, self.batch)[:, self.start:self.end] / env[:, self.start:self.end]
        return y if self.batched else y.squeeze(0)


def _istft(gm: torch.fx.GraphModule, fn: torch.fx.Node) -> bool:
    """torch.istft / Tensor.istft of a complex spectrum with a real result:
    torch's definition, irfft of each frame (n = n_fft), times the window
    (and sqrt(n_fft) when normalized), overlap-added (_overlap_add: F.fold's
    sum), the kept range divided by the window envelope, in fp32 after the
    int8 irfft (ISTFT_FP32: the envelope can be small, and the division
    magnifies an int8 error as much), zeros after it up to `length` (exact
    in int8).
    A two-sided spectrum is narrowed to its first n_fft // 2 + 1 rows first
    (torch's own step); a window computed in the program: _IstftWindowed.
    Anything else stays the call (refused by name)."""
    from .capture_composed import _constant
    if not ((fn.op == "call_function" and fn.target is torch.istft)
            or (fn.op == "call_method" and fn.target == "istft")):
        return False
    if len(fn.args) > len(_ISTFT_ARGS) or set(fn.kwargs) - set(_ISTFT_ARGS):
        return False
    got = dict(zip(_ISTFT_ARGS, fn.args))
    got.update(fn.kwargs)
    spec, n_fft = got.get("input"), got.get("n_fft")
    meta = spec.meta.get("tensor_meta") if isinstance(spec, torch.fx.Node) else None
    shape = _shape(spec)
    if meta is None or shape is None or not meta.dtype.is_complex or len(shape) not in (2, 3) \
            or not isinstance(n_fft, int) or n_fft < 1:
        return False
    hop = got.get("hop_length") or n_fft // 4
    win_length = got.get("win_length") or n_fft
    center, normalized = got.get("center", True), got.get("normalized", False)
    onesided, length = got.get("onesided"), got.get("length")
    window, computed = got.get("window"), None
    if window is not None:
        value = _constant(gm, window)
        if value is None and isinstance(window, torch.fx.Node) and _shape(window) == [win_length] \
                and getattr(window.meta.get("tensor_meta"), "dtype", None) in (torch.float32, torch.float64):
            computed = window       # a window computed in the program (or an input): the envelope is too
        elif value is None or list(value.shape) != [win_length]:
            return False
        window = value
    # torch's real result of a two-sided spectrum (onesided False, or unset with n_fft rows) is the
    # onesided one of its first n_fft // 2 + 1 rows: torch's istft narrows them before its irfft
    two_sided = onesided is False or (onesided is None and shape[-2] == n_fft)
    rows = n_fft if two_sided else n_fft // 2 + 1
    if (got.get("return_complex") or shape[-2] != rows or not isinstance(hop, int)
            or not isinstance(win_length, int) or win_length > n_fft or not isinstance(center, bool)
            or not isinstance(normalized, bool) or not (length is None or isinstance(length, int))):
        return False
    if computed is not None:
        span = istft_range(n_fft, hop, shape[-1], center, length)
        if span[2] <= span[1]:
            return False
        module = _IstftWindowed(n_fft, hop, shape[-1], win_length, normalized, span, len(shape) == 3,
                                shape[0] if len(shape) == 3 else 1)
    else:
        plan = istft_plan(n_fft, hop, win_length, window, shape[-1], center, normalized, length)
        if plan is None:
            return False
        module = _Istft(n_fft, hop, shape[-1], plan, len(shape) == 3, shape[0] if len(shape) == 3 else 1)
    pad = (span if computed is not None else plan)[-1]
    if two_sided:
        with gm.graph.inserting_before(fn):
            spec = gm.graph.call_function(torch.narrow, (spec, -2, 0, n_fft // 2 + 1))
    call = f"{fn.name} (Tensor.istft)" if fn.op == "call_method" else f"{fn.name} (torch.istft)"
    out = _inline(gm, fn, module, [spec] + ([computed] if computed is not None else []), ISTFT_FP32)
    out.meta["ptec_note"] = f"{call}: {ISTFT_FP32}"     # the compile log says so, once per call
    # the irfft (a linear by the DFT columns) stays int8: its rounding is the size of the int8 spectrum's own,
    # and the window product after it scales that down where the envelope divides it (measured: at most 0.4
    # output steps more than an fp32 irfft, whose weights are 4 times the bytes and MACs fp32)
    for node in gm.graph.nodes:
        if node.target is torch.fft.irfft and node.meta.get("ptec_fp32") == ISTFT_FP32:
            node.meta.pop("ptec_fp32")
    if pad > 0:
        # torch's zeros after the signal up to `length`: exact on any grid, so the pad is no fp32 step
        with gm.graph.inserting_after(out):
            padded = gm.graph.call_function(F.pad, (out, (0, pad)))
        out.replace_all_uses_with(padded, delete_user_cb=lambda u: u is not padded)
    return True


def _inline(gm, fn, module, args, fp32):
    """fn replaced by module's traced body on args (its buffers registered
    on gm); each new node marked fp32 (its reason) when fp32 is given."""
    body = torch.fx.symbolic_trace(module)
    g = gm.graph
    holders = [p for p in body.graph.nodes if p.op == "placeholder"]
    env = dict(zip(holders, args))
    for k, v in body.named_buffers():
        gm.register_buffer(f"_ptec_{fn.name}_{k}", v.clone())
    out = None
    with g.inserting_before(fn):
        for node in body.graph.nodes:
            if node.op == "placeholder":
                continue
            if node.op == "output":
                out = env[node.args[0]]
                break
            if node.op == "get_attr":
                env[node] = g.get_attr(f"_ptec_{fn.name}_{node.target}")
                continue
            env[node] = g.node_copy(node, lambda a: env[a])
            if fp32:
                env[node].meta["ptec_fp32"] = fp32
    fn.replace_all_uses_with(out)
    g.erase_node(fn)
    return out


def _nms(gm: torch.fx.GraphModule, fn: torch.fx.Node) -> bool:
    """torchvision.ops.nms and batched_nms: capture_nms (ptec::nms.out, ptec::batched_nms.out; any box count)."""
    from .capture_nms import nms_rewrite
    return nms_rewrite(gm, fn, _tv_fn, _shape)


REFUSED = {  # torchvision call name: why (each refused in one line by _refused)
    "nms": ("ptec rewrites it only for boxes [K, 4] (any K, 0 too), scores [K] and a threshold of one element "
            "(a number or a tensor)"),
    "batched_nms": ("ptec rewrites it only for boxes [K, 4] (any K, 0 too), scores and idxs [K] and a threshold of "
                    "one element (a number or a tensor)"),
    "ps_roi_align": "ptec rewrites it only with channels a multiple of the bins",
    "ps_roi_pool": "ptec rewrites it only with channels a multiple of the bins",
    "deform_conv2d": ("ptec rewrites it only with the shapes torchvision takes and a constant or computed "
                      "bias of the output channels (sampling at computed offsets, then a convolution of the samples)"),
}


MULTISCALE = ("torchvision.ops.MultiScaleRoIAlign is not supported in this call: ptec runs it on a dict of "
              "feature maps, a list of [K_i, 4] box tensors and image_shapes whose heights are numbers, sizes or "
              "one-element tensors (computed ones too), called as forward(x, boxes, image_shapes)")


def module_refusal(where: str) -> Optional[str]:
    """The one line for a torchvision module whose forward fx cannot trace
    (MultiScaleRoIAlign in a form multiscale_forward leaves to it), else None."""
    return f"{where}: {MULTISCALE}" if "(MultiScaleRoIAlign)" in where else None


def _refused(fn: torch.fx.Node) -> None:
    if fn.op == "call_function" and any(fn.target is f for f in torchvision_leaves()[0]):
        name = fn.target.__name__
        if name in REFUSED:
            raise UnsupportedOperator(f"torchvision.ops.{name} is not supported: {REFUSED[name]}")


def torchvision_calls(gm: torch.fx.GraphModule, propagate: Callable[[], None]) -> None:
    """Rewrite torchvision.ops.roi_align and torch.istft calls in gm's
    graph; propagate() records the new nodes' shapes when any was made."""
    changed = False
    for fn in list(gm.graph.nodes):
        made = (_roi_align(gm, fn) or _ps_roi_align(gm, fn) or _roi_pool(gm, fn) or _istft(gm, fn)
                or _deform_conv(gm, fn) or _nms(gm, fn))
        if not made:
            _refused(fn)
        changed |= made
    if changed:
        gm.graph.lint()
        gm.recompile()
        propagate()


MS_FP32 = "MultiScaleRoIAlign's box areas and level picks, computed in fp32"


def _level_areas(k_min: int, k_max: int, s0: float, lvl0: float, eps: float) -> List[float]:
    """For each level k in (k_min, k_max]: the largest fp32 area whose box
    torchvision's LevelMapper puts below k (floor(lvl0 + log2(sqrt(area) /
    s0) + eps) < k, evaluated by torch itself on a dense fp32 window
    around the real threshold, so its own rounding decides)."""
    out = []
    for k in range(k_min + 1, k_max + 1):
        guess = torch.tensor([(s0 * 2.0 ** (k - lvl0 - eps)) ** 2], dtype=torch.float32)
        bits = guess.view(torch.int32) + torch.arange(-(1 << 16), 1 << 16, dtype=torch.int32)
        area = bits.view(torch.float32)
        lvl = torch.floor(lvl0 + torch.log2(torch.sqrt(area) / s0) + torch.tensor(eps, dtype=torch.float32))
        below = (lvl < k).nonzero().flatten()
        above = (lvl >= k).nonzero().flatten()
        if len(below) == 0 or len(above) == 0 or int(below.max()) + 1 != int(above.min()):
            raise UnsupportedOperator("torchvision.ops.MultiScaleRoIAlign is not supported with these canonical "
                                      "scale and level: ptec found no exact level threshold")
        out.append(float(area[int(below.max())]))
    return out


def _scale_of(size: int, image: float) -> float:
    # torchvision's _infer_scale: 2 ** round(log2(size / image)) (the height)
    return 2.0 ** float(torch.tensor(float(size) / float(image)).log2().round())


# computed image heights: the program's level scales are exact for heights in [1, 2^24] (fp32 integers);
# a height outside is taken as the nearest end
HEIGHT_RANGE = (1.0, float(1 << 24))
COMPUTED_FP32 = "MultiScaleRoIAlign's level scales and picks from computed image sizes, in fp32"


def _fixed_value(v):
    """v itself, or a proxy's value when the tracer knows it does not depend
    on the input's data (a shape read as a tensor, a buffer); else None."""
    if not isinstance(v, torch.fx.Proxy):
        return v
    fixed = getattr(v.tracer, "fixed", None)
    return v.tracer.value(v.node) if fixed is not None and fixed(v.node) else None


def _read_as_numbers(shapes) -> None:
    """The traced values in image_shapes (hw[0], hw[1], a shape tensor):
    torchvision reads them as Python numbers, so a node no program op
    reads afterwards is dropped after tracing (drop_traced_leftovers)."""
    for s in shapes if isinstance(shapes, (list, tuple)) else [shapes]:
        for v in [s] + (list(s) if isinstance(s, (list, tuple)) else []):
            if isinstance(v, torch.fx.Proxy):
                v.node.meta["ptec_decided"] = True


def _heights(shapes):
    """The image heights torchvision's _setup_scales takes the largest of
    (only heights set the scale: _infer_scale returns the first of its
    two): Python floats, or proxies of a tensor of one element computed
    from the data. None when eager torchvision cannot read them (a tensor
    of more elements: float() of it fails) or they are of no known form."""
    if not isinstance(shapes, (list, tuple)) or not shapes:
        return None
    out = []
    for s in shapes:
        fixed = _fixed_value(s)
        if fixed is not None:
            s = fixed
        if not isinstance(s, (list, tuple, torch.Tensor, torch.fx.Proxy)) or \
                (not isinstance(s, torch.fx.Proxy) and len(s) < 1):
            return None
        h = s[0]
        fixed = _fixed_value(h)
        if isinstance(fixed, torch.Tensor):
            if fixed.numel() != 1:
                return None
            fixed = float(fixed)
        if isinstance(fixed, numbers.Real) and not isinstance(fixed, bool):     # numpy's numbers too
            out.append(float(fixed))
            continue
        if not isinstance(h, torch.fx.Proxy):
            return None
        known = getattr(h.tracer, "known", None)
        if known is not None and known(h.node):
            v = h.tracer.value(h.node)
            if not isinstance(v, torch.Tensor) or v.numel() != 1 or v.is_complex():
                return None
        out.append(h)
    return out


def _n_of(size: int, h: float) -> int:
    return int(float(torch.tensor(float(size) / h).log2().round()))


def _fp32_bits(v: float) -> int:
    return int(torch.tensor([v], dtype=torch.float32).view(torch.int32))


def _fp32_of(bits: int) -> float:
    return float(torch.tensor([bits], dtype=torch.int32).view(torch.float32))


def _height_bounds(size: int):
    """For a map of height size: (ns, bounds), ns = n_lo .. n_hi the
    exponents torchvision's _infer_scale gives for image heights in
    HEIGHT_RANGE, bounds[i] the smallest fp32 height whose exponent is
    below ns[i + 1] (so exponent >= ns[i + 1] iff height < bounds[i]);
    each found with torchvision's own arithmetic (double division, fp32
    log2, round) evaluated height by height, and checked on a window of
    fp32 neighbours."""
    lo_bits, hi_bits = _fp32_bits(HEIGHT_RANGE[0]), _fp32_bits(HEIGHT_RANGE[1])
    n_hi, n_lo = _n_of(size, HEIGHT_RANGE[0]), _n_of(size, HEIGHT_RANGE[1])
    bounds = []
    for n in range(n_lo + 1, n_hi + 1):
        a, b = lo_bits, hi_bits            # exponent(a) >= n > exponent(b)
        while b - a > 1:
            mid = (a + b) // 2
            if _n_of(size, _fp32_of(mid)) >= n:
                a = mid
            else:
                b = mid
        window = range(max(lo_bits, b - 24), min(hi_bits, b + 24) + 1)
        if any((_n_of(size, _fp32_of(i)) >= n) != (i < b) for i in window):
            raise UnsupportedOperator("torchvision.ops.MultiScaleRoIAlign is not supported with computed image "
                                      "sizes here: ptec found no exact height threshold of the level scales")
        bounds.append(_fp32_of(b))
    return list(range(n_lo, n_hi + 1)), bounds


def _onehot_exponent(height, size: int):
    """(one-hot [M] over ns of the exponent torchvision's _infer_scale gives
    for the computed fp32 height [1], ns): steps [height < bound], each
    minus the next (exact 0/1 values)."""
    ns, bounds = _height_bounds(size)
    inf = float("inf")
    ge = _step(torch.tensor([inf] + bounds, dtype=torch.float32) - height)
    nxt = _step(torch.tensor(bounds + [-inf], dtype=torch.float32) - height)
    return ge - nxt, ns


def _float_of(h):
    """h.float(), taken before the indexing when h is an element of an
    integer tensor (hw[0] of an int64 input: ptec converts integers with
    .float() and indexes the float copy; the same numbers, exactly, below 2^24)."""
    node = h.node
    if node.op == "call_function" and node.target is operator.getitem and len(node.args) == 2 \
            and isinstance(node.args[0], torch.fx.Node) and not isinstance(node.args[1], torch.fx.Node):
        known = getattr(h.tracer, "known", None)
        base = node.args[0]
        if known is not None and known(base) and isinstance(h.tracer.value(base), torch.Tensor) \
                and not h.tracer.value(base).is_floating_point():
            return _float_of(torch.fx.Proxy(base, h.tracer))[node.args[1]]
    return h.float()


def _fp32_ancestry(h) -> None:
    """The steps computing a height in the program (hw[0], hw.float() * 2)
    marked fp32 (fp32_ancestry): an int8 grid would move the height across
    a scale's threshold."""
    known, value = getattr(h.tracer, "known", None), getattr(h.tracer, "value", None)
    if known is None:
        return

    def floating(n):
        v = value(n) if known(n) else None
        return v.is_floating_point() if isinstance(v, torch.Tensor) else None

    mark_fp32_ancestry(h.node, floating, COMPUTED_FP32)


def _computed_levels(m, feats, heights, boxes):
    """MultiScaleRoIAlign with image heights computed in the program: each
    level's scale 2^n (n from the height by fp32 thresholds, _height_bounds)
    times the box coordinates (a power of two: exact in fp32, the product
    torchvision's roi_align forms itself), pooled at spatial_scale 1; each
    box's level from k_min = -n_0, k_max = -n_last and the area thresholds
    of every level k_min may start at (_level_areas), as one-hot sums."""
    ops = _tv_ops()
    graph = heights[[isinstance(h, torch.fx.Proxy) for h in heights].index(True)].tracer.graph
    floats = [_float_of(h) for h in heights if isinstance(h, torch.fx.Proxy)]   # an integer's cast: not fp32-marked
    for h in floats:
        _fp32_ancestry(h)
    before = set(graph.nodes)
    height = None
    for h in floats:
        h = h.reshape(1)
        height = h if height is None else torch.maximum(height, h)
    consts = [h for h in heights if not isinstance(h, torch.fx.Proxy)]
    if consts:
        height = torch.clamp(height, min=max(consts))
    height = torch.clamp(height, HEIGHT_RANGE[0], HEIGHT_RANGE[1])
    hots = [_onehot_exponent(height, int(f.shape[-2])) for f in feats]
    scales = [(hot * torch.tensor([2.0 ** n for n in ns], dtype=torch.float32)).sum() for hot, ns in hots]
    scaled = [[b * s for b in boxes] for s in scales]
    if len(feats) > 1:
        hot0, ns0 = hots[0]
        exps = [(hot * torch.tensor([float(n) for n in ns], dtype=torch.float32)).sum() for hot, ns in hots]
        spread = exps[0] - exps[-1]                      # k_max - k_min
        levels = len(feats)
        # areas[c - 1] for c = 1 .. L: the largest fp32 area whose level is below k_min + c, k_min = -n_0
        table = _level_areas(-ns0[-1], -ns0[0] + levels, float(m.canonical_scale), float(m.canonical_level), 1e-6)
        first = -ns0[-1] + 1                             # the level of table[0]
        rows = [[table[-n + c - first] for c in range(1, levels + 1)] for n in ns0]
        areas_at = (hot0.reshape(-1, 1) * torch.tensor(rows, dtype=torch.float32)).sum(0)
        b = torch.cat(list(boxes), 0) if len(boxes) > 1 else boxes[0]
        area = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
        at_least = _step(area.reshape(-1, 1) - areas_at.reshape(1, -1))     # [K, L]: level >= k_min + c
        picks = []
        for j in range(levels):
            upto = _step(spread - (j - 0.5))             # j <= k_max - k_min
            below = _step(spread - (j + 0.5))            # j < k_max - k_min
            pick = upto - below * at_least[:, j]
            picks.append(pick if j == 0 else at_least[:, j - 1] * pick)
    for node in graph.nodes:
        if node not in before:
            node.meta["ptec_fp32"] = COMPUTED_FP32
    size, sr = list(m.output_size), m.sampling_ratio
    pooled = [ops.roi_align(f, bx, size, 1.0, sr) for f, bx in zip(feats, scaled)]
    if len(feats) == 1:
        return pooled[0]
    before = set(graph.nodes)
    out = None
    for r, pick in zip(pooled, picks):
        term = r * pick.reshape(-1, 1, 1, 1)
        out = term if out is None else out + term
    for node in graph.nodes:
        if node not in before:
            node.meta["ptec_fp32"] = COMPUTED_FP32
    return out


def multiscale_forward(m, args, kwargs):
    """MultiScaleRoIAlign's output traced as torch ops, or None when m is
    not one or its call is not of a form rewritten here (a dict of feature
    maps, box tensors, image heights torchvision can read). Constant image
    sizes (Python numbers, shapes: ptec's static shapes, tensors that do
    not depend on the data): the scales (torchvision's _setup_scales: from
    the static map and image sizes) and the level thresholds are constants;
    every level's roi_align runs on all boxes and each box keeps its own
    level's, picked by 0/1 steps of area - the largest fp32 area below each
    level (exact: _level_areas), in fp32. Sizes computed from the data:
    _computed_levels. A module torch already called keeps its cached scales
    (torchvision then reads no image_shapes)."""
    ops = _tv_ops()
    cls = getattr(ops, "MultiScaleRoIAlign", None) if ops is not None else None
    if cls is None or not isinstance(m, cls):
        return None
    names = ("x", "boxes", "image_shapes")
    if len(args) > 3 or set(kwargs) - set(names):
        return None
    got = dict(zip(names, args))
    got.update(kwargs)
    x, boxes, shapes = got.get("x"), got.get("boxes"), got.get("image_shapes")
    if not isinstance(x, dict) or not isinstance(boxes, (list, tuple)) or not boxes:
        return None
    feats = [v for k, v in x.items() if k in m.featmap_names]
    if not feats:
        return None
    _read_as_numbers(shapes)
    if m.scales is not None and m.map_levels is not None:
        scales, mapper = list(m.scales), m.map_levels
        k_min, k_max, s0, lvl0, eps = mapper.k_min, mapper.k_max, mapper.s0, mapper.lvl0, mapper.eps
    else:
        heights = _heights(shapes)
        if heights is None:
            return None
        if any(isinstance(h, torch.fx.Proxy) for h in heights):
            return _computed_levels(m, feats, heights, boxes)
        top = max(heights + [0.0])
        scales = [_scale_of(int(f.shape[-2]), top) for f in feats]
        k_min = int(-torch.log2(torch.tensor(scales[0], dtype=torch.float32)).item())
        k_max = int(-torch.log2(torch.tensor(scales[-1], dtype=torch.float32)).item())
        s0, lvl0, eps = m.canonical_scale, m.canonical_level, 1e-6
    size, sr = list(m.output_size), m.sampling_ratio
    pooled = [ops.roi_align(f, list(boxes), size, s, sr) for f, s in zip(feats, scales)]
    if len(feats) == 1:
        return pooled[0]
    spread = int(k_max) - int(k_min)          # torchvision's levels 0 .. spread; a map past them pools no box
    if spread < 0:                             # k_min > k_max (maps finest last): torch pools no box (zeros)
        return torch.zeros_like(pooled[0])
    thresholds = _level_areas(k_min, k_max, float(s0), float(lvl0), float(eps))
    graph = next((p.tracer.graph for p in pooled if isinstance(p, torch.fx.Proxy)), None)
    before = set(graph.nodes) if graph is not None else set()
    b = torch.cat(list(boxes), 0) if len(boxes) > 1 else boxes[0]
    area = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    # level index j of each box: clamp(level, k_min, k_max) - k_min; above[j] = 1.0 when level >= k_min + j,
    # None for j = 0 (always) and past k_max (never); a box of a level past the maps is no map's (zeros)
    above = [None] + [_step(area - a) for a in thresholds] + [None]
    out = None
    for j, r in enumerate(pooled[:spread + 1]):
        lo, hi = above[j], above[j + 1]
        if lo is None and hi is None:
            term = r                            # one level (k_min = k_max): every box
        else:
            pick = (1.0 - hi) if lo is None else (lo if hi is None else lo - hi)
            term = r * pick.reshape(-1, 1, 1, 1)
        out = term if out is None else out + term
    if graph is not None:
        for node in graph.nodes:
            if node not in before:
                node.meta["ptec_fp32"] = MS_FP32
    return out
