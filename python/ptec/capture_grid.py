"""F.grid_sample and F.affine_grid (issue 15).

grid_sample reads its input at positions a tensor gives, so no int8 layer
computes it: it is one `grid_sample` node, which the portable fp32
fallback runs on aten::grid_sampler_2d.out (a 4-D image) or
aten::grid_sampler_3d.out (a 5-D volume: bilinear, which is trilinear
there, or nearest; torch has no bicubic for it), the input and the grid
dequantized where they are int8 and the result quantized (docs/aot.md). The
grid may be a program input, a constant, or computed in the program.

affine_grid(theta, [N, C, H, W]) is the constant base grid (x, y, 1) of
every output pixel times theta: a linear layer of theta [N, 2, 3] whose
weight is the base grid [H*W, 3] ([N, 2, H*W]), transposed and viewed as
[N, H, W, 2]; of a volume, [N, C, D, H, W], the base (x, y, z, 1) of every
voxel [D*H*W, 4] by theta [N, 3, 4], viewed as [N, D, H, W, 3]. A constant
theta gives a constant grid (torch's own values). Each handler returns None
for a call it does not cover (an unknown mode, bicubic on a volume), which
then stays an unsupported node, refused by name."""
from __future__ import annotations

from typing import List, Optional

import numpy as np
import torch
import torch.nn.functional as F

from .ir import Node

MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
PADDINGS = {"zeros": 0, "border": 1, "reflection": 2}
FP32_GRID = ("affine_grid of a computed theta, computed in fp32 (its base grid by theta, read by the fp32 sampler "
             "as it is: an int8 grid moved every sampled position by up to half its step)")


def _arg(fn: torch.fx.Node, i: int, key: str, default=None):
    return fn.args[i] if len(fn.args) > i else fn.kwargs.get(key, default)


def _shape(a) -> Optional[List[int]]:
    meta = a.meta.get("tensor_meta") if isinstance(a, torch.fx.Node) else None
    return [int(s) for s in meta.shape] if meta is not None and hasattr(meta, "shape") else None


def grid_sample_node(fn: torch.fx.Node, ins: List[str]) -> Optional[Node]:
    """F.grid_sample(x, grid, mode, padding_mode, align_corners) of a 4-D x,
    or of a 5-D x in a mode other than bicubic, as one grid_sample node;
    align_corners None is torch's default, False."""
    mode, padding = _arg(fn, 2, "mode", "bilinear"), _arg(fn, 3, "padding_mode", "zeros")
    x, grid = _arg(fn, 0, "input"), _arg(fn, 1, "grid")
    rank = len(_shape(x) or [])
    if (mode not in MODES or padding not in PADDINGS or len(ins) != 2 or not isinstance(grid, torch.fx.Node)
            or rank not in (4, 5) or len(_shape(grid) or []) != rank or (rank == 5 and mode == "bicubic")):
        return None
    return Node(fn.name, "grid_sample", [x.name, grid.name],
                dict(mode=MODES[mode], padding=PADDINGS[padding], align_corners=bool(_arg(fn, 4, "align_corners"))))


def base_grid(sizes: List[int], align_corners: bool) -> np.ndarray:
    """affine_grid's base for the spatial sizes [H, W] or [D, H, W]: rows
    (x, y, 1) or (x, y, z, 1) of every position in row-major order,
    linspace(-1, 1) per axis, scaled by (S - 1) / S without align_corners;
    0 on a size-1 axis."""
    def axis(s):
        if s <= 1:
            return np.zeros(max(s, 0))
        r = np.linspace(-1.0, 1.0, s)
        return r if align_corners else r * (s - 1) / s
    mesh = np.meshgrid(*[axis(s) for s in sizes], indexing="ij")        # [D,] H, W order
    coords = [m.ravel() for m in mesh[::-1]]                             # x, y[, z]
    return np.stack(coords + [np.ones(int(np.prod(sizes)))], 1).astype(np.float32)


def affine_grid_nodes(fn: torch.fx.Node, ins: List[str], by_name) -> Optional[List[Node]]:
    """affine_grid of a 4-D or 5-D size (its entries may be traced, as
    x.size(0): the sizes come from the traced output [N, (D,) H, W, k])."""
    size, align = _arg(fn, 1, "size"), bool(_arg(fn, 2, "align_corners"))
    theta, shape = _arg(fn, 0, "theta"), _shape(fn)
    k = len(shape) - 2 if shape is not None else 0                      # 2 or 3 spatial axes
    if (not isinstance(size, (list, tuple)) or len(size) not in (4, 5) or len(size) != len(shape or [])
            or _shape(theta) != [shape[0], k, k + 1] or len(ins) != 1):
        return None
    n, spatial = shape[0], shape[1:-1]
    source = by_name.get(ins[0])
    if source is not None and source.op == "constant":
        value = F.affine_grid(torch.as_tensor(np.asarray(source.attrs["value"], np.float32)), [n, 1] + spatial,
                              align_corners=align)
        return [Node(fn.name, "constant", [], dict(value=value.numpy().astype(np.float32)))]
    rows = Node(f"{fn.name}_rows", "linear", ins[:1], dict(weight=base_grid(spatial, align), bias=None,
                                                           fp32=FP32_GRID))
    xy = Node(f"{fn.name}_xy", "permute", [rows.name], dict(dims=[0, 2, 1], fp32=FP32_GRID))
    return [rows, xy, Node(fn.name, "reshape", [xy.name], dict(target_shape=[n] + spatial + [k], fp32=FP32_GRID))]


def grid_nodes(fn: torch.fx.Node, ins: List[str], by_name) -> Optional[List[Node]]:
    if fn.op != "call_function":
        return None
    if fn.target is F.grid_sample:
        node = grid_sample_node(fn, ins)
        return None if node is None else [node]
    if fn.target is F.affine_grid:
        return affine_grid_nodes(fn, ins, by_name)
    return None


FP32_THETA = ("the linear layer computing an affine_grid's theta, in fp32 (theta's six numbers place every "
              "sampled position: on theta's int8 grid a position moved by up to half a step times its coordinates)")


def theta_in_fp32(g) -> List[str]:
    """A prepare pass: the linear layer (no fused activation) whose output,
    through views, is read only by an fp32 affine_grid (above) is fp32 too:
    theta then reaches the grid unrounded; when the layer reads a float
    program input through views, those views too (it reads the exact
    input). Returns the layers marked."""
    marked = []
    for rows in [n for n in g.nodes if n.op == "linear" and n.attrs.get("fp32") == FP32_GRID]:
        chain, n = [], g.node(rows.inputs[0])
        while n.op == "reshape" and len(g.users(n.name)) == 1 and n.name not in g.outputs:
            chain.append(n)
            n = g.node(n.inputs[0])
        if n.op != "linear" or n.attrs.get("fp32") or n.attrs.get("act") or len(g.users(n.name)) != 1 \
                or n.name in g.outputs or not isinstance(n.attrs.get("weight"), np.ndarray):
            continue
        src = g.node(n.inputs[0])
        while src.op == "reshape" and len(g.users(src.name)) == 1 and src.name not in g.outputs:
            chain.append(src)           # a float input's view (x.flatten(1)): the layer reads its exact value
            src = g.node(src.inputs[0])
        if src.op != "input" or src.attrs.get("dtype") or src.attrs.get("in_dtype"):
            chain = chain[:len(chain) - len([k for k in chain if g.nodes.index(k) < g.nodes.index(n)])]
        for k in [n] + chain:
            k.attrs["fp32"] = FP32_THETA
        marked.append(n.name)
    return marked
