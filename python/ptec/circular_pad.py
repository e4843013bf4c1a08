"""Pads that are slices: padding_mode="circular" of a convolution or of
F.pad, and the negative entries of a constant pad, as ops ptec already
lowers.

torch pads circularly by wrapping: along a dim of size S, the `lo` entries
in front are the last `lo` of the input and the `hi` behind are its first
`hi`. That is a cat of two slices of the input around it, one dim at a
time, the last dim first as F.pad orders its pads. Every value is an input
value, so on the int8 grid the slices and joins copy bytes and the padded
tensor is exact.
"""
from __future__ import annotations

from typing import List, Optional, Sequence

from .ir import Node


def circular_pad_nodes(name: str, x: str, pads: Sequence[int], shape: Sequence[int], what: str,
                       error) -> List[Node]:
    """Nodes padding node x (shape `shape`) circularly by `pads` (F.pad's
    order: [lo, hi] of the last dim, then of the one before ...); the last
    node is `name`. `error` in one line naming the layer as `what` when a
    pad is wider than its dim (torch refuses that too)."""
    nodes: List[Node] = []
    cur = x
    todo = [(len(shape) - 1 - k, int(pads[2 * k]), int(pads[2 * k + 1])) for k in range(len(pads) // 2)]
    todo = [t for t in todo if t[1] or t[2]]
    for j, (dim, lo, hi) in enumerate(todo):
        size = int(shape[dim])
        if lo > size or hi > size or lo < 0 or hi < 0:
            raise error(f"{what}: circular padding {max(lo, hi)} is wider than the dim of size {size}")
        parts = []
        if lo:
            nodes.append(Node(f"{name}_wrap{dim}_lo", "slice", [cur], dict(dim=dim, start=size - lo, end=size)))
            parts.append(nodes[-1].name)
        parts.append(cur)
        if hi:
            nodes.append(Node(f"{name}_wrap{dim}_hi", "slice", [cur], dict(dim=dim, start=0, end=hi)))
            parts.append(nodes[-1].name)
        out = name if j == len(todo) - 1 else f"{name}_wrap{dim}"
        nodes.append(Node(out, "cat", parts, dict(dim=dim)))
        cur = out
    return nodes


def sliced_pad_nodes(name: str, what: str, attrs: dict, x: str, shape, error) -> Optional[List[Node]]:
    """A pad (a pad node's attrs: F.pad, nn.ZeroPad2d / ConstantPad*d) of
    node x that a pad node does not take, as slices: negative entries of a
    constant pad (a crop of that dim) and mode circular (circular_pad_nodes);
    the last node is `name`. None when one pad node does it."""
    pads, mode = [int(p) for p in attrs["pad"]], attrs.get("mode", "constant")
    negative = mode == "constant" and any(p < 0 for p in pads)
    if shape is None or not (negative or mode == "circular"):
        return None
    nodes: List[Node] = []
    cur, shape = x, [int(v) for v in shape]
    for k in range(len(pads) // 2):
        dim, lo, hi = len(shape) - 1 - k, pads[2 * k], pads[2 * k + 1]
        if negative and (lo < 0 or hi < 0):
            start, end = max(-lo, 0), shape[dim] + min(hi, 0)
            nodes.append(Node(f"{name}_crop{dim}", "slice", [cur], dict(dim=dim, start=start, end=end)))
            cur, shape[dim] = nodes[-1].name, end - start
    rest = [max(p, 0) for p in pads]
    if not any(rest):
        return nodes + [Node(name, "identity", [cur])]
    if mode == "circular":
        return nodes + circular_pad_nodes(name, cur, rest, shape, what, error)
    return nodes + [Node(name, "pad", [cur], dict(attrs, pad=rest))]
