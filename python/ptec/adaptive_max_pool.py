"""nn.AdaptiveMaxPool2d / 1d whose output does not divide the input, as ops
ptec already lowers (capture's stand-in).

torch's adaptive window i of an axis of size L pooled to O runs from
floor(i * L / O) to ceil((i + 1) * L / O): windows of differing sizes that
may overlap, which no one max pool has. A max over a rectangle is the max
over its rows of the max over its columns, so the pool goes axis by axis:
along W, each output column is a slice of its window's columns and a max
pool as wide as the slice, the columns joined along W; then along H the
same over rows. An axis the output divides is one max pool of kernel =
stride = L / O. Every value is an input value (a max picks one), so in
int8 the slices, pools and joins pass bytes through and equal torch's
max exactly on the input's grid.
"""
from __future__ import annotations

from typing import List, Sequence

from .ir import Node


def windows(size: int, out: int) -> List[tuple]:
    """torch's adaptive windows [start, end) of an axis of `size` pooled to `out`."""
    return [((i * size) // out, -((-(i + 1) * size) // out)) for i in range(out)]


def _pool(name: str, x: str, k: int, dim: int) -> Node:
    kernel = [1, k] if dim == 3 else [k, 1]
    return Node(name, "max_pool2d", [x], dict(kernel=kernel, stride=kernel, padding=[0, 0],
                                              dilation=[1, 1], ceil_mode=False))


def _axis(name: str, x: str, size: int, out: int, dim: int) -> List[Node]:
    """Adaptive max of dim (2: H, 3: W) of 4-D node x; the last node is `name`."""
    if size % out == 0:
        return [_pool(name, x, size // out, dim)]
    nodes: List[Node] = []
    parts = []
    for i, (start, end) in enumerate(windows(size, out)):
        cut = f"{name}_w{i}"
        nodes.append(Node(cut, "slice", [x], dict(dim=dim, start=start, end=end)))
        nodes.append(_pool(f"{cut}_max", cut, end - start, dim))
        parts.append(f"{cut}_max")
    return nodes + [Node(name, "cat", parts, dict(dim=dim))]


def adaptive_max_pool_nodes(name: str, x: str, hw: Sequence[int], out: Sequence[int]) -> List[Node]:
    """Adaptive max pool of 4-D node x of spatial size hw to `out` [oh, ow];
    the last node is `name`."""
    (h, w), (oh, ow) = hw, out
    nodes: List[Node] = []
    if ow != w:
        nodes += _axis(name if oh == h else f"{name}_cols", x, int(w), int(ow), 3)
        x = nodes[-1].name
    if oh != h:
        nodes += _axis(name, x, int(h), int(oh), 2)
    if not nodes:
        nodes.append(Node(name, "identity", [x]))
    return nodes
