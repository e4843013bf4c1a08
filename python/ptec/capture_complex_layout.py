"""Layouts, running sums and products of vectors of a complex value (issue
15), on the [..., 2] pair of real and imaginary parts that
ptec.capture_complex carries, its dim kept last:

- Tensor.expand / expand_as (the pair copied out by cats), Tensor.repeat
  and torch.tile (cats of copies per dim), Tensor.narrow and Tensor.select
  / torch.select (a slice, a reshape), Tensor.movedim / moveaxis and the
  properties T, mT (a permute), mH and H (a permute and the conjugate);
- torch.zeros_like / ones_like / full_like of a complex value (the pair
  of the value: 0, 1 + 0i, c + 0i);
- torch.cumsum / Tensor.cumsum and torch.diff (n = 1, no prepend /
  append) over a dim: one linear over the dim by the lower-triangular ones
  (the difference) matrix acting on the interleaved pairs
  (capture_complex's DFT form);
- torch.outer / ger of two complex vectors: capture_complex's product of
  a column by a row;
- chunk / split / split_with_sizes / unbind of a complex value: each
  piece taken (getitem) a slice of the pair (unbind's viewed without its
  dim), the call itself a stand-in for the tuple, dropped unless read
  whole (then refused as a complex output or an unrewritten call).

torch.dot / vdot / inner of complex values are
ptec.capture_complex_products' (einsums of the parts)."""
from __future__ import annotations

import operator
from typing import List, Optional

import numpy as np
import torch

from .capture_calls import call_is, torch_functions
from .capture_rewrites import _Steps
from .ir import Node

_EXPAND = ("expand", "expand_as")
_REPEAT = ("repeat",)
_TILE = (torch.tile, "tile")
_NARROW = (torch.narrow, "narrow")
_SELECT = (torch.select, "select")
_MOVEDIM = (torch.movedim, "movedim", torch.moveaxis, "moveaxis")
_LIKE = (torch.zeros_like, torch.ones_like, torch.full_like)
_CUMSUM = (torch.cumsum, "cumsum")
_DIFF = (torch.diff, "diff")
_OUTER = (torch.outer, "outer", "ger") + torch_functions("ger")


def _int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _conj(s: _Steps, p: str, shape) -> str:
    from .capture_complex import _join, _parts
    re, im = _parts(s, p, shape)
    return _join(s, re, s("neg", [im]), len(shape))


def _repeat(s: _Steps, p: str, shape, reps) -> Optional[str]:
    if not isinstance(reps, (list, tuple)) or not all(_int(r) and r >= 1 for r in reps):
        return None
    reps = [1] * (len(shape) - len(reps)) + list(reps)
    if len(reps) < len(shape):
        return None
    full = [1] * (len(reps) - len(shape)) + list(shape)
    cur = p if len(full) == len(shape) else s("reshape", [p], target_shape=full + [2])
    for d, r in enumerate(reps):
        if r > 1:
            cur = s("cat", [cur] * r, dim=d)
    return cur if cur != p else s("identity", [p])


def _along(s: _Steps, p: str, shape, dim: int, m: np.ndarray) -> str:
    """The real matrix m [M, L] applied over dim to both parts of pair p."""
    from .capture_complex import _along as along, _interleaved
    return along(s, p, shape, dim, True, _interleaved(m.astype(np.complex128)), True)


def _vector(s: _Steps, operand) -> Optional[tuple]:
    if operand is None or operand[0] != "pair" or len(operand[2]) != 1:
        return None
    return operand[1], list(operand[2])


def _dots(fn, by_name, s: _Steps, out_shape) -> Optional[str]:
    from .capture_complex import _mul, _operand
    if len(fn.args) != 2 or fn.kwargs:
        return None
    a, b = (_vector(s, _operand(v, by_name)) for v in fn.args)
    if a is None or b is None:
        return None
    (pa, (n,)), (pb, (k,)) = a, b
    col = s("reshape", [pa], target_shape=[n, 1, 2])
    row = s("reshape", [pb], target_shape=[1, k, 2])
    return _mul(s, col, [n, 1], ("pair", row, [1, k]), [n, k])


def layout_nodes(fn, by_name, s: _Steps, x, out_shape) -> Optional[str]:
    """The pair of one layout, running sum or vector product of complex
    operand x, or None."""
    from .capture_complex import _shape, _wide, is_complex
    if call_is(fn, _OUTER):
        return _dots(fn, by_name, s, out_shape) if is_complex(fn) else None
    if x is None or x[0] != "pair" or not is_complex(fn):
        return None
    p, shape, out = x[1], list(x[2]), list(out_shape)
    rank = len(shape)
    if fn.target is getattr and fn.args[1] in ("T", "mT", "mH", "H"):
        if rank < 2 and fn.args[1] != "T":
            return None
        order = list(range(rank))
        if fn.args[1] == "T":
            order = order[::-1]
        else:
            order[-2], order[-1] = order[-1], order[-2]
        cur = s("permute", [p], dims=order + [rank]) if order != list(range(rank)) else p
        if fn.args[1] in ("mH", "H"):
            return _conj(s, cur, [shape[d] for d in order])
        return cur if cur != p else s("identity", [p])
    if call_is(fn, _EXPAND):
        return _wide(s, p, shape + [2], out + [2])
    if call_is(fn, _REPEAT):
        reps = list(fn.args[1:]) if len(fn.args) > 2 or _int(fn.args[1]) else fn.args[1]
        return _repeat(s, p, shape, reps) if not fn.kwargs else None
    if call_is(fn, _TILE):
        reps = fn.args[1] if len(fn.args) == 2 else fn.kwargs.get("dims")
        return _repeat(s, p, shape, reps)
    if call_is(fn, _NARROW) and len(fn.args) == 4 and not fn.kwargs and all(_int(v) for v in fn.args[1:]):
        dim = fn.args[1] % rank
        start = fn.args[2] % shape[dim]
        return s("slice", [p], dim=dim, start=start, end=start + fn.args[3])
    if call_is(fn, _SELECT) and len(fn.args) == 3 and not fn.kwargs and all(_int(v) for v in fn.args[1:]):
        dim = fn.args[1] % rank
        i = fn.args[2] % shape[dim]
        return s("reshape", [s("slice", [p], dim=dim, start=i, end=i + 1)], target_shape=out + [2])
    if call_is(fn, _MOVEDIM) and len(fn.args) == 3 and not fn.kwargs:
        src, dst = fn.args[1], fn.args[2]
        src, dst = ([src], [dst]) if _int(src) else (src, dst)
        if not all(_int(d) for d in list(src) + list(dst)) or len(src) != len(dst):
            return None
        src, dst = [d % rank for d in src], [d % rank for d in dst]
        order = [None] * rank
        for a, b in zip(src, dst):
            order[b] = a
        rest = iter(d for d in range(rank) if d not in src)
        order = [next(rest) if d is None else d for d in order]
        return s("permute", [p], dims=order + [rank])
    if call_is(fn, _LIKE) and set(fn.kwargs) <= {"dtype", "layout", "device", "pin_memory", "memory_format"}:
        value = 0.0 if fn.target is torch.zeros_like else 1.0 if fn.target is torch.ones_like else (
            fn.args[1] if len(fn.args) == 2 else None)
        if not isinstance(value, (int, float, complex)) or isinstance(value, bool) or _shape(fn) != shape:
            return None
        pair = np.broadcast_to(np.float32([complex(value).real, complex(value).imag]), tuple(shape) + (2,)).copy()
        return s("identity", [s.const(pair)])     # (a value: capture_complex reads constants as numbers)
    if call_is(fn, _CUMSUM) and len(fn.args) + len(fn.kwargs) == 2 and set(fn.kwargs) <= {"dim"}:
        dim = fn.args[1] if len(fn.args) == 2 else fn.kwargs["dim"]
        if not _int(dim):
            return None
        n = shape[dim % rank]
        return _along(s, p, shape, dim % rank, np.tril(np.ones((n, n))))
    if call_is(fn, _DIFF) and set(fn.kwargs) <= {"n", "dim", "prepend", "append"} and len(fn.args) <= 3 \
            and fn.kwargs.get("prepend") is None and fn.kwargs.get("append") is None:
        n = fn.args[1] if len(fn.args) > 1 else fn.kwargs.get("n", 1)
        dim = fn.args[2] if len(fn.args) > 2 else fn.kwargs.get("dim", -1)
        if n != 1 or not _int(dim) or shape[dim % rank] < 2:
            return None
        length = shape[dim % rank]
        m = np.zeros((length - 1, length))
        m[np.arange(length - 1), np.arange(1, length)], m[np.arange(length - 1), np.arange(length - 1)] = 1.0, -1.0
        return _along(s, p, shape, dim % rank, m)
    return None



_PIECES = ("chunk", torch.chunk, "split", torch.split, "unbind", torch.unbind, "split_with_sizes",
           torch.split_with_sizes)


def _pieces_of(call) -> Optional[tuple]:
    from .capture import _pieces                     # (capture imports this module's users)
    from .capture_complex import is_complex
    if not isinstance(call, torch.fx.Node) or not call_is(call, _PIECES) or not call.args \
            or not is_complex(call.args[0]):
        return None
    return _pieces(call)


def piece_nodes(fn) -> Optional[List[Node]]:
    """A chunk / split / unbind of a complex value (its stand-in: the
    pair) or one of its pieces (a slice of the pair), else None."""
    from .capture_complex import _shape
    if _pieces_of(fn) is not None:
        if any(u.op == "output" for u in fn.users):
            from .capture_calls import refuse_call
            from .capture_complex import OUTPUT
            refuse_call(fn, OUTPUT)
        if any(u.target is not operator.getitem for u in fn.users):
            return None                                 # read whole: refused as a call no rewrite covers
        return [Node(fn.name, "identity", [fn.args[0].name], {})]
    if fn.target is not operator.getitem or len(fn.args) != 2 or not isinstance(fn.args[1], int) \
            or fn.kwargs or _pieces_of(fn.args[0]) is None or _shape(fn) is None:
        return None
    dim, bounds = _pieces_of(fn.args[0])
    if not -len(bounds) <= fn.args[1] < len(bounds):
        return None
    start, end = bounds[fn.args[1]]
    s = _Steps(fn.name)
    cur = s("slice", [fn.args[0].args[0].name], dim=dim, start=start, end=end)
    s("reshape", [cur], target_shape=_shape(fn) + [2])     # (unbind's: without its dim)
    return s.done()
