"""torch.cosine_similarity (F.cosine_similarity, nn.CosineSimilarity) and
torch.pairwise_distance (F.pairwise_distance, nn.PairwiseDistance) with a
norm p other than 1 and 2, computed in fp32 (attrs["fp32"], the portable
kernels: mul, sub, linear, pow, clamp, div; the program's output is the
fp32 value).

Why fp32: both are ratios or roots of sums of products. In int8 each sum
of squares is one value on a grid spanning its largest calibration value,
so a short row's sum falls to a few codes and its rsqrt (a LUT, steep near
0) is off by tens of percent: cosine similarity was 21.5 output steps off
on [1, 4, 8] and -0.978 for torch's -0.364 on a row of [8, 4]; |d|^3 of a
difference below 1 rounded to 0, so pairwise_distance(p=3) gave 0.0 for
1.48. In fp32 each is torch's own formula (the same operations in the same
precision; a sum a linear by a row of ones):

* cosine_similarity(x1, x2, dim, eps) as the running torch computes it,
  both expanded to their broadcast shape: torch 1.13 and 2.x clamp each
  norm, sum((x1 / max(|x1|, eps)) (x2 / max(|x2|, eps))) over dim;
  older ATen clamped the product, w12 / sqrt(max(w1 w2, eps^2)) with
  w12 = sum(x1 x2), w1 = sum(x1^2), w2 = sum(x2^2). Which one is read once
  from torch itself on a probe pair where they differ
  (_clamps_each_norm); the other formula was 55-242 output steps off with
  a large eps or a row whose norm is under eps;
* pairwise_distance(x1, x2, p, eps, keepdim), p finite, > 0, not 1 or 2:
  (sum over the last dim of |x1 - x2 + eps|^p)^(1/p), |d|^p as
  (d * d)^(p/2).

p 1 and 2 keep the int8 stand-in (capture_modules.PairwiseDistance: within
about a step); p 0, inf and negative p too. Anything else returns None (the
stand-in or the refusal by name)."""
from __future__ import annotations

import functools
import math
from typing import List, Optional

import numpy as np
import torch

from .capture_calls import _meta_shape
from .capture_rewrites import Fp32Steps
from .ir import Node

FP32_REASON = ("a cosine similarity or a p-norm distance, computed in fp32 (int8 sums of squares and their "
               "rsqrt / root lose short rows: tens of output steps)")


class _Fp32(Fp32Steps):
    reason = FP32_REASON

    def sum_dim(self, src: str, shape: List[int], dim: int, keepdim: bool) -> str:
        """src summed over dim: dim moved last, rows [R, K] times a column of
        ones (an fp32 linear), viewed as the kept shape."""
        rank = len(shape)
        order = [d for d in range(rank) if d != dim] + [dim]
        if order != list(range(rank)):
            src = self("permute", [src], dims=order)
        k = shape[dim]
        rest = [shape[d] for d in range(rank) if d != dim]
        rows = self("reshape", [src], target_shape=[int(np.prod(rest)) if rest else 1, k])
        total = self("linear", [rows], weight=np.ones((1, k), np.float32), bias=None)
        kept = [1 if d == dim else s for d, s in enumerate(shape)] if keepdim else rest
        return self("reshape", [total], target_shape=kept)


def _shapes(fn: torch.fx.Node):
    x1, x2 = _arg(fn, 0, "x1", None), _arg(fn, 1, "x2", None)
    if not all(isinstance(v, torch.fx.Node) for v in (x1, x2)):
        return None
    metas = [v.meta.get("tensor_meta") for v in (x1, x2)]
    if any(m is None or not hasattr(m, "dtype") or not m.dtype.is_floating_point or m.dtype == torch.float64
           for m in metas):
        return None
    a, b = _meta_shape(x1), _meta_shape(x2)
    if a is None or b is None:
        return None
    return a, b, list(torch.broadcast_shapes(tuple(a), tuple(b)))


def _arg(fn, i, key, default):
    return fn.args[i] if len(fn.args) > i else fn.kwargs.get(key, default)


def _expanded(s: _Fp32, x: str, shape, common) -> str:
    if list(shape) == list(common):
        return x
    return s("mul", [x, s.const(np.ones(common, np.float32))])        # an exact copy in fp32


@functools.lru_cache(maxsize=1)
def _clamps_each_norm() -> bool:
    """Whether the running torch's cosine_similarity clamps each norm at
    eps (x1 / max(|x1|, eps) . x2 / max(|x2|, eps)) rather than the product
    of the squared norms at eps^2: on [0.001, 0] and [2, 0] with eps 0.01
    the first gives 0.1, the second 0.2."""
    with torch.no_grad():
        got = float(torch.cosine_similarity(torch.tensor([[0.001, 0.0]]), torch.tensor([[2.0, 0.0]]),
                                            dim=1, eps=0.01)[0])
    return abs(got - 0.1) < abs(got - 0.2)


def _cosine(fn, ins) -> Optional[List[Node]]:
    shapes = _shapes(fn)
    dim, eps = _arg(fn, 2, "dim", 1), _arg(fn, 3, "eps", 1e-8)
    if shapes is None or not isinstance(dim, int) or isinstance(dim, bool) \
            or not isinstance(eps, (int, float)) or isinstance(eps, bool):
        return None
    a, b, common = shapes
    if not common or not -len(common) <= dim < len(common):
        return None
    dim %= len(common)
    s = _Fp32(fn.name)
    x1, x2 = _expanded(s, ins[0], a, common), _expanded(s, ins[1], b, common)
    if _clamps_each_norm():
        units = []
        for x in (x1, x2):
            norm = s("binary_math", [s.sum_dim(s("mul", [x, x]), common, dim, True), s.const(0.5)], fn="pow")
            units.append(s("div", [x, s("clamp", [norm], lo=float(np.float32(eps)), hi=None)]))
        s.sum_dim(s("mul", units), common, dim, False)
        return s.done()
    w12 = s.sum_dim(s("mul", [x1, x2]), common, dim, False)
    w1 = s.sum_dim(s("mul", [x1, x1]), common, dim, False)
    w2 = s.sum_dim(s("mul", [x2, x2]), common, dim, False)
    n12 = s("clamp", [s("mul", [w1, w2])], lo=float(np.float32(eps) * np.float32(eps)), hi=None)
    root = s("binary_math", [n12, s.const(0.5)], fn="pow")
    s("div", [w12, root])
    return s.done()


def _pairwise(fn, ins) -> Optional[List[Node]]:
    shapes = _shapes(fn)
    p, eps, keepdim = _arg(fn, 2, "p", 2.0), _arg(fn, 3, "eps", 1e-6), _arg(fn, 4, "keepdim", False)
    if shapes is None or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (p, eps)) \
            or not isinstance(keepdim, bool):
        return None
    p = float(p)
    if not math.isfinite(p) or p <= 0 or p in (1.0, 2.0):
        return None
    a, b, common = shapes
    if not common:
        return None
    s = _Fp32(fn.name)
    x1, x2 = _expanded(s, ins[0], a, common), _expanded(s, ins[1], b, common)
    d = s("add", [s("sub", [x1, x2]), s.const(np.full([1] * len(common), eps, np.float32))])
    powers = s("binary_math", [s("mul", [d, d]), s.const(p / 2.0)], fn="pow")
    total = s.sum_dim(powers, common, len(common) - 1, keepdim)
    s("binary_math", [total, s.const(1.0 / p)], fn="pow")
    return s.done()


def fp32_distance_nodes(fn: torch.fx.Node, ins: List[str], by_name) -> Optional[List[Node]]:
    """The hook in capture.py's dispatch: the call's fp32 nodes, or None."""
    if fn.op != "call_function":
        return None
    if fn.target is torch.cosine_similarity:
        return _cosine(fn, ins)
    if fn.target is torch.pairwise_distance:
        return _pairwise(fn, ins)
    return None


def stays_a_call(target, p=2.0, x1=None, x2=None) -> bool:
    """Whether the tracer keeps this call as one node for the hook above
    (capture_modules.FUNCTIONAL_STAND_INS returns None for it). A complex
    x1 or x2 (the traced values, when given) never stays one call: the hook
    reads only real fp32 operands, and the stand-in's forward takes the
    magnitudes |x1 - x2 + eps| first, as torch does."""
    if target is torch.cosine_similarity:
        return True
    if any(v is not None and not isinstance(v, (int, float, bool)) and v.is_complex() for v in (x1, x2)):
        return False
    return isinstance(p, (int, float)) and not isinstance(p, bool) and math.isfinite(float(p)) \
        and float(p) > 0 and float(p) not in (1.0, 2.0)
