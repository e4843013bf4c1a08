"""F.grid_sample and F.affine_grid (issue 15).

grid_sample reads its input at positions a tensor gives, so no int8 layer
computes it: it is one `grid_sample` node, which the portable fp32
fallback runs on aten::grid_sampler_2d.out, the image and the grid
dequantized where they are int8 and the result quantized (docs/aot.md). The grid
may be a program input, a constant, or computed in the program.

affine_grid(theta, [N, C, H, W]) is the constant base grid (x, y, 1) of
every output pixel times theta: a linear layer of theta [N, 2, 3] whose
weight is the base grid [H*W, 3] ([N, 2, H*W]), transposed and viewed as
[N, H, W, 2]. A constant theta gives a constant grid (torch's own values).
Each handler returns None for a call it does not cover (5-D sizes, an
unknown mode), which then stays an unsupported node, refused by name."""
from __future__ import annotations

from typing import List, Optional

import numpy as np
import torch
import torch.nn.functional as F

from .ir import Node

MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
PADDINGS = {"zeros": 0, "border": 1, "reflection": 2}


def _arg(fn: torch.fx.Node, i: int, key: str, default=None):
    return fn.args[i] if len(fn.args) > i else fn.kwargs.get(key, default)


def _shape(a) -> Optional[List[int]]:
    meta = a.meta.get("tensor_meta") if isinstance(a, torch.fx.Node) else None
    return [int(s) for s in meta.shape] if meta is not None and hasattr(meta, "shape") else None


def grid_sample_node(fn: torch.fx.Node, ins: List[str]) -> Optional[Node]:
    """F.grid_sample(x, grid, mode, padding_mode, align_corners) of a 4-D x
    as one grid_sample node; align_corners None is torch's default, False."""
    mode, padding = _arg(fn, 2, "mode", "bilinear"), _arg(fn, 3, "padding_mode", "zeros")
    x, grid = _arg(fn, 0, "input"), _arg(fn, 1, "grid")
    if (mode not in MODES or padding not in PADDINGS or len(ins) != 2 or not isinstance(grid, torch.fx.Node)
            or len(_shape(x) or []) != 4 or len(_shape(grid) or []) != 4):
        return None
    return Node(fn.name, "grid_sample", [x.name, grid.name],
                dict(mode=MODES[mode], padding=PADDINGS[padding], align_corners=bool(_arg(fn, 4, "align_corners"))))


def base_grid(h: int, w: int, align_corners: bool) -> np.ndarray:
    """[H*W, 3] rows (x, y, 1) of affine_grid's base: linspace(-1, 1) per
    axis, scaled by (S - 1) / S without align_corners; 0 on a size-1 axis."""
    def axis(s):
        if s <= 1:
            return np.zeros(max(s, 0))
        r = np.linspace(-1.0, 1.0, s)
        return r if align_corners else r * (s - 1) / s
    ys, xs = np.meshgrid(axis(h), axis(w), indexing="ij")
    return np.stack([xs.ravel(), ys.ravel(), np.ones(h * w)], 1).astype(np.float32)


def affine_grid_nodes(fn: torch.fx.Node, ins: List[str], by_name) -> Optional[List[Node]]:
    """affine_grid of a 4-D size (its entries may be traced, as x.size(0):
    the sizes come from the traced output [N, H, W, 2])."""
    size, align = _arg(fn, 1, "size"), bool(_arg(fn, 2, "align_corners"))
    theta, shape = _arg(fn, 0, "theta"), _shape(fn)
    if (not isinstance(size, (list, tuple)) or len(size) != 4 or shape is None or len(shape) != 4
            or _shape(theta) != [shape[0], 2, 3] or len(ins) != 1):
        return None
    n, h, w = shape[:3]
    source = by_name.get(ins[0])
    if source is not None and source.op == "constant":
        value = F.affine_grid(torch.as_tensor(np.asarray(source.attrs["value"], np.float32)), [n, 1, h, w],
                              align_corners=align)
        return [Node(fn.name, "constant", [], dict(value=value.numpy().astype(np.float32)))]
    rows = Node(f"{fn.name}_rows", "linear", ins[:1], dict(weight=base_grid(h, w, align), bias=None))
    xy = Node(f"{fn.name}_xy", "permute", [rows.name], dict(dims=[0, 2, 1]))
    return [rows, xy, Node(fn.name, "reshape", [xy.name], dict(target_shape=[n, h, w, 2]))]


def grid_nodes(fn: torch.fx.Node, ins: List[str], by_name) -> Optional[List[Node]]:
    if fn.op != "call_function":
        return None
    if fn.target is F.grid_sample:
        node = grid_sample_node(fn, ins)
        return None if node is None else [node]
    if fn.target is F.affine_grid:
        return affine_grid_nodes(fn, ins, by_name)
    return None
