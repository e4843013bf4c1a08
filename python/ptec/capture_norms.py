"""F.normalize(x, p, dim) for p other than 2 (capture_calls takes p = 2) and
torch.renorm(x, p, dim, maxnorm), rewritten at capture (issue 15): the
p-norm's sum of |x|^p as a LUT, a mean and a count (p = inf: the maximum of
|x|, a max pool), the factor each multiplies by as one LUT of that sum
(norm_factors), copied along the reduced values (a join of copies) and an
int8 mul of two tensors of one shape."""
from __future__ import annotations

from typing import List, Optional

import torch
import torch.nn.functional as F

from .capture_calls import _meta_shape, _reduce_max_nodes, _scalar_arg
from .capture_rewrites import _lines, _Steps
from .ir import Node


def _p(v) -> Optional[float]:
    """A norm's order as a float (inf allowed), or None."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v or v <= 0:
        return None
    return float(v)


def _total(s: _Steps, src: str, shape, dim: int, p: float) -> str:
    """sum over dim (kept) of |src|^p, or for p = inf the maximum of |src|."""
    if p == float("inf"):
        s.nodes.extend(_reduce_max_nodes(f"{s.name}__max", s("elementwise", [src], fn="abs"), shape, [dim],
                                         True, False))
        return s.nodes[-1].name
    powers = s("elementwise", [src], fn="abs") if p == 1 else s("elementwise", [src], fn="abs_pow", p=p)
    return s("mul", [s("mean", [powers], dim=[dim], keepdim=True), s.const(shape[dim])])


def _normalize_p_nodes(fn, ins) -> Optional[List[Node]]:
    """F.normalize(x, p, dim, eps) for p != 2: x * 1 / max(||x||_p, eps)."""
    if fn.target is not F.normalize or len(fn.args) > 4 or set(fn.kwargs) - {"p", "dim", "eps", "out"} \
            or fn.kwargs.get("out") is not None or not isinstance(fn.args[0], torch.fx.Node):
        return None
    p, dim = _p(_scalar_arg(fn, 1, "p", 2.0)), _scalar_arg(fn, 2, "dim", 1)
    eps, shape = _scalar_arg(fn, 3, "eps", 1e-12), _meta_shape(fn.args[0])
    if p is None or p == 2 or not isinstance(dim, int) or isinstance(dim, bool) or not shape \
            or not isinstance(eps, (int, float)):
        return None
    d = dim % len(shape)
    s = _Steps(fn.name)
    total = _total(s, ins[0], shape, d, p)
    factor = s("elementwise", [total], fn="lp_inverse_norm", p=1.0 if p == float("inf") else p, eps=float(eps))
    kept = [1 if i == d else n for i, n in enumerate(shape)]
    s("mul", [ins[0], s.widen(factor, kept, shape)])
    return s.done()


def _renorm_nodes(fn, ins) -> Optional[List[Node]]:
    """torch.renorm(x, p, dim, maxnorm) / x.renorm (p = inf too): each slice
    x.select(dim, i) whose p-norm exceeds maxnorm scaled to maxnorm. x viewed as [K, n]
    (dim first, the rest flattened: _lines), the factor of each row's norm,
    copied along the row, the product viewed and permuted back."""
    if fn.target not in (torch.renorm, "renorm") or fn.kwargs or len(fn.args) != 4 \
            or not isinstance(fn.args[0], torch.fx.Node):
        return None
    _, p, dim, maxnorm = fn.args
    p, shape = _p(p), _meta_shape(fn.args[0])
    if p is None or not isinstance(dim, int) or isinstance(dim, bool) or not shape \
            or isinstance(maxnorm, bool) or not isinstance(maxnorm, (int, float)) or maxnorm < 0:
        return None
    d = dim % len(shape)
    rest = [i for i in range(len(shape)) if i != d]
    s = _Steps(fn.name)
    if not rest:
        return None                  # torch takes no 1-D x
    rows, k, n = _lines(s, ins[0], shape, rest)
    factor = s("elementwise", [_total(s, rows, [k, n], 1, p)], fn="renorm_factor",
               p=1.0 if p == float("inf") else p, maxnorm=float(maxnorm))
    cur = s("mul", [rows, s.widen(factor, [k, 1], [k, n])])
    moved = [shape[d]] + [shape[i] for i in rest]
    cur = s("reshape", [cur], target_shape=moved)
    order = [d] + rest
    if order != list(range(len(shape))):
        s("permute", [cur], dims=[order.index(i) for i in range(len(shape))])
    return s.done()


def norm_nodes(fn, ins) -> Optional[List[Node]]:
    if fn.op not in ("call_function", "call_method") or not fn.args:
        return None
    return _normalize_p_nodes(fn, ins) or _renorm_nodes(fn, ins)
