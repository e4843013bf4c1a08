"""ptec::roi_align.out's numpy reference (src/kernels/portable/op_roi_align.c):
torchvision 0.14's CPU roi_align / ps_roi_align forward in float32, every
step rounded where the C kernel rounds it (np.float32 scalars and arrays),
so the two agree bit for bit. A box the kernel refuses at run time raises
RoiAlignError with the kernel's reason."""
from __future__ import annotations

import math

import numpy as np

F32 = np.float32
MAX_SAMPLES = 1 << 20


class RoiAlignError(ValueError):
    pass


def _grid(sampling: int, size: np.float32, pooled: int) -> int:
    """The fixed ratio or ceil(size / pooled), signed (a reversed aligned box's is negative: no samples)."""
    if sampling > 0:
        return sampling
    g = np.ceil(F32(size / F32(pooled)))
    if not -MAX_SAMPLES <= g <= MAX_SAMPLES:
        raise RoiAlignError("a box needs more than 2^20 samples per bin (sampling_ratio <= 0)")
    return int(g)


def _taps(y: np.float32, x: np.float32, h: int, w: int):
    """(flat offsets, weights) of one sample, or None when it is empty."""
    if y < -1.0 or y > F32(h) or x < -1.0 or x > F32(w):
        return None
    lows = []
    for v, size in ((y, h), (x, w)):
        v = F32(0.0) if v <= 0 else v
        low = int(v)
        if low >= size - 1:
            low = high = size - 1
            v = F32(low)
        else:
            high = low + 1
        lows.append((v, low, high))
    (y, yl, yh), (x, xl, xh) = lows
    ly, lx = F32(y - F32(yl)), F32(x - F32(xl))
    hy, hx = F32(1.0 - float(ly)), F32(1.0 - float(lx))      # torchvision's `1. - ly`: in double, then float
    weights = (F32(hy * hx), F32(hy * lx), F32(ly * hx), F32(ly * lx))
    return (yl * w + xl, yl * w + xh, yh * w + xl, yh * w + xh), weights


def roi_align(x, rois, spatial_scale: float, ph: int, pw: int, sampling: int, aligned: bool,
              position_sensitive: bool = False) -> np.ndarray:
    x = np.ascontiguousarray(x, F32)
    rois = np.asarray(rois, F32)
    if rois.shape[1] == 4:                  # image 0's boxes (the kernel reads the index as 0)
        rois = np.concatenate([np.zeros((rois.shape[0], 1), F32), rois], 1)
    n, c, h, w = x.shape
    ps = bool(position_sensitive)
    cout = c // (ph * pw) if ps else c
    out = np.zeros((rois.shape[0], cout, ph, pw), F32)
    scale, off = F32(spatial_scale), F32(0.5 if aligned else 0.0)
    planes = x.reshape(n, c, h * w)
    with np.errstate(all="ignore"):
        for k, row in enumerate(rois):
            if not (row[0] > -1.0 and row[0] < F32(n)) or int(row[0]) >= n:
                raise RoiAlignError("a box's batch index is outside the input's batch")
            plane = planes[int(row[0])]
            sw, sh = F32(row[1] * scale - off), F32(row[2] * scale - off)
            ew, eh = F32(row[3] * scale - off), F32(row[4] * scale - off)
            size_w, size_h = F32(ew - sw), F32(eh - sh)
            if not all(math.isfinite(float(v)) for v in (sw, sh, size_w, size_h)):
                raise RoiAlignError("a box is not finite")
            if not aligned:
                size_w, size_h = max(size_w, F32(1.0)), max(size_h, F32(1.0))
            bin_h, bin_w = F32(size_h / F32(ph)), F32(size_w / F32(pw))
            gh, gw = _grid(sampling, size_h, ph), _grid(sampling, size_w, pw)
            if abs(gh * gw) > MAX_SAMPLES:
                raise RoiAlignError("a box needs more than 2^20 samples per bin (sampling_ratio <= 0)")
            count = F32(gh * gw) if ps else F32(max(gh * gw, 1))
            for p in range(ph):
                for q in range(pw):
                    chans = (np.arange(cout) * (ph * pw) + p * pw + q) if ps else np.arange(c)
                    src = plane[chans]                                 # [C', H*W]
                    acc = np.zeros(cout, F32)
                    for iy in range(gh):
                        sy = F32(F32(sh + F32(F32(p) * bin_h)) + F32(F32(F32(F32(iy) + F32(0.5)) * bin_h) / F32(gh)))
                        for ix in range(gw):
                            sx = F32(F32(sw + F32(F32(q) * bin_w))
                                     + F32(F32(F32(F32(ix) + F32(0.5)) * bin_w) / F32(gw)))
                            t = _taps(sy, sx, h, w)
                            if t is None and ps:
                                acc = acc + F32(0.0)
                                continue
                            at, wt = t if t is not None else ((0, 0, 0, 0), (F32(0.0),) * 4)
                            s = (wt[0] * src[:, at[0]] + wt[1] * src[:, at[1]]) + wt[2] * src[:, at[2]]
                            acc = acc + (s + wt[3] * src[:, at[3]])
                    # ps's empty grid: 0 / 0, the kernel's one quiet NaN (0x7FC00000)
                    out[k, :, p, q] = acc / count if count != 0 else np.float32(np.nan)
    return out
