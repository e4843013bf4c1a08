"""torch.equal and torch.allclose as tensors (issue 15). Both return a
Python bool in eager torch; torch.fx records each as one node whose value
is that bool, which no program tensor holds. Where the result is read as a
value (a program output, `x * torch.equal(a, b)`, `torch.where(...)` of
it), the call is rewritten in the fx graph as the 0-d bool tensor of the
same truth, which the rest of capture already runs:

- torch.equal(a, b) / a.equal(b): (a == b).all() when a and b have one
  shape (torch's rule: the same size and every element equal, NaN never
  equal as in ==; torch 1.13 compares operands of two dtypes as == does,
  promoted), torch.zeros((), dtype=torch.bool) when their shapes differ
  (torch's False, whatever the values);
- torch.allclose(a, b, rtol, atol, equal_nan) / a.allclose(b, ...):
  torch.isclose(a, b, rtol, atol, equal_nan).all(), torch's own
  definition (its broadcasting too).

A program output made so is a 0-d bool tensor (torch.tensor(result) of
torch's bool); in arithmetic a 0-d bool tensor gives the values torch's
bool does (True as 1, False as 0). Python control flow on the result (`if
torch.allclose(a, b):`) is a branch on the input's values, which a static
program (one path for every input) cannot take: tracing refuses it in one
line naming the line and pointing at torch.where (capture_tracer), before
this pass runs. Real and complex operands alike (the complex == and
isclose are ptec.capture_complex_products')."""
from __future__ import annotations

from typing import Callable

import torch

_EQUAL = (torch.equal, "equal")
_ALLCLOSE = (torch.allclose, "allclose")
_ALLCLOSE_ARGS = ("input", "other", "rtol", "atol", "equal_nan")


def _meta(a):
    return a.meta.get("tensor_meta") if isinstance(a, torch.fx.Node) else None


def _is(fn: torch.fx.Node, names) -> bool:
    return (fn.op == "call_function" and fn.target in names) or (fn.op == "call_method" and fn.target in names)


def _equal_shapes(fn: torch.fx.Node):
    """Whether torch.equal's operands have one shape (None: not known)."""
    if len(fn.args) != 2 or fn.kwargs:
        return None
    a, b = (_meta(v) for v in fn.args)
    if a is None or b is None or not hasattr(a, "shape") or not hasattr(b, "shape"):
        return None
    return tuple(a.shape) == tuple(b.shape)


def _as_tensor(gm: torch.fx.GraphModule, fn: torch.fx.Node) -> bool:
    """fn (torch.equal / allclose or their methods) replaced by its 0-d bool
    tensor; False when fn is neither or its operands do not fit."""
    if _is(fn, _EQUAL):
        same = _equal_shapes(fn)
        if same is None:
            return False
        with gm.graph.inserting_before(fn):
            if same:
                each = gm.graph.call_function(torch.eq, tuple(fn.args))
                whole = gm.graph.call_method("all", (each,))
            else:
                whole = gm.graph.call_function(torch.zeros, ((),), {"dtype": torch.bool})
    elif _is(fn, _ALLCLOSE):
        args = dict(zip(_ALLCLOSE_ARGS, fn.args))
        if set(args) & set(fn.kwargs) or set(fn.kwargs) - set(_ALLCLOSE_ARGS) or len(fn.args) > 5:
            return False
        args.update(fn.kwargs)
        if not all(isinstance(args.get(k), torch.fx.Node) for k in ("input", "other")):
            return False
        with gm.graph.inserting_before(fn):
            each = gm.graph.call_function(torch.isclose, (args.pop("input"), args.pop("other")), args)
            whole = gm.graph.call_method("all", (each,))
    else:
        return False
    fn.replace_all_uses_with(whole)
    gm.graph.erase_node(fn)
    return True


def bool_calls_as_tensors(gm: torch.fx.GraphModule, propagate: Callable[[], None]) -> None:
    """Rewrite torch.equal / torch.allclose (functions and methods) in gm's
    graph as their 0-d bool tensors; propagate() records the new nodes'
    shapes when any was made."""
    changed = False
    for fn in list(gm.graph.nodes):
        changed |= _as_tensor(gm, fn)
    if changed:
        for fn in gm.graph.nodes:
            fn.meta.pop("number", None)     # (x + equal * 4.0 was a Python number: now a tensor, propagated again)
        gm.graph.lint()
        gm.recompile()
        propagate()
