"""A sum over the last dim written as a constant 0 / 1 linear layer, then
scaled per output feature by a constant (a prepare pass): the running mean
`x.cumsum(-1) / torch.arange(1, n + 1)` (capture writes cumsum as a linear
by the lower-triangular ones), also `* (1 / k)` or a windowed sum's
division by its window's count.

In int8 the sum was requantized on its own wide grid (the last position's
sum) before the division, so the first positions (sum / 1, / 2, ...) kept
that grid's rounding on an output grid many times finer: 8.5-10.9 output
steps off (probe 9). Here the scale folds into the layer's weights (row o
times c_o: the averaging matrix of 1 / k below the diagonal), run as one
1x1 conv2d on the values viewed as [rows, n, 1, 1], whose per-output-channel
weight scales hold each row's 1 / k as one exact code (a linear's one
weight scale held 1 / 48 as 2.6 codes: 13.9 steps), its int32 sum
requantized once onto the mean's own grid.

Only for a linear with a constant weight of 0s and 1s (a selection sum),
no other attribute (not exact_sums' linears), of an int8 value, read by nothing but one mul / div by a constant that
is finite, nonzero for a div, and varies along the last dim only (or is
one number)."""
from __future__ import annotations

from typing import Optional

import numpy as np

from .ir import Graph, Node


def _row_scale(g: Graph, n, lin) -> Optional[np.ndarray]:
    """The per-output-feature factor of mul / div node n of linear lin, else None."""
    if n.op not in ("mul", "div") or len(n.inputs) != 2 or n.attrs.get("act") or n.attrs.get("fp32"):
        return None
    if n.op == "div" and n.inputs[0] != lin.name:
        return None
    other = [i for i in n.inputs if i != lin.name]
    if len(other) != 1:
        return None
    c = g.node(other[0])
    if c.op != "constant" or c.attrs.get("fp32") or c.attrs.get("dtype"):
        return None
    value = np.asarray(c.attrs.get("value"))
    if value.dtype.kind != "f" or value.ndim > len(lin.shape or []) \
            or any(d != 1 for d in value.shape[:-1]):
        return None
    features = lin.attrs["weight"].shape[0]
    flat = value.reshape(-1).astype(np.float64)
    if flat.size not in (1, features) or not np.isfinite(flat).all():
        return None
    if n.op == "div":
        if (flat == 0).any():
            return None
        flat = 1.0 / flat
    if list(n.shape or []) != list(lin.shape or []):
        return None             # the constant broadcasts the sum to more values
    return np.broadcast_to(flat, (features,))


def running_means_as_linear(g: Graph) -> None:
    for lin in list(g.nodes):
        w = lin.attrs.get("weight") if lin.op == "linear" else None
        if w is None or lin.attrs.get("act") or lin.attrs.get("fp32") or lin.name in g.outputs \
                or not isinstance(w, np.ndarray) or w.ndim != 2 or not np.isin(w, (0.0, 1.0)).all():
            continue
        if set(lin.attrs) - {"weight", "bias", "source"} or g.node(lin.inputs[0]).attrs.get("fp32"):
            continue            # an exact_sums linear, an fp32 value's sum: as they are
        users = g.users(lin.name)
        if len(users) != 1:
            continue
        n = users[0]
        scale = _row_scale(g, n, lin)
        if scale is None:
            continue
        src = g.node(lin.inputs[0])
        if not src.shape or not lin.shape or list(src.shape[:-1]) != list(lin.shape[:-1]):
            continue
        rows = int(np.prod(lin.shape[:-1])) if len(lin.shape) > 1 else 1
        weight = (w.astype(np.float64) * scale[:, None]).astype(np.float32)
        bias = lin.attrs.get("bias")
        if bias is not None:
            bias = (np.asarray(bias, np.float64) * scale).astype(np.float32)
        # a 1x1 conv2d on [rows, n, 1, 1]: per-output-channel weight scales, so row o's 1 / k is one exact code
        at = g.nodes.index(lin)
        flat = Node(f"{lin.name}__as_2d", "reshape", [src.name], dict(shape=[rows, w.shape[1], 1, 1]),
                    [rows, w.shape[1], 1, 1])
        conv = Node(f"{lin.name}__rows", "conv2d", [flat.name],
                    dict(weight=weight[:, :, None, None], bias=bias, stride=[1, 1], padding=[0, 0],
                         dilation=[1, 1], groups=1, source=lin.attrs.get("source", lin.name)),
                    [rows, w.shape[0], 1, 1])
        lin.op, lin.inputs = "reshape", [conv.name]
        lin.attrs = dict(shape=list(lin.shape), source=lin.attrs.get("source", lin.name))
        g.nodes[at:at] = [flat, conv]
        g.replace_uses(n.name, lin.name)
        g.remove(n.name)
        for c in n.inputs:
            if c != lin.name and not g.users(c) and c not in g.outputs:
                g.remove(c)
