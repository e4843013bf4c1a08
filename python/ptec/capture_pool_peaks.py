"""Peaks picked by comparing a value with its own max pool (issue 15):
`F.max_pool2d(h, 3, 1, 1) == h` (nn.MaxPool2d, max_pool1d, `torch.eq`,
`hmax != h`, `h >= hmax`; a heatmap's keypoints, CenterNet's NMS
`h * (hmax == h).float()`). On h's int8 grid two neighbours within half
a step of each other are the same code, so the pool's maximum equals
both and a plateau gave several peaks where torch's floats give one: a
smoothed 4 x 24 x 24 input heatmap, 99 extra peaks beside torch's 1,352
over 8 feeds (255 output steps at each), a sigmoid of a conv's output
63 extra and 2 missed of 708 (tests/python/test_pool_peaks.py).

The comparison is given capture_sign's OPERANDS, so exact_operands
computes both its operands in fp32 from the program's float inputs (h's
steps and the max pool, copied and marked fp32, within the same budget
as a sign's; the int8 steps stay for h's other readers): torch's peaks
up to fp32 rounding. Where that copy cannot be made (a chain past the
budget: a large CNN's heatmap, with the budget's compile note; a step
without an fp32 kernel) the comparison stays on the int8 grid. Under int8_io a pooled input itself arrives as int8 codes: the
same ties in fp32, so it is left as it was."""
from __future__ import annotations

from .capture_sign import MOVE_OPS, OPERANDS

# the pools whose fp32 copy these comparisons take (max_pool1d is a max_pool2d between views);
# no other comparison's operand copies one (capture_sign.COMPUTING_OPS)
POOLS = ("max_pool2d",)


def _root(g, name: str):
    """The node name reaches through moves (views, selections) only."""
    n = g.node(name)
    while n.op in MOVE_OPS and len(n.inputs) == 1:
        n = g.node(n.inputs[0])
    return n


def _pooled_value(g, c):
    """The value c compares with its own max pool (through moves), else None."""
    if c.op != "compare" or len(c.inputs) != 2 or "scalar" in c.attrs:
        return None
    roots = [_root(g, i) for i in c.inputs]
    for pool, other in (roots, roots[::-1]):
        if pool.op in POOLS and len(pool.inputs) == 1 and _root(g, pool.inputs[0]).name == other.name:
            return other
    return None


def pool_peaks_in_fp32(g, int8_io: bool = False) -> None:
    """Each comparison of a max pool with its own input marked for fp32
    operands (module doc); exact_operands makes the copies."""
    for c in g.nodes:
        value = None if c.attrs.get(OPERANDS) else _pooled_value(g, c)
        if value is None or (int8_io and value.op == "input"):
            continue
        c.attrs[OPERANDS] = POOLS       # (their chains may hold the pool: capture_sign._chain's `more`)
