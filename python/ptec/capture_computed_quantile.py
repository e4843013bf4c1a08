"""torch.quantile(x, q, dim) with q computed in the program (issue 15): its
positions q * (n - 1) are values, so no constant slice picks them. Linear
interpolation between the sorted values at floor(pos) and ceil(pos) is,
for every pos in [0, n - 1], the sum over i of sorted[i] * hat(pos - i)
with hat(d) = max(0, 1 - |d|) (the two neighbours get 1 - frac and frac,
every other position 0). So: x viewed as rows [K, n] (capture_rewrites'
_lines) sorted ascending, the weights [n, Q] = hat(q * (n - 1) - i), one LUT of q
per position i (on q's own grid: no int8 value spans the n positions), and
one matmul [K, n] x [n, Q]; then torch's layout, q's dim
first. q is clamped to [0, 1] first (torch raises outside it).

Only interpolation='linear' (the default) runs with a computed q: the
other rules pick by floor / round of a computed position, which the int8
rounding of q would move across a whole position. nanquantile with a
computed q is refused too (its NaN handling reorders by the count of
NaNs, a value)."""
from __future__ import annotations

from typing import List, Optional

import torch

from .capture_calls import refuse_call, _meta_shape
from .ir import Node


def computed_quantile_nodes(fn, bound, ins, by_name) -> Optional[List[Node]]:
    """The nodes of quantile(x, q) with q a traced float value (bound: the
    call's arguments by name), None when q is not one."""
    from .capture_rewrites import _lines, _Steps
    q = bound["q"]
    if not isinstance(q, torch.fx.Node) or by_name.get(q.name) is None:
        return None
    if getattr(q.meta.get("tensor_meta"), "dtype", None) != torch.float32:
        return None
    if fn.target in (torch.nanquantile, "nanquantile"):
        refuse_call(fn, "a q computed in the program runs for torch.quantile only (nanquantile's positions depend "
                    "on the count of NaNs)")
    if bound["interpolation"] != "linear":
        refuse_call(fn, f"interpolation={bound['interpolation']!r} with a q computed in the program: ptec runs "
                    "'linear' (the other rules round a computed position); a constant q runs every rule")
    shape, q_shape, out, dim = _meta_shape(bound["input"]), _meta_shape(q), _meta_shape(fn), bound.get("dim")
    if shape is None or q_shape is None or out is None or len(q_shape) > 1 or not shape or 0 in shape:
        return None
    if dim is not None and (not isinstance(dim, int) or isinstance(dim, bool) or not -len(shape) <= dim
                            < len(shape)):
        return None
    s = _Steps(fn.name)
    rows, k, n = _lines(s, ins[0], shape, None if dim is None else [dim])
    ordered = s("sort", [rows], dim=1, descending=False, k=None, pick=None, keepdim=False, rule=None)
    count = q_shape[0] if q_shape else 1
    qs = s("reshape", [s("clamp", [q.name], lo=0.0, hi=1.0)], target_shape=[1, count])
    # each position's weight a LUT of q itself (q's own grid, no wide int8 range of q * (n - 1) - i)
    hats = [s("elementwise", [qs], fn="math", name="hat", scale=float(n - 1), at=float(i)) for i in range(n)]
    weights = s("cat", hats, dim=0) if n > 1 else hats[0]           # [n, Q]
    picked = s("matmul", [ordered, weights])                        # [K, Q]
    if q_shape:
        picked = s("permute", [picked], dims=[1, 0])                # q's dim first, as torch
    s("reshape", [picked], target_shape=list(out))
    return s.done()
