"""Vector norms of a negative order (issue 15), and of a positive order
other than 1 and 2 (probe 8), in fp32:
torch.linalg.vector_norm(x, ord, dim, keepdim), torch.linalg.norm(x, ord,
dim) of one dim, and torch.norm(x, p, dim, keepdim) / x.norm(p, dim,
keepdim), with a finite ord (p) not 0, 1 or 2.

p > 0 other than 1 and 2 (3, 4, 1.5, 0.5): in int8 |x|^p sat on its own
grid, sized by the largest row's largest |x|^p, and a short row's sum of
a few such codes rounded to 0 (ord 4 over 8 elements: 0.0 for torch's
1.68, 134.6 output steps; ord 3: 9.9). In fp32 it is the same steps as
below. p 1, 2, inf and -inf stay int8 (capture_reductions: a sum of |x|,
a root of a sum of squares, a max / min of |x|).

(sum |x|^p)^(1/p) for p < 0 cannot be held by int8 steps: |x|^p is
unbounded near 0 (1 / |x| at an element of 0.01 is 100, at 0 inf) and the
sum is dominated by the smallest |x|, so no calibrated int8 grid holds it.
In fp32 it is exact enough: x * x, pow(x^2, p / 2) (= |x|^p for any sign),
the sum a linear layer of ones, pow(sum, 1 / p), each step attrs["fp32"]
(FP32_REASON) on the portable kernels (aten::mul.out,
aten::pow.Tensor_Tensor_out, aten::linear.out, aten::view_copy.out,
aten::permute_copy.out). An element equal to 0 makes |x|^p inf, the sum inf
and its 1/p power 0, torch's value. The program's input is int8 when the
model's is quantized: the result is torch's function of that dequantized
input within fp32 rounding, then its output grid.
"""
from __future__ import annotations

import math
from typing import List, Optional

import numpy as np
import torch
import torch.fx

from .capture_calls import _meta_shape
from .capture_rewrites import Fp32Steps
from .ir import Node

FP32_REASON = ("a vector norm of a negative order, computed in fp32 (|x|^p is unbounded near 0: "
               "no int8 grid holds it)")
POSITIVE_REASON = ("a vector norm of an order other than 1 and 2, computed in fp32 (|x|^p on an int8 grid rounds a "
                   "short row's terms to 0)")


def in_fp32(p: float) -> bool:
    """Whether a vector norm of order p takes these fp32 steps: finite, not 0, 1 or 2."""
    return math.isfinite(p) and p not in (0.0, 1.0, 2.0)


class _Fp32(Fp32Steps):
    reason = FP32_REASON


class _Fp32Positive(Fp32Steps):
    reason = POSITIVE_REASON


def _args(fn):
    """(x, ord, dim, keepdim) of a vector_norm / linalg.norm call, else None."""
    t = fn.target
    if (fn.op == "call_function" and t is torch.norm) or (fn.op == "call_method" and t == "norm"):
        names = ["input", "p", "dim", "keepdim"]      # torch.norm / Tensor.norm: p for ord
        got = dict(zip(names, fn.args))
        for k, v in fn.kwargs.items():
            if k in ("out", "dtype") and v is None:
                continue                # torch.norm's trace spells its defaults out
            if k in got or k not in names:
                return None
            got[k] = v
        x, p = got.get("input"), got.get("p", "fro")
        dim, keepdim = got.get("dim"), got.get("keepdim", False)
        if not isinstance(x, torch.fx.Node) or isinstance(p, bool) or not isinstance(p, (int, float)) \
                or not isinstance(keepdim, bool):
            return None
        return x, float(p), dim, keepdim
    if fn.op != "call_function" or t not in (torch.linalg.vector_norm, torch.linalg.norm):
        return None
    names = ["input" if t is torch.linalg.norm else "x", "ord", "dim", "keepdim"]
    got = dict(zip(names, fn.args))
    for k, v in fn.kwargs.items():
        if k in got or k not in names:
            return None                 # dtype=, out=, or a name torch does not take
        got[k] = v
    x = got.get(names[0])
    ord_ = got.get("ord", 2 if t is torch.linalg.vector_norm else None)
    dim, keepdim = got.get("dim"), got.get("keepdim", False)
    if not isinstance(x, torch.fx.Node) or isinstance(ord_, bool) or not isinstance(ord_, (int, float)) \
            or not isinstance(keepdim, bool):
        return None
    if t is torch.linalg.norm and not isinstance(dim, int):
        return None                     # linalg.norm's vector form: one dim (a pair is a matrix norm)
    return x, float(ord_), dim, keepdim


def fp32_norm_nodes(fn: torch.fx.Node, ins, by_name) -> Optional[List[Node]]:
    """The fp32 steps of a vector norm of a finite order other than 0, 1, 2, else None."""
    got = _args(fn)
    if got is None:
        return None
    x, p, dim, keepdim = got
    shape, out = _meta_shape(x), _meta_shape(fn)
    meta = x.meta.get("tensor_meta")
    if not in_fp32(p) or shape is None or out is None or getattr(meta, "dtype", None) != torch.float32:
        return None
    rank = len(shape)
    if dim is None:
        dims = list(range(rank))
    elif isinstance(dim, int):
        dims = [dim]
    elif isinstance(dim, (tuple, list)) and all(isinstance(d, int) for d in dim):
        dims = list(dim)
    else:
        return None
    if rank == 0 or any(not -rank <= d < rank for d in dims):
        return None
    dims = sorted({d % rank for d in dims})
    if len(dims) != len([d for d in (dim if isinstance(dim, (tuple, list)) else dims)]):
        return None                     # a dim named twice: torch raises
    kept = [d for d in range(rank) if d not in dims]
    rows, n = int(np.prod([shape[d] for d in kept])), int(np.prod([shape[d] for d in dims]))
    if n == 0 or rows == 0:
        return None
    s = (_Fp32 if p < 0 else _Fp32Positive)(fn.name)
    src = ins[0]
    if kept + dims != list(range(rank)):
        src = s("permute", [src], dims=kept + dims)
    src = s("reshape", [src], target_shape=[rows, n])
    square = s("mul", [src, src])
    powered = s("binary_math", [square, s.const(np.full((1, 1), p / 2.0))], fn="pow")
    total = s("linear", [powered], weight=np.ones((1, n), np.float32), bias=None)
    root = s("binary_math", [total, s.const(np.full((1, 1), 1.0 / p))], fn="pow")
    s("reshape", [root], target_shape=list(out))
    return s.done()


LP_POOL_REASON = ("an LP pool (x^p, the window's mean, its 1/p power), computed in fp32 (x^p on an int8 grid "
                  "rounds the small values of a window to 0 before the root)")


class _LpFp32(Fp32Steps):
    reason = LP_POOL_REASON


def lp_pool_fp32_nodes(name: str, src: str, p: float, kernel, stride, ceil_mode: bool, source: str = "") -> List[Node]:
    """nn.LPPool2d (and LPPool1d through it) in torch's steps, in fp32:
    x^p, avg_pool2d, times the window's taps, then the 1/p power (torch's
    sign(t) relu(|t|) is t itself). On int8 (a LUT, an int8 average, a
    LUT) a window of values under one step of x^p gave 0 (23 output steps
    off on a ReLU conv's output); in fp32 the result is torch's function of
    the dequantized input within fp32 rounding, then its output grid."""
    s = _LpFp32(name)
    powered = s("binary_math", [src, s.const(np.full((1, 1, 1, 1), p))], fn="pow")
    mean = s("avg_pool2d", [powered], kernel=list(kernel), stride=list(stride), padding=[0, 0],
             ceil_mode=ceil_mode, count_include_pad=True, divisor_override=None)
    total = s("mul", [mean, s.const(np.full((1, 1, 1, 1), float(kernel[0] * kernel[1])))])
    s("binary_math", [total, s.const(np.full((1, 1, 1, 1), 1.0 / p))], fn="pow",
      note=f"note: {source or name}: {LP_POOL_REASON} (a GeM pool, pool(x^p)^(1/p), runs as this LP pool)")
    return s.done()
