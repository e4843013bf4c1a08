"""torch.histc(x, bins) with its default, data-dependent range (min == max:
torch takes x's own min and max) (issue 15): one `histc` node on the kernel
aten::histc.out (ptec only, src/kernels/portable/op_histc.c), in fp32
(attrs["fp32"], on the float values the program holds: its float input as
it is, or an int8 value dequantized on its grid), whatever the bins.

torch 1.13 computes the range in float32 (x's own minimum and maximum,
widened by one when equal), its edges by linspace(lo, hi, bins + 1) and an
element's bin as trunc((x - lo) / (e - lo) * bins) with e linspace's last
edge, counting only lo <= x <= e. Its vectorized linspace puts that last
edge a float32 step off hi when bins + 1 is a multiple of 16 (bins 15, 31,
47, ...): the maximum is then not counted. Steps that took hi itself as the
last edge (the chunked membership tables this module built for up to 4,096
bins) counted it, one count off torch; the kernel reproduces torch's last
edge (op_histc.c's last_edge), its order of the operations, the maximum in
the last bin, values outside dropped, counts added as float32 ones (exact
below 2^24 per bin), and fails the run on a range of x's own values that
is not finite (a NaN or an infinity in an fp32 x), where torch raises.
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
    # one aten::histc.out: torch's edges (its last linspace edge) and arithmetic in one step, any bins
    s("histc", [by_name[x.name].name], bins=int(bins), min=float(lo), max=float(hi))
    return s.done()
