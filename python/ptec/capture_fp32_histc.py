"""torch.histc(x, bins) with its default, data-dependent range (min == max:
torch takes x's own min and max) (issue 15), the positions in fp32.

torch 1.13's CPU kernel puts an element in bin
  pos = int((x - lo) / (hi - lo) * bins),  pos = bins - 1 where pos == bins
in float32 (lo, hi the range; lo - 1, hi + 1 when they are equal). The range
is computed in the program, so the bins' edges fall between int8 codes of
no fixed grid and an int8 position ties where torch's float32 one does not.
Here the same arithmetic runs in fp32 (attrs["fp32"], portable kernels): x's
max and -max(-x) by max pools, the equal-range case by a 0/1 clamp, then
(x - lo) / (hi - lo) * bins with torch's operation order (the other order,
(x - lo) * bins / (hi - lo), rounds to another bin at some edges: x a
tenth on [-3, 3] in 100 bins); an element is in
bin k when u - k >= 0 and, below the last bin, not u - (k + 1) >= 0 (the
sign of a float32 difference is the sign of the exact one, so this is
trunc(u) == k exactly, the last bin taking u >= bins - 1 as torch's clamp).
The memberships (bools) are counted per bin in int64 (their int64 copy
summed along the elements: aten::sum.IntList_out, exact for any numel),
then converted into float32 (exact below 2^24): torch's float counts. More
than CHUNK_BINS bins (up to MAX_BINS): the bins in chunks of CHUNK_BINS,
each chunk's [k, n] membership tables counted on their own (so no step
holds more than CHUNK_BINS rows of n), the int64 counts joined in order. So
each element's bin is torch's for the values the program holds (its
dequantized int8 input), and the counts are torch's for any number of
elements. More than MAX_BINS bins (where those steps would grow the
program with the bins): one `histc` node on the kernel aten::histc.out
(ptec only, src/kernels/portable/op_histc.c), the same float32 arithmetic
(x's own minimum and maximum, widened by one when equal; torch's order of
the operations; the maximum in the last bin; values outside and NaN
dropped) in one step, counts added as float32 ones as torch's (exact below
2^24 per bin); a range of x's own values that is not finite (a NaN or an
infinity in an fp32 x) fails the run, where torch raises.
"""
from __future__ import annotations

from typing import List, Optional

import numpy as np
import torch
import torch.fx

from .capture_calls import _meta_shape
from .capture_rewrites import Fp32Steps
from .ir import Node

FP32_REASON = "histc's bin positions over a range computed in the program, in fp32 (torch's float32 arithmetic)"
MAX_BINS = 4096          # the program's constants and steps grow with the bins: beyond, aten::histc.out
CHUNK_BINS = 256        # bins whose [bins, n] membership tables one step holds


class _Fp32(Fp32Steps):
    reason = FP32_REASON


def fp32_histc_nodes(fn: torch.fx.Node, ins, by_name) -> Optional[List[Node]]:
    """The steps of histc(x, bins) over x's own range, else None."""
    if not (fn.op == "call_function" and fn.target is torch.histc) and not (fn.op == "call_method"
                                                                           and fn.target == "histc"):
        return None
    names = ["input", "bins", "min", "max"]
    got = dict(zip(names, fn.args))
    for k, v in fn.kwargs.items():
        if k in got or k not in names:
            return None
        got[k] = v
    x, bins, lo, hi = got.get("input"), got.get("bins", 100), got.get("min", 0), got.get("max", 0)
    meta = x.meta.get("tensor_meta") if isinstance(x, torch.fx.Node) else None
    shape = _meta_shape(x) if meta is not None else None
    if shape is None or meta.dtype != torch.float32 or not isinstance(bins, int) or isinstance(bins, bool) \
            or bins < 1 or isinstance(lo, bool) or isinstance(hi, bool) \
            or not isinstance(lo, (int, float)) or not isinstance(hi, (int, float)) or lo != hi:
        return None                     # a range given: capture_elementwise_math's LUTs
    n = int(np.prod(shape)) if shape else 1
    if n < 1:
        return None
    s = _Fp32(fn.name)
    src = by_name[x.name].name
    if bins > MAX_BINS:
        # one aten::histc.out (ptec only, op_histc.c): torch's arithmetic in one step, whatever the bins
        s("histc", [src], bins=int(bins), min=float(lo), max=float(hi))
        return s.done()
    col = s("reshape", [src], target_shape=[1, 1, n, 1])
    pool = dict(kernel=[n, 1], stride=[n, 1], padding=[0, 0], dilation=[1, 1], ceil_mode=False)
    top = s("reshape", [s("max_pool2d", [col], **pool)], target_shape=[1, 1])
    neg = s("mul", [col, s.const(np.full((1, 1, 1, 1), -1.0))])
    low = s("mul", [s("reshape", [s("max_pool2d", [neg], **pool)], target_shape=[1, 1]), s.const([[-1.0]])])
    # torch's lo - 1, hi + 1 for an equal range: e = 1 there, else 0 (a nonzero width of fp32 values
    # of int8 codes is far above 1e-30, so 1 - width * 1e30 clamps to 0; an equal range gives 1)
    e = s("clamp", [s("sub", [s.const([[1.0]]), s("mul", [s("sub", [top, low]), s.const([[1.0e30]])])])],
          lo=0.0, hi=1.0)
    low, top = s("sub", [low, e]), s("add", [top, e])
    row = s("reshape", [src], target_shape=[1, n])
    u = s("mul", [s("div", [s("sub", [row, low]), s("sub", [top, low])]), s.const([[float(bins)]])])
    parts = []
    for start in range(0, bins, CHUNK_BINS):
        # bins in chunks of at most CHUNK_BINS: each chunk's [k, n] tables die after its counts
        ks = np.arange(start, min(start + CHUNK_BINS, bins), dtype=np.float32).reshape(-1, 1)
        above = s.int8("compare", [s("sub", [u, s.const(ks)])], kind="ge", scalar=0.0)
        if bins > 1:
            nxt = (ks + 1).astype(np.float32)
            if start + len(ks) == bins:
                nxt[-1, 0] = np.float32(3.0e38)                 # the last bin: no upper edge
            beyond = s.int8("compare", [s("sub", [u, s.const(nxt)])], kind="ge", scalar=0.0)
            above = s.int8("logical", [above, s.int8("logical", [beyond], kind="not")], kind="and")
        ones = s.int8("bool_to", [above], dtype="int64")
        parts.append(s.int8("int_math", [ones], kind="sum", dtype="int64", dims=[1], keepdim=False))
    counts = parts[0] if len(parts) == 1 else s.int8("int_math", parts, kind="cat", dtype="int64", dim=0)
    s("reshape", [s.int8("index_to_float", [counts])], target_shape=list(_meta_shape(fn)))
    return s.done()
