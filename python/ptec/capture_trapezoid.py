"""torch.trapz / torch.trapezoid / torch.cumulative_trapezoid rewritten at
capture (issue 15): a product by a constant matrix over their dim (each
sample's weight in the trapezoid rule: half the spacings beside it), one
int8 linear. (x.unfold, windows along a dim too, is capture_views'.)"""
from __future__ import annotations

from typing import List, Optional

import numpy as np
import torch

from .capture_calls import _meta_shape
from .capture_rewrites import _Steps
from .ir import Node


def _int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


# the trapezoid calls: cumulative or not (capture_composed reads it too, for an x computed from the input)
TRAPEZOIDS = {torch.trapz: False, torch.trapezoid: False, torch.cumulative_trapezoid: True}


def trapezoid_weights(spacing: np.ndarray, cumulative: bool) -> np.ndarray:
    """[1, n] (or [n - 1, n] cumulative) for n - 1 spacings: row j the
    weights of the samples in the integral up to sample j + 1."""
    n = len(spacing) + 1
    steps = np.zeros((n - 1, n), np.float64)
    steps[np.arange(n - 1), np.arange(n - 1)] = spacing / 2.0
    steps[np.arange(n - 1), np.arange(1, n)] = spacing / 2.0
    rows = np.cumsum(steps, axis=0)
    return (rows if cumulative else rows[-1:]).astype(np.float32)


def _spacing(x, n: int, by_name) -> Optional[np.ndarray]:
    """The n - 1 spacings of constant sample points x (1-D, or one row
    repeated along the other dims), else None."""
    node = by_name.get(x.name) if isinstance(x, torch.fx.Node) else None
    if node is None or node.op != "constant":
        return None
    v = np.asarray(node.attrs["value"], np.float64)
    if v.ndim == 0 or v.shape[-1] != n:
        return None
    row = v.reshape(-1, n)
    if (row != row[:1]).any():
        return None
    return np.diff(row[0])


def _trapezoid_nodes(fn, ins, by_name) -> Optional[List[Node]]:
    """torch.trapz / trapezoid / cumulative_trapezoid (y, x or dx, dim) over
    the last dim of y (other dims moved last by a permute): y times the
    constant weights (one int8 linear), viewed as torch's shape."""
    cumulative = TRAPEZOIDS.get(fn.target) if fn.op == "call_function" else None
    if cumulative is None or not fn.args or not isinstance(fn.args[0], torch.fx.Node) \
            or len(fn.args) > 2 or set(fn.kwargs) - {"x", "dx", "dim"}:
        return None
    shape, out = _meta_shape(fn.args[0]), _meta_shape(fn)
    dim = fn.kwargs.get("dim", -1)
    x = fn.args[1] if len(fn.args) > 1 else fn.kwargs.get("x")
    dx = fn.kwargs.get("dx")
    if not shape or out is None or not _int(dim):
        return None
    d = dim % len(shape)
    n = shape[d]
    if n < 2:
        return None                                  # no interval: torch's zeros are no function of y
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        x, dx = None, x
    if x is not None:
        spacing = _spacing(x, n, by_name)
    elif dx is None or (isinstance(dx, (int, float)) and not isinstance(dx, bool)):
        spacing = np.full(n - 1, 1.0 if dx is None else float(dx))
    else:
        spacing = None
    if spacing is None:
        return None
    rest = [i for i in range(len(shape)) if i != d]
    s = _Steps(fn.name)
    cur = ins[0] if d == len(shape) - 1 else s("permute", [ins[0]], dims=rest + [d])
    cur = s("linear", [cur], weight=trapezoid_weights(spacing, cumulative), bias=None)
    if not cumulative:
        s("reshape", [cur], target_shape=out)
    elif d != len(shape) - 1:
        order = rest + [d]
        s("permute", [cur], dims=[order.index(i) for i in range(len(shape))])
    return s.done()


def trapezoid_nodes(fn, ins, by_name) -> Optional[List[Node]]:
    """The nodes of a trapz / trapezoid / cumulative_trapezoid call, else None."""
    if fn.op not in ("call_function", "call_method") or not fn.args:
        return None
    return _trapezoid_nodes(fn, ins, by_name)
