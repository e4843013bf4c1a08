"""torchvision.ops.roi_align / RoIAlign, ps_roi_align, roi_pool / RoIPool,
ps_roi_pool, deform_conv2d / DeformConv2d and torch.istft written in the fx
graph as calls ptec runs, before the graph is read (issue 15). Boxes: a [K, 5]
tensor, or a list of one [K, 4] tensor per image (_boxes_arg).
torchvision's ops are traced as one call each (fx autowrap, also when
spelled `torchvision.ops.roi_align(...)`); the forms no rewrite covers
are then refused in one line naming them (REFUSED says why). nms and
batched_nms: _Nms's doc (at most NMS_MAX boxes).

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

import sys

import torch
import torch.fx
import torch.nn.functional as F

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
    return tuple(getattr(ops, n) for n in LEAVES if hasattr(ops, n)), [ops]

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
    """torchvision's deform_conv2d (groups and offset_groups 1): each tap k =
    (ki, kj) of output (i, j) reads x at (i * sh - ph + ki * dh + dy,
    j * sw - pw + kj * dw + dx), (dy, dx) = offset[:, 2k], offset[:, 2k + 1];
    its bilinear read is 0 beyond -1 and the size, the neighbours outside the
    map 0: F.grid_sample with zero padding and align_corners False is that
    rule exactly. The samples (times mask[:, k] when given) are the columns
    of the convolution: one 1x1 conv2d by the weight viewed [Cout, Cin*kh*kw]."""

    def __init__(self, n, cin, h, w, ho, wo, kh, kw, stride, padding, dilation, weight, bias, masked):
        super().__init__()
        self.dims, self.masked = (n, cin, h, w, ho, wo, kh * kw), masked
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
        pairs = offset.view(n, k, 2, ho, wo)
        py = pairs[:, :, 0] + self.ys                  # [N, K, Ho, Wo] rows read
        px = pairs[:, :, 1] + self.xs
        grid = torch.stack([(px * 2.0 + 1.0) / float(w) - 1.0, (py * 2.0 + 1.0) / float(h) - 1.0], 4)
        v = F.grid_sample(x, grid.reshape(n, k * ho, wo, 2), "bilinear", "zeros", False)    # [N, Cin, K*Ho, Wo]
        v = v.reshape(n, cin, k, ho, wo)
        if self.masked:
            v = v * mask.view(n, 1, k, ho, wo)
        return F.conv2d(v.reshape(n, cin * k, ho, wo), self.weight, self.bias)


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
    if cin_g != cin or os_ != [n, 2 * kh * kw, ho, wo] or (mask is not None and _shape(mask) != [n, kh * kw, ho, wo]):
        return False        # weight groups or offset groups: stays the call, refused by name
    module = _DeformConv(n, cin, h, w, ho, wo, kh, kw, pairs[0], pairs[1], pairs[2], weight, bias, mask is not None)
    _inline(gm, fn, module, [x, offset] + ([mask] if mask is not None else []), DCN_FP32)
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
    total = n_fft + hop * (frames - 1)
    env = torch.zeros(total, dtype=torch.float64)
    for t in range(frames):
        env[t * hop:t * hop + n_fft] += full * full
    start = n_fft // 2 if center else 0
    if length is not None:
        end = min(start + int(length), total)
    else:
        end = total - n_fft // 2 if center else total
    if end <= start or bool((env[start:end].abs() < 1e-11).any()):
        return None
    scale = full * (n_fft ** 0.5 if normalized else 1.0)
    pad = int(length) - (end - start) if length is not None else 0
    return scale, total, start, end, 1.0 / env[start:end], pad


class _Istft(torch.nn.Module):
    def __init__(self, n_fft, hop, frames, plan, batched):
        super().__init__()
        scale, total, start, end, inv, pad = plan
        self.n_fft, self.hop, self.frames, self.total = n_fft, hop, frames, total
        self.start, self.end, self.pad, self.batched = start, end, pad, batched
        self.register_buffer("scale", scale.to(torch.float32).view(n_fft, 1))
        self.register_buffer("inv", inv.to(torch.float32).view(1, end - start))

    def forward(self, spec):
        if not self.batched:
            spec = spec.unsqueeze(0)
        frames = torch.fft.irfft(spec, n=self.n_fft, dim=1) * self.scale       # [B, n_fft, T]
        y = F.fold(frames, (1, self.total), (1, self.n_fft), stride=(1, self.hop))
        y = y.reshape(-1, self.total)[:, self.start:self.end] * self.inv
        if self.pad > 0:
            y = F.pad(y, (0, self.pad))
        return y if self.batched else y.squeeze(0)


def _istft(gm: torch.fx.GraphModule, fn: torch.fx.Node) -> bool:
    """torch.istft / Tensor.istft of a onesided complex spectrum with a
    constant window: torch's definition, irfft of each frame (n = n_fft),
    times the window (and sqrt(n_fft) when normalized), overlap-added by
    F.fold, the kept range divided by the window envelope, zeros after it
    up to `length`. Anything else stays the call (refused by name)."""
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
    window = got.get("window")
    if window is not None:
        window = _constant(gm, window)
        if window is None or list(window.shape) != [win_length]:
            return False
    if (got.get("return_complex") or onesided is False or shape[-2] != n_fft // 2 + 1 or not isinstance(hop, int)
            or not isinstance(win_length, int) or win_length > n_fft or not isinstance(center, bool)
            or not isinstance(normalized, bool) or not (length is None or isinstance(length, int))):
        return False
    plan = istft_plan(n_fft, hop, win_length, window, shape[-1], center, normalized, length)
    if plan is None:
        return False
    _inline(gm, fn, _Istft(n_fft, hop, shape[-1], plan, len(shape) == 3), [spec], None)
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


NMS_MAX = 256
NMS_FP32 = "nms's box areas, overlaps, priorities and keep/suppress recurrence, computed in fp32"
NMS_LARGE = ("torchvision.ops.{name} is not supported on {k} boxes: ptec unrolls its keep/suppress recurrence "
             "over every box, at most 256; filter the boxes first (topk of the scores)")
NMS_STEEP = 2.0 ** 100


def _nms_step(d):
    """1.0 where d > 0, else 0.0: a nonzero fp32 difference here is far
    above 2^-100 (the product overflows to inf, clamped, for large ones)."""
    return torch.clamp(d * NMS_STEEP, 0.0, 1.0)


def _pick_max(a, b):
    """max(a, b) exactly (no fp32 maximum kernel): a 0/1 step picks one of
    them by products with 0 and 1 (exact)."""
    m = _nms_step(a - b)
    return a * m + b * (1.0 - m)


def _pick_min(a, b):
    m = _nms_step(a - b)
    return b * m + a * (1.0 - m)


class _Nms(torch.nn.Module):
    """torchvision's nms (its CPU kernel): order = the stable descending
    sort of the scores; area = (x2 - x1) * (y2 - y1); for a kept box i and
    a later j, inter = max(0, min(x2) - max(x1)) * max(0, min(y2) - max(y1)),
    iou = inter / (area_i + area_j - inter); j is suppressed when iou > t.
    Here without moving boxes: prio[j, i] = 1 when j comes before i in that
    order (s_j > s_i, or equal scores and j < i), A = prio * (iou > t), and
    keep = 1 - step(sum_j A[j, i] keep_j) iterated K times from all ones
    (the box at sorted position p is final after p + 1 steps: it reads only
    boxes before it). The kept boxes in sorted order: rank_i = sum_j
    prio[j, i], kept_sorted[p] = sum_i keep_i * [rank_i == p]; the output
    is the argsort's indices selected by it (a bound-dynamic int64)."""

    def __init__(self, k, t, offsets):
        super().__init__()
        self.k, self.t, self.offsets = k, float(t), offsets
        idx = torch.arange(k, dtype=torch.float32)
        self.register_buffer("before", (idx.view(k, 1) < idx.view(1, k)).to(torch.float32))    # j < i
        self.register_buffer("pos", idx.view(1, k))
        self.register_buffer("one", torch.ones(1, k))

    def forward(self, boxes, scores, idxs=None):
        k = self.k
        if self.offsets:
            # torchvision's coordinate trick: each class's boxes moved by idx * (max coordinate + 1)
            boxes = boxes + (idxs.float() * (boxes.max() + 1.0)).view(k, 1)
        x1, y1, x2, y2 = boxes[:, 0:1], boxes[:, 1:2], boxes[:, 2:3], boxes[:, 3:4]
        area = (x2 - x1) * (y2 - y1)                                       # [K, 1]
        w = torch.clamp(_pick_min(x2, x2.t()) - _pick_max(x1, x1.t()), min=0.0)
        h = torch.clamp(_pick_min(y2, y2.t()) - _pick_max(y1, y1.t()), min=0.0)
        inter = w * h                                                      # [K, K]
        union = area + area.t() - inter
        # a zero union (two boxes of no area): torch's 0 / 0 is NaN, never above t; here 0 / 1
        iou = inter / (union + (1.0 - _nms_step(union) - _nms_step(0.0 - union)))
        s = scores.view(k, 1)
        d = s - s.t()                                                      # [j, i]: s_j - s_i
        higher = _nms_step(d)
        equal = 1.0 - higher - _nms_step(0.0 - d)
        prio = higher + equal * self.before
        a = prio * _nms_step(iou - self.t)                                 # [j, i]: j suppresses i if kept
        keep = self.one.t()                                                # [K, 1] over j
        for _ in range(k):
            keep = 1.0 - _nms_step((a * keep).sum(0, keepdim=True)).t()
        rank = prio.sum(0, keepdim=True).t()                               # [K, 1] over i
        diff = rank - self.pos                                             # [i, p]
        at = _nms_step(0.25 - diff * diff)     # ranks are whole; ptec's fp32 sum (a mean times K) may round
        kept = (at * keep).sum(0)                                          # [K] over p
        order = torch.argsort(scores, descending=True)
        return order[kept > 0.5]


def _nms(gm: torch.fx.GraphModule, fn: torch.fx.Node) -> bool:
    """torchvision.ops.nms(boxes [K, 4], scores [K], t) and batched_nms(boxes,
    scores, idxs, t): _Nms, for K at most NMS_MAX (else refused in one line)."""
    if fn.op != "call_function" or not any(_tv_fn(n) is not None and fn.target is _tv_fn(n)
                                           for n in ("nms", "batched_nms")):
        return False
    batched = fn.target is _tv_fn("batched_nms")
    names = ("boxes", "scores", "idxs", "iou_threshold") if batched else ("boxes", "scores", "iou_threshold")
    if len(fn.args) > len(names) or set(fn.kwargs) - set(names):
        return False
    got = dict(zip(names, fn.args))
    got.update(fn.kwargs)
    boxes, scores, t, idxs = got.get("boxes"), got.get("scores"), got.get("iou_threshold"), got.get("idxs")
    bs, ss = _shape(boxes), _shape(scores)
    if (not isinstance(boxes, torch.fx.Node) or not isinstance(scores, torch.fx.Node) or bs is None or ss is None
            or len(bs) != 2 or bs[1] != 4 or ss != bs[:1] or not isinstance(t, (int, float)) or isinstance(t, bool)
            or (batched and (not isinstance(idxs, torch.fx.Node) or _shape(idxs) != bs[:1]))):
        return False
    if bs[0] > NMS_MAX:
        raise UnsupportedOperator(NMS_LARGE.format(name=fn.target.__name__, k=bs[0]))
    if bs[0] == 0:
        return False
    out = _inline(gm, fn, _Nms(bs[0], t, batched), [boxes, scores] + ([idxs] if batched else []), NMS_FP32)
    # the argsort (of the scores as the program has them: stable, as the fp32 priorities), the 0/1
    # compare and the int64 selection run outside fp32 (exact: integers, 0 and 1)
    sel = out.args[1]
    for node in (out, sel, out.args[0]):
        node.meta.pop("ptec_fp32", None)
    if batched:
        for node in idxs.users:         # idxs.float(): ptec's integer-to-float conversion, not an fp32 layer
            if node.op == "call_method" and node.target == "float":
                node.meta.pop("ptec_fp32", None)
    return True


REFUSED = {  # torchvision call name: why (each refused in one line by _refused)
    "nms": "ptec rewrites it only for boxes [K, 4] and scores [K] and a constant threshold",
    "batched_nms": "ptec rewrites it only for boxes [K, 4], scores and idxs [K] and a constant threshold",
    "ps_roi_align": "ptec rewrites it only with channels a multiple of the bins",
    "ps_roi_pool": "ptec rewrites it only with channels a multiple of the bins",
    "deform_conv2d": ("ptec rewrites it only with groups and offset_groups 1 and a constant weight "
                      "(sampling at computed offsets, then a convolution of the samples)"),
}


MULTISCALE = ("torchvision.ops.MultiScaleRoIAlign is not supported in this call: ptec runs it only on a dict of "
              "feature maps made in the model, a list of box tensors and constant image_shapes (the FPN level "
              "scales, from static map and image sizes); pass the image sizes as Python numbers")


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


def _scale_of(size: int, image: int) -> float:
    # torchvision's _infer_scale: 2 ** round(log2(size / image)) (the height)
    return 2.0 ** float(torch.tensor(float(size) / float(image)).log2().round())


def multiscale_forward(m, args, kwargs):
    """MultiScaleRoIAlign's output traced as torch ops, or None when m is
    not one or its call is not of a form rewritten here (a dict of feature
    maps, box tensors, constant image shapes). The scales (torchvision's
    _setup_scales: from the static map and image sizes) and the level
    thresholds are constants; every level's roi_align runs on all boxes and
    each box keeps its own level's, picked by 0/1 steps of area - the
    largest fp32 area below each level (exact: _level_areas), in fp32."""
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
    if not isinstance(x, dict) or not isinstance(boxes, (list, tuple)) or not boxes \
            or not isinstance(shapes, (list, tuple)) or not shapes \
            or any(isinstance(s, torch.fx.Proxy) or any(isinstance(i, torch.fx.Proxy) for i in s) for s in shapes):
        return None
    feats = [v for k, v in x.items() if k in m.featmap_names]
    if not feats:
        return None
    if m.scales is not None and m.map_levels is not None:
        scales, mapper = list(m.scales), m.map_levels
        k_min, k_max, s0, lvl0, eps = mapper.k_min, mapper.k_max, mapper.s0, mapper.lvl0, mapper.eps
    else:
        top = max(int(s[0]) for s in shapes)
        scales = [_scale_of(int(f.shape[-2]), top) for f in feats]
        k_min = int(-torch.log2(torch.tensor(scales[0], dtype=torch.float32)).item())
        k_max = int(-torch.log2(torch.tensor(scales[-1], dtype=torch.float32)).item())
        s0, lvl0, eps = m.canonical_scale, m.canonical_level, 1e-6
    size, sr = list(m.output_size), m.sampling_ratio
    pooled = [ops.roi_align(f, list(boxes), size, s, sr) for f, s in zip(feats, scales)]
    if len(feats) == 1:
        return pooled[0]
    thresholds = _level_areas(k_min, k_max, float(s0), float(lvl0), float(eps))
    if len(thresholds) + 1 != len(feats):
        return None
    graph = next((p.tracer.graph for p in pooled if isinstance(p, torch.fx.Proxy)), None)
    before = set(graph.nodes) if graph is not None else set()
    b = torch.cat(list(boxes), 0) if len(boxes) > 1 else boxes[0]
    area = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    # level index j (0 .. L-1) of each box: clamp(level, k_min, k_max) - k_min; above[j] = 1.0 when level >= k_min + j
    above = [None] + [_step(area - a) for a in thresholds] + [None]
    out = None
    for j, r in enumerate(pooled):
        lo, hi = above[j], above[j + 1]
        pick = (1.0 - hi) if lo is None else (lo if hi is None else lo - hi)
        term = r * pick.reshape(-1, 1, 1, 1)
        out = term if out is None else out + term
    if graph is not None:
        for node in graph.nodes:
            if node not in before:
                node.meta["ptec_fp32"] = MS_FP32
    return out
