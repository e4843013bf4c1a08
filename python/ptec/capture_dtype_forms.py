"""Two spellings whose dtype torch decides from its arguments (probe R6, R7):

* a reduction's dtype= of a value of another dtype: `(x > 0).sum(-1,
  dtype=torch.float32)`, `torch.cumsum(m, 0, dtype=torch.float32)`,
  `i.mean(dtype=torch.float32)`, `b.prod(-1, dtype=...)`. torch converts the
  input to dtype first and reduces in it, so the call is `x.to(dtype)`
  followed by the reduction without dtype= (the casts and reductions ptec
  runs), for dtype float32, float64 or int64 (whose reductions keep it);
  into int32 the call keeps dtype= (an int32 sum without it is int64):
  `i.sum(dtype=torch.int32)` of the int32 cast, capture_int_math's.
  A float input's float dtype= is capture_plumbing's (dropped: ptec
  computes float32).
* torch.where(c, a, b) with a, b Python ints (not bools): torch 1.13 gives
  an int64 tensor, a where c is true and b elsewhere: `c.long() * (a - b) +
  b` (bool_to int64 and integer arithmetic, exact; `c.long()` alone for
  (1, 0)).

* torch.zeros_like(i) / ones_like(i) / full_like(i, v) of an integer value
  i (int64, int32, or a narrow int), of i's own dtype: torch's constant of
  i's shape and dtype, spelled `i * 0 + v` (integer arithmetic, exact: the
  int64 / int32 kernels of capture_int_math, a narrow value's through
  capture_narrow_ints), v the fill converted into the dtype by torch itself
  (full_like(i, 2.7) is 2).

All change the fx graph before capture reads it; shapes are propagated
again when anything changed."""
from __future__ import annotations

import operator

import torch
import torch.fx
import torch.nn.functional as F

# calls whose dtype= keyword converts their input first
_DTYPE_KEYWORD = {"sum", "mean", "nansum", "prod", "cumsum", "cumprod", "softmax", "log_softmax",
                  torch.sum, torch.mean, torch.nansum, torch.prod, torch.cumsum, torch.cumprod,
                  torch.softmax, torch.log_softmax, F.softmax, F.log_softmax}


# the dtype= a reduction's input is cast into first; True: dtype= then dropped (the cast's reduction keeps
# that dtype), False: kept (an int32 sum without dtype= would be int64)
_CASTS = {torch.float32: True, torch.float64: True, torch.int64: True, torch.int32: False}


def _dtype(a):
    meta = a.meta.get("tensor_meta") if isinstance(a, torch.fx.Node) else None
    return getattr(meta, "dtype", None)


def _takes_dtype(fn: torch.fx.Node) -> bool:
    if fn.op not in ("call_function", "call_method") or not fn.args or not isinstance(fn.args[0], torch.fx.Node):
        return False
    try:
        known = fn.target in _DTYPE_KEYWORD
    except TypeError:
        return False
    dtype = fn.kwargs.get("dtype")
    return known and dtype in _CASTS and _dtype(fn.args[0]) not in (None, dtype)


def _int_where(fn: torch.fx.Node) -> bool:
    if fn.op != "call_function" or fn.target is not torch.where or len(fn.args) != 3 or fn.kwargs:
        return False
    c, a, b = fn.args
    ints = all(isinstance(v, int) and not isinstance(v, bool) for v in (a, b))
    return ints and isinstance(c, torch.fx.Node) and _dtype(c) is torch.bool


_FILLS = {torch.zeros_like: 0, torch.ones_like: 1, torch.full_like: None}
_INTS = (torch.int64, torch.int32, torch.int16, torch.uint8, torch.int8)


def _int_fill(fn: torch.fx.Node):
    """The fill (a Python int) of torch.zeros_like / ones_like / full_like
    of an integer value into its own dtype, else None."""
    if fn.op != "call_function" or not fn.args or not isinstance(fn.args[0], torch.fx.Node):
        return None
    try:
        known = fn.target in _FILLS
    except TypeError:
        return None
    dtype = _dtype(fn.args[0])
    if not known or dtype not in _INTS or _dtype(fn) is not dtype \
            or set(fn.kwargs) - {"fill_value", "dtype", "memory_format", "layout", "device", "requires_grad"} \
            or fn.kwargs.get("dtype") not in (None, dtype):
        return None
    value = _FILLS[fn.target]
    if value is None:
        value = fn.args[1] if len(fn.args) > 1 else fn.kwargs.get("fill_value")
        if len(fn.args) > 2 or not isinstance(value, (int, float)):
            return None
        try:
            value = int(torch.full((), value, dtype=dtype))        # torch's conversion into the dtype
        except (RuntimeError, OverflowError, ValueError):
            return None                     # torch's own error stays the model's
    elif len(fn.args) > 1:
        return None
    return value


def dtype_forms(gm: torch.fx.GraphModule, propagate) -> None:
    """The rewrites of the module doc, in place; propagate() re-traces shapes."""
    g = gm.graph
    changed = False
    for fn in list(g.nodes):
        if _takes_dtype(fn):
            with g.inserting_before(fn):
                cast = g.call_method("to", (fn.args[0], fn.kwargs["dtype"]))
            fn.args = (cast,) + tuple(fn.args[1:])
            if _CASTS[fn.kwargs["dtype"]]:
                fn.kwargs = {k: v for k, v in fn.kwargs.items() if k != "dtype"}
            changed = True
        elif _int_where(fn):
            c, a, b = fn.args
            with g.inserting_before(fn):
                value = g.call_method("to", (c, torch.int64))
                if a - b != 1:
                    value = g.call_function(operator.mul, (value, a - b))
                if b != 0:
                    value = g.call_function(operator.add, (value, b))
            fn.replace_all_uses_with(value)
            g.erase_node(fn)
            changed = True
        elif _int_fill(fn) is not None:
            fill = _int_fill(fn)
            with g.inserting_before(fn):
                value = g.call_function(operator.mul, (fn.args[0], 0))
                if fill != 0:
                    value = g.call_function(operator.add, (value, fill))
            fn.replace_all_uses_with(value)
            g.erase_node(fn)
            changed = True
    if changed:
        gm.recompile()
        propagate()
