"""Common torch reductions as exact rewrites at capture (issue 15), into ops
ptec already lowers:

* counts of a bool tensor (`mask.sum()`, `(x > 0).sum(1)`, `.long().sum()`,
  torch.count_nonzero): int64 as torch, exact for any size. The bool as
  float 0/1 with a 1 appended to each row, sorted ascending; the argmax of
  the sorted row is the first 1, at the number of 0s, so the count is
  n - argmax (int64 arithmetic, capture_int_math). No int8 rounding
  touches the count.
* `mask.any()` / `.all()` (dims or whole; of a float x: x != 0): the
  maximum (minimum) of the bool as 0/1 on its grid, compared > 0.5, a bool.
* `x.argmax()` / `argmin()` without dim: the argmax of x viewed as
  [1, numel], the int64 index viewed as torch's shape.
* `x.amax()` / `amin()` without dims, torch.aminmax (whole or dim).
* norms: Tensor.norm / torch.norm (p a number, 'fro'), torch.linalg.norm,
  vector_norm, matrix_norm ('fro', 1, -1, inf, -inf): |x| (or x^2) summed,
  a root; inf / -inf the max / min of |x|.
* `x.prod()` of the whole tensor (halves multiplied, log2(n) int8 muls);
  nansum / nanmean: NaN (x != x) replaced by 0 and, for the mean, divided
  by the count of the others; var_mean / std_mean (both results).
* torch.diff (n, dim, prepend, append), logcumsumexp (the running
  y_i = y_(i-1) + softplus(x_i - y_(i-1)), torch's logaddexp exactly),
  quantile / nanquantile (a sort and the constant positions, each
  interpolation), torch.cov / corrcoef of a 2-D or 1-D input.

A call whose results are a tuple (aminmax, var_mean, std_mean) is made
one element at a time, when its getitem is captured (`elements_of`).
Every function returns None for a call or an argument form it does not
cover; that call then stays one unsupported node refused by name.
quantile / nanquantile / nanmean / nansum on NaN inputs are exact in the
float graph; the int8 program holds no NaN (its inputs are quantized)."""
from __future__ import annotations

import math
from typing import List, Optional

import numpy as np
import torch

from .capture_calls import _ints, _meta_shape, _norm_nodes, _reduce_max_nodes
from .capture_rewrites import _lines, _Steps
from .ir import Node


def _dtype(a):
    return getattr(a.meta.get("tensor_meta"), "dtype", None) if isinstance(a, torch.fx.Node) else None


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _bind(fn, names, defaults=None, keyword_only=()):
    """The call's arguments by name (names[0] the tensor), defaults filled,
    or None when it passes more positional arguments or other keywords."""
    positional = [k for k in names if k not in keyword_only]
    if len(fn.args) > len(positional) or set(fn.kwargs) - set(names):
        return None
    bound = dict(defaults or {})
    bound.update(zip(positional, fn.args))
    bound.update(fn.kwargs)
    if bound.get("out") is not None or bound.get("dtype") is not None:
        return None
    return bound


def _dims(dim, rank):
    """dim as a sorted list of dims in range (None or () for all), else None."""
    if dim is None or (isinstance(dim, (tuple, list)) and not dim):
        return list(range(rank))
    dims = _ints(dim)
    if dims is None or any(not -max(rank, 1) <= d < max(rank, 1) for d in dims) \
            or len({d % max(rank, 1) for d in dims}) != len(dims):
        return None
    return sorted({d % max(rank, 1) for d in dims})


def _kept(shape, dims):
    return [1 if d in dims else n for d, n in enumerate(shape)]


def _reduce(s: _Steps, src: str, shape, dims, kind: str) -> str:
    """src reduced over dims, keeping them (size 1): "sum" / "mean" as a
    mean over the rows of _lines' [K, n] view (an int8 average pool),
    times n for a sum; "max" / "min" as _reduce_max_nodes."""
    if not shape:
        return src
    if kind in ("max", "min"):
        s.nodes.extend(_reduce_max_nodes(f"{s.name}__{len(s.nodes)}m", src, shape, dims, True, kind == "min"))
        return s.nodes[-1].name
    rows, k, n = _lines(s, src, shape, dims)
    cur = s("mean", [rows], dim=[1], keepdim=True)
    if kind == "sum" and n != 1:
        cur = s("mul", [cur, s.const(n)])
    return s("reshape", [cur], target_shape=_kept(shape, dims))


def _view(s: _Steps, src: str, out) -> str:
    return s("reshape", [src], target_shape=list(out))


def _int_view(s: _Steps, src: str, out) -> str:
    return s("int_math", [src], kind="view", dtype="int64", shape=list(out))


# counts of a bool -----------------------------------------------------------

def _bool_source(a, by_name) -> Optional[str]:
    """The bool value a is, or is a cast of (bool_to: `.long()`, `.int()`,
    `.float()` of a mask), else None."""
    node = by_name.get(a.name) if isinstance(a, torch.fx.Node) else None
    if node is None:
        return None
    if node.op in ("compare", "logical") or (node.op in ("input", "state") and node.attrs.get("dtype") == "bool") \
            or (node.op == "constant" and np.asarray(node.attrs["value"]).dtype == np.bool_):
        return node.name
    if node.op == "bool_to":
        return node.inputs[0]
    return None


def _count(s: _Steps, mask: str, shape, dims) -> str:
    """The int64 count of set values of the bool `mask` over dims, kept."""
    ones = s("bool_to", [mask], dtype="float32")
    rows, k, n = _lines(s, ones, shape, dims)
    padded = s("cat", [rows, s.const(np.ones((k, 1), np.float32))], dim=1)
    ordered = s("sort", [padded], dim=1, descending=False, k=None, pick=None, keepdim=False, rule=None)
    first = s("argmax", [ordered], dim=1, keepdim=True, smallest=False)
    count = s("int_math", [first], kind="sub", dtype="int64", scalars={0: n}, alpha=1)
    return _int_view(s, count, _kept(shape, dims))


def _count_nodes(fn, by_name) -> Optional[List[Node]]:
    """x.sum(dims, keepdim) of a bool (or of a bool's integer cast) and
    torch.count_nonzero(x, dims) of a bool or of a float x (x != 0)."""
    s = _Steps(fn.name)
    if fn.target in ("sum", torch.sum):
        a = _bind(fn, ("input", "dim", "keepdim", "dtype"), dict(keepdim=False))
        if a is None or _dtype(fn) != torch.int64:
            return None
        mask = _bool_source(a["input"], by_name)
    elif fn.target in ("count_nonzero", torch.count_nonzero):
        a = _bind(fn, ("input", "dim"), dict(keepdim=False))
        if a is None:
            return None
        if _dtype(a["input"]) == torch.float32 and by_name.get(a["input"].name) is not None:
            mask = s("compare", [a["input"].name], kind="ne", scalar=0.0)
        else:
            mask = _bool_source(a["input"], by_name) if _dtype(a["input"]) == torch.bool else None
    else:
        return None
    shape, out = _meta_shape(a["input"]), _meta_shape(fn)
    dims = _dims(a.get("dim"), len(shape or []))
    if mask is None or shape is None or out is None or dims is None or not isinstance(a["keepdim"], bool) \
            or 0 in shape:
        return None
    if not shape:
        shape, dims = [1], [0]
    cur = _count(s, mask, shape, dims)
    if _kept(shape, dims) != list(out):
        _int_view(s, cur, out)
    return s.done()


def _any_all_nodes(fn, by_name) -> Optional[List[Node]]:
    """x.any(dim, keepdim) / x.all(...) / torch.any / torch.all of a bool or
    a float: the max (min) of the bool as 0/1, compared > 0.5 (each code is
    0 or the one code nearest 1, so the comparison is exact)."""
    if fn.target not in ("any", torch.any, "all", torch.all):
        return None
    a = _bind(fn, ("input", "dim", "keepdim", "out"), dict(keepdim=False))
    if a is None or not isinstance(a["input"], torch.fx.Node):
        return None
    shape, out = _meta_shape(a["input"]), _meta_shape(fn)
    dims = _dims(a.get("dim"), len(shape or []))
    if shape is None or out is None or dims is None or not isinstance(a["keepdim"], bool) or 0 in shape:
        return None
    s = _Steps(fn.name)
    if _dtype(a["input"]) == torch.float32 and by_name.get(a["input"].name) is not None:
        mask = s("compare", [a["input"].name], kind="ne", scalar=0.0)
    else:
        mask = _bool_source(a["input"], by_name) if _dtype(a["input"]) == torch.bool else None
    if mask is None:
        return None
    ones = s("bool_to", [mask], dtype="float32")
    extreme = _reduce(s, ones, shape, dims, "max" if fn.target in ("any", torch.any) else "min")
    s("compare", [_view(s, extreme, out)], kind="gt", scalar=0.5)
    return s.done()


# extremes and their indices --------------------------------------------------

def _argmax_whole_nodes(fn, ins) -> Optional[List[Node]]:
    """x.argmax() / argmin() / with dim=None (keepdim: every dim 1): the
    index into the flattened tensor, an argmax of x viewed as [1, numel]."""
    if fn.target not in ("argmax", torch.argmax, "argmin", torch.argmin):
        return None
    a = _bind(fn, ("input", "dim", "keepdim"), dict(keepdim=False))
    if a is None or a.get("dim") is not None or not isinstance(a["keepdim"], bool) \
            or not isinstance(a["input"], torch.fx.Node) or _dtype(a["input"]) != torch.float32:
        return None
    shape, out = _meta_shape(a["input"]), _meta_shape(fn)
    if shape is None or out is None or 0 in shape:
        return None
    s = _Steps(fn.name)
    flat = _view(s, ins[0], [1, int(np.prod(shape))])
    first = s("argmax", [flat], dim=1, keepdim=False, smallest=fn.target in ("argmin", torch.argmin))
    _int_view(s, first, out)
    return s.done()


def _extreme_whole_nodes(fn, ins) -> Optional[List[Node]]:
    """x.amax() / amin() with no dims (or dim=()): the whole tensor's."""
    if fn.target not in ("amax", torch.amax, "amin", torch.amin):
        return None
    a = _bind(fn, ("input", "dim", "keepdim"), dict(keepdim=False))
    if a is None or a.get("dim") not in (None, (), []) or not isinstance(a["keepdim"], bool):
        return None
    return _extremes(fn, ins[0], a["input"], None, "min" if fn.target in ("amin", torch.amin) else "max",
                     _meta_shape(fn))


def _extremes(fn, src: str, x, dim, kind: str, out, name: str = None) -> Optional[List[Node]]:
    shape = _meta_shape(x)
    dims = _dims(dim, len(shape or []))
    if shape is None or out is None or dims is None or 0 in shape or _dtype(x) != torch.float32:
        return None
    s = _Steps(name or fn.name)
    if not shape:
        s("identity", [src])
        return s.done()
    _view(s, _reduce(s, src, shape, dims, kind), out)
    return s.done()


def _aminmax_elements(fn, ins):
    """torch.aminmax(x, dim=, keepdim=): its (min, max) made per element."""
    if fn.target not in (torch.aminmax, "aminmax"):
        return None
    a = _bind(fn, ("input", "dim", "keepdim"), dict(keepdim=False), keyword_only=("dim", "keepdim"))
    if a is None or not isinstance(a["keepdim"], bool) or (a.get("dim") is not None and _ints(a["dim"]) is None):
        return None

    def element(item: torch.fx.Node, index):
        kind = "min" if index in (0, "min") else "max" if index in (1, "max") else None
        return None if kind is None else _extremes(fn, ins[0], a["input"], a.get("dim"), kind, _meta_shape(item),
                                                   item.name)
    return element


# norms ------------------------------------------------------------------------

def _vector_norm(s: _Steps, src: str, shape, dims, p) -> Optional[str]:
    """The p-norm of src over dims, kept: p 2 a square, a sum and a root;
    1 a sum of |x|; inf / -inf the max / min of |x|; another p > 0
    |x|^p summed and its 1/p power (LUTs)."""
    if not _number(p) or p == 0 or (p < 0 and p != -math.inf) or math.isnan(p):
        return None
    if p == 2:
        return s("elementwise", [_reduce(s, s("elementwise", [src], fn="square"), shape, dims, "sum")], fn="sqrt")
    size = s("elementwise", [src], fn="abs")
    if math.isinf(p):
        return _reduce(s, size, shape, dims, "max" if p > 0 else "min")
    if p == 1:
        return _reduce(s, size, shape, dims, "sum")
    total = _reduce(s, s("elementwise", [size], fn="pow", exponent=float(p)), shape, dims, "sum")
    return s("elementwise", [total], fn="pow", exponent=1.0 / float(p))


def _matrix_norm(s: _Steps, src: str, shape, dims, ord) -> Optional[str]:
    """'fro', 1 / -1 (the max / min over columns of the sums of |x| down
    each), inf / -inf (over rows); 2, -2 and 'nuc' need singular values: None."""
    if ord == "fro":
        return _vector_norm(s, src, shape, dims, 2)
    if ord not in (1, -1, math.inf, -math.inf) or isinstance(ord, bool):
        return None
    rows, cols = dims
    across, along = (rows, cols) if ord in (1, -1) else (cols, rows)
    sums = _reduce(s, s("elementwise", [src], fn="abs"), shape, [across], "sum")
    return _reduce(s, sums, _kept(shape, [across]), [along], "max" if ord > 0 else "min")


def _norm_call(fn):
    """(input, kind "vector" / "matrix", ord, dim, keepdim) of a norm call, or None."""
    t = fn.target
    if t in ("norm", torch.norm):
        a = _bind(fn, ("input", "p", "dim", "keepdim", "out", "dtype"), dict(p="fro", keepdim=False))
        if a is None:
            return None
        p, dim = a["p"], a.get("dim")
        if p == "fro":
            # torch.norm's 'fro' over one or two dims or all is the 2-norm of those values
            return a["input"], "vector", 2, dim, a["keepdim"]
        if p == "nuc":
            return None
        return a["input"], "vector", p, dim, a["keepdim"]
    if t is torch.linalg.vector_norm:
        a = _bind(fn, ("input", "ord", "dim", "keepdim", "dtype", "out"), dict(ord=2, keepdim=False),
                  keyword_only=("dtype", "out"))
        return None if a is None else (a["input"], "vector", a["ord"], a.get("dim"), a["keepdim"])
    if t is torch.linalg.matrix_norm:
        a = _bind(fn, ("input", "ord", "dim", "keepdim", "dtype", "out"), dict(ord="fro", dim=(-2, -1), keepdim=False),
                  keyword_only=("dtype", "out"))
        return None if a is None else (a["input"], "matrix", a["ord"], a["dim"], a["keepdim"])
    if t is torch.linalg.norm:
        a = _bind(fn, ("input", "ord", "dim", "keepdim", "out", "dtype"), dict(keepdim=False),
                  keyword_only=("out", "dtype"))
        if a is None:
            return None
        ord, dim, x = a.get("ord"), a.get("dim"), a["input"]
        rank = len(_meta_shape(x) or []) if isinstance(x, torch.fx.Node) else -1
        dims = _ints(dim) if dim is not None else None
        if dim is None and ord is None:
            return x, "vector", 2, None, a["keepdim"]
        if (dims is not None and len(dims) == 2) or (dim is None and rank == 2):
            return x, "matrix", "fro" if ord is None else ord, dims or [-2, -1], a["keepdim"]
        if dims is not None and len(dims) == 1 or (dim is None and rank == 1):
            return x, "vector", 2 if ord is None else ord, dim, a["keepdim"]
    return None


def fp32_positive_norm(fn, ins, ord) -> bool:
    """Whether capture_fp32_norms takes this vector norm (a finite order
    > 0 other than 1 and 2, on a real fp32 input)."""
    from .capture_fp32_norms import fp32_norm_nodes, in_fp32
    return _number(ord) and not isinstance(ord, bool) and float(ord) > 0 and in_fp32(float(ord)) \
        and fp32_norm_nodes(fn, ins, None) is not None


def _norm_reduction_nodes(fn, ins) -> Optional[List[Node]]:
    if _norm_nodes(fn, ins) is not None:
        return None                                # capture_calls' 2-norm over dims
    call = _norm_call(fn)
    if call is None:
        return None
    x, kind, ord, dim, keepdim = call
    if kind == "vector" and fp32_positive_norm(fn, ins, ord):
        return None                                # capture_fp32_norms: p other than 1, 2 in fp32
    shape, out = _meta_shape(x) if isinstance(x, torch.fx.Node) else None, _meta_shape(fn)
    if shape is None or out is None or not shape or not isinstance(keepdim, bool) or _dtype(x) != torch.float32:
        return None
    dims = _dims(dim, len(shape))
    if dims is None or (kind == "matrix" and (len(_ints(dim) or []) != 2 or len(dims) != 2)):
        return None
    s = _Steps(fn.name)
    if kind == "matrix":
        rows, cols = (d % len(shape) for d in _ints(dim))
        cur = _matrix_norm(s, x.name, shape, [rows, cols], ord)
    else:
        cur = _vector_norm(s, x.name, shape, dims, ord)
    if cur is None:
        return None
    _view(s, cur, out)
    return s.done()


# sums, means, products ----------------------------------------------------------

def _prod_whole_nodes(fn, ins) -> Optional[List[Node]]:
    """x.prod() / torch.prod(x) of every element: x viewed as [1, n], its
    first and second halves multiplied (an odd last element waits a round)
    until one value is left: ceil(log2 n) rounds of int8 muls."""
    if fn.target not in ("prod", torch.prod):
        return None
    a = _bind(fn, ("input", "dtype"))
    if a is None or not isinstance(a["input"], torch.fx.Node) or _dtype(a["input"]) != torch.float32:
        return None
    shape, out = _meta_shape(a["input"]), _meta_shape(fn)
    n = int(np.prod(shape)) if shape is not None else 0
    if shape is None or out is None or n == 0 or n > MAX_PRODUCT_TERMS:
        return None
    s = _Steps(fn.name)
    cur = _view(s, ins[0], [1, n])
    while n > 1:
        half = n // 2
        low = s("slice", [cur], dim=1, start=0, end=half)
        high = s("slice", [cur], dim=1, start=half, end=2 * half)
        prod = s("mul", [low, high])
        if n % 2:
            prod = s("cat", [prod, s("slice", [cur], dim=1, start=n - 1, end=n)], dim=1)
        cur, n = prod, half + n % 2
    _view(s, cur, out)
    return s.done()


# more elements than this would be as many values, each an int8 product
MAX_PRODUCT_TERMS = 4096


def _nan_nodes(fn, ins) -> Optional[List[Node]]:
    """x.nansum(dim, keepdim) / x.nanmean: where(x != x, 0, x) summed; the
    mean that sum over the count of values that are not NaN (a mean of the
    0/1 of x == x: 1 when no value is NaN, as in the int8 program)."""
    if fn.target not in ("nansum", torch.nansum, "nanmean", torch.nanmean):
        return None
    a = _bind(fn, ("input", "dim", "keepdim", "dtype", "out"), dict(keepdim=False))
    if a is None or not isinstance(a["input"], torch.fx.Node) or _dtype(a["input"]) != torch.float32:
        return None
    shape, out = _meta_shape(a["input"]), _meta_shape(fn)
    dims = _dims(a.get("dim"), len(shape or []))
    if shape is None or out is None or dims is None or not shape or 0 in shape or not isinstance(a["keepdim"], bool):
        return None
    s = _Steps(fn.name)
    nan = s("compare", [ins[0], ins[0]], kind="ne")
    kept = s("where", [nan, s.const(0.0), ins[0]])
    if fn.target in ("nansum", torch.nansum):
        _view(s, _reduce(s, kept, shape, dims, "sum"), out)
        return s.done()
    share = _reduce(s, s("bool_to", [s("logical", [nan], kind="not")], dtype="float32"), shape, dims, "mean")
    _view(s, s("div", [_reduce(s, kept, shape, dims, "mean"), share]), out)
    return s.done()


def _var_mean_elements(fn, ins):
    """torch.var_mean / std_mean(x, dim, unbiased / correction, keepdim):
    (var or std, mean), each made when its element is read; the variance
    is the two-pass mean of squared deviations (capture_rewrites' form)."""
    if fn.target not in (torch.var_mean, torch.std_mean):
        return None
    args, kw = list(fn.args), dict(fn.kwargs)
    if len(args) == 2 and isinstance(args[1], bool):       # var_mean(x, unbiased)
        kw["unbiased"] = args.pop()
    if len(args) > 4 or set(kw) - {"dim", "unbiased", "keepdim", "correction"}:
        return None
    a = dict(zip(("input", "dim", "unbiased", "keepdim"), args), **kw)
    x = a["input"]
    correction = a.get("correction")
    if correction is None:
        correction = 1 if a.get("unbiased", True) is not False else 0
    keepdim = a.get("keepdim", False)
    shape = _meta_shape(x) if isinstance(x, torch.fx.Node) else None
    dims = _dims(a.get("dim"), len(shape or []))
    if shape is None or not shape or dims is None or not isinstance(keepdim, bool) or not _number(correction) \
            or not isinstance(a.get("unbiased", True), bool) or _dtype(x) != torch.float32:
        return None
    std = fn.target is torch.std_mean

    def element(item: torch.fx.Node, index):
        out = _meta_shape(item)
        if index not in (0, 1) or out is None:
            return None
        s = _Steps(item.name)
        rows, k, n = _lines(s, ins[0], shape, dims)
        mean = s("mean", [rows], dim=[1], keepdim=True)
        if index == 1:
            _view(s, mean, out)
            return s.done()
        if n - correction <= 0:
            return None                  # torch gives inf or nan: nothing int8 holds
        dev = s("sub", [rows, s("cat", [mean] * n, dim=1) if n > 1 else mean])
        cur = s("mean", [s("elementwise", [dev], fn="square")], dim=[1], keepdim=True)
        if correction:
            cur = s("mul", [cur, s.const(n / (n - correction))])
        if std:
            cur = s("elementwise", [cur], fn="sqrt")
        _view(s, cur, out)
        return s.done()
    return element


# differences, running and order reductions -----------------------------------------

def _diff_nodes(fn, ins) -> Optional[List[Node]]:
    """torch.diff(x, n, dim, prepend, append): prepend and append joined to
    x along dim, then n times the slice [1:] minus the slice [:-1]."""
    if fn.target not in (torch.diff, "diff"):
        return None
    a = _bind(fn, ("input", "n", "dim", "prepend", "append"), dict(n=1, dim=-1))
    if a is None or not isinstance(a["input"], torch.fx.Node) or _dtype(a["input"]) != torch.float32:
        return None
    n, dim, shape, out = a["n"], a["dim"], _meta_shape(a["input"]), _meta_shape(fn)
    if shape is None or out is None or not shape or not isinstance(n, int) or isinstance(n, bool) or n < 0 \
            or not isinstance(dim, int) or isinstance(dim, bool) or not -len(shape) <= dim < len(shape):
        return None
    dim %= len(shape)
    parts = []
    for key in ("prepend", "append"):
        v = a.get(key)
        if v is None:
            continue
        vs = _meta_shape(v) if isinstance(v, torch.fx.Node) else None
        if vs is None or _dtype(v) != torch.float32 or len(vs) != len(shape) \
                or any(p != q for d, (p, q) in enumerate(zip(vs, shape)) if d != dim):
            return None                       # a number or a tensor to broadcast: not covered
        parts.append((key, v.name, vs[dim]))
    s = _Steps(fn.name)
    pieces = [p for k, p, _ in parts if k == "prepend"] + [ins[0]] + [p for k, p, _ in parts if k == "append"]
    cur = s("cat", pieces, dim=dim) if len(pieces) > 1 else ins[0]
    length = shape[dim] + sum(m for _, _, m in parts)
    for _ in range(n):
        if length <= 0:
            break
        cur = s("sub", [s("slice", [cur], dim=dim, start=1, end=length), s("slice", [cur], dim=dim, start=0,
                                                                               end=length - 1)])
        length -= 1
    if length <= 0:
        return None                           # torch's result is empty
    if not s.nodes or cur == ins[0]:
        s("identity", [cur])                  # n = 0: the input (and what was joined to it)
    return s.done()


def _logcumsumexp_nodes(fn, ins) -> Optional[List[Node]]:
    """x.logcumsumexp(dim): y_0 = x_0, y_i = y_(i-1) + softplus(x_i - y_(i-1))
    (= log(exp(y_(i-1)) + exp(x_i)), torch's logaddexp, with no overflow),
    the one-wide slices along dim joined."""
    if fn.target not in (torch.logcumsumexp, "logcumsumexp"):
        return None
    a = _bind(fn, ("input", "dim"))
    if a is None or not isinstance(a["input"], torch.fx.Node) or _dtype(a["input"]) != torch.float32:
        return None
    shape, dim = _meta_shape(a["input"]), a.get("dim")
    if shape is None or not shape or not isinstance(dim, int) or isinstance(dim, bool) \
            or not -len(shape) <= dim < len(shape) or shape[dim] > MAX_RUNNING_TERMS or shape[dim] == 0:
        return None
    dim %= len(shape)
    s = _Steps(fn.name)
    running = [s("slice", [ins[0]], dim=dim, start=0, end=1)]
    for i in range(1, shape[dim]):
        step = s("sub", [s("slice", [ins[0]], dim=dim, start=i, end=i + 1), running[-1]])
        running.append(s("add", [running[-1], s("softplus", [step], beta=1.0, threshold=20.0)]))
    if len(running) > 1:
        s("cat", running, dim=dim)
    else:
        s("identity", running)
    return s.done()


# a longer dim would be as many chained int8 steps, each rounding again
MAX_RUNNING_TERMS = 64

INTERPOLATIONS = ("linear", "lower", "higher", "nearest", "midpoint")


def _quantile_nodes(fn, ins, by_name) -> Optional[List[Node]]:
    """torch.quantile / nanquantile(x, q, dim, keepdim, interpolation) with
    q a number or a constant 1-D tensor: x sorted along dim (or flattened),
    then for each q the values at the two positions around q * (n - 1),
    interpolated by constant weights (torch's rule per interpolation;
    'nearest' rounds half to even as torch)."""
    if fn.target not in (torch.quantile, "quantile", torch.nanquantile, "nanquantile"):
        return None
    a = _bind(fn, ("input", "q", "dim", "keepdim", "interpolation", "out"),
              dict(keepdim=False, interpolation="linear"))
    if a is None or not isinstance(a["input"], torch.fx.Node) or _dtype(a["input"]) != torch.float32 \
            or a["interpolation"] not in INTERPOLATIONS or not isinstance(a["keepdim"], bool):
        return None
    q = a["q"]
    if isinstance(q, torch.fx.Node):
        node = by_name.get(q.name)
        if node is not None and node.op != "constant":
            from .capture_computed_quantile import computed_quantile_nodes
            return computed_quantile_nodes(fn, a, ins, by_name)
        if node is None or np.asarray(node.attrs["value"]).ndim > 1:
            return None
        qs = [float(v) for v in np.asarray(node.attrs["value"], np.float32).reshape(-1)]
    elif _number(q):
        qs = [float(q)]
    else:
        return None
    shape, out, dim = _meta_shape(a["input"]), _meta_shape(fn), a.get("dim")
    if shape is None or out is None or not qs or any(not 0 <= v <= 1 for v in qs) or 0 in shape:
        return None
    if dim is not None and (not isinstance(dim, int) or isinstance(dim, bool) or not -max(len(shape), 1) <= dim
                            < max(len(shape), 1)):
        return None
    s = _Steps(fn.name)
    dims = _dims(dim, len(shape)) if shape else [0]
    shape = shape or [1]
    rows, k, n = _lines(s, ins[0], shape, dims)
    ordered = s("sort", [rows], dim=1, descending=False, k=None, pick=None, keepdim=False, rule=None)
    picks = []
    for v in qs:
        # torch's position q * (n - 1) in float32, then its rule per interpolation
        pos = float(np.float32(v) * np.float32(n - 1))
        lo, hi = int(math.floor(pos)), int(math.ceil(pos))
        rule = a["interpolation"]
        if rule == "nearest":
            lo = hi = int(np.round(pos))            # half to even, as torch's round
        elif rule == "lower":
            hi = lo
        elif rule == "higher":
            lo = hi
        cur = s("slice", [ordered], dim=1, start=lo, end=lo + 1)
        if hi != lo:
            w = 0.5 if rule == "midpoint" else pos - lo
            high = s("slice", [ordered], dim=1, start=hi, end=hi + 1)
            cur = s("add", [s("mul", [cur, s.const(1.0 - w)]), s("mul", [high, s.const(w)])])
        picks.append(_view(s, cur, [1, k]))
    # each q's values in the order of the dims kept: q's own dim first, as torch
    _view(s, s("cat", picks, dim=0) if len(picks) > 1 else picks[0], out)
    return s.done()


# covariance -------------------------------------------------------------------------

def _cov_nodes(fn, ins) -> Optional[List[Node]]:
    """torch.cov(x, correction=c) of x [V, N] (a 1-D x: one variable):
    D = x minus each row's mean, D @ D^T / (N - c) (an int8 batch matmul);
    torch.corrcoef: each row of D times the rsqrt of its sum of squares,
    the product of those, clamped to [-1, 1] as torch clamps it."""
    corr = fn.target in (torch.corrcoef, "corrcoef")
    if fn.target not in (torch.cov, "cov") and not corr:
        return None
    a = _bind(fn, ("input",) if corr else ("input", "correction", "fweights", "aweights"), dict(correction=1),
              keyword_only=() if corr else ("correction", "fweights", "aweights"))
    if a is None or a.get("fweights") is not None or a.get("aweights") is not None \
            or not isinstance(a["input"], torch.fx.Node) or _dtype(a["input"]) != torch.float32:
        return None
    shape, out, c = _meta_shape(a["input"]), _meta_shape(fn), a.get("correction", 1)
    if shape is None or out is None or len(shape) not in (1, 2) or not _number(c) or 0 in shape:
        return None
    v, n = (1, shape[0]) if len(shape) == 1 else shape
    if not corr and n - c <= 0:
        return None                               # torch's inf / nan
    s = _Steps(fn.name)
    rows = _view(s, ins[0], [v, n])
    mean = s("mean", [rows], dim=[1], keepdim=True)
    dev = s("sub", [rows, s("cat", [mean] * n, dim=1) if n > 1 else mean])
    if corr:
        scale = s("elementwise", [_reduce(s, s("elementwise", [dev], fn="square"), [v, n], [1], "sum")],
                  fn="rsqrt")
        dev = s("mul", [dev, s("cat", [scale] * n, dim=1) if n > 1 else scale])
    left = _view(s, dev, [1, v, n])
    right = _view(s, s("permute", [dev], dims=[1, 0]), [1, n, v])
    cur = s("matmul", [left, right])
    if corr:
        cur = s("clamp", [cur], lo=-1.0, hi=1.0)
    else:
        cur = s("mul", [cur, s.const(1.0 / (n - c))])
    _view(s, cur, out)
    return s.done()


# the dispatch ---------------------------------------------------------------------------

def reduction_nodes(fn: torch.fx.Node, ins: List[str], by_name):
    """The nodes of a call this module rewrites; for a call whose result is
    a tuple, a function (getitem fx node, index) -> its nodes or None;
    None for a call it does not cover."""
    if fn.op not in ("call_function", "call_method") or not fn.args or not isinstance(fn.args[0], torch.fx.Node):
        return None
    try:
        hash(fn.target)
    except TypeError:
        return None
    for make in (_count_nodes, _any_all_nodes):
        nodes = make(fn, by_name)
        if nodes is not None:
            return nodes
    if _quantile_nodes(fn, ins, by_name) is not None:
        return _quantile_nodes(fn, ins, by_name)
    for make in (_argmax_whole_nodes, _extreme_whole_nodes, _norm_reduction_nodes, _prod_whole_nodes, _nan_nodes,
                 _diff_nodes, _logcumsumexp_nodes, _cov_nodes, _aminmax_elements, _var_mean_elements):
        made = make(fn, ins)
        if made is not None:
            return made
    return None

