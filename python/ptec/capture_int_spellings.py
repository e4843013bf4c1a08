"""Two spellings of integer calls that ptec runs under another name
(probe 9), rewritten in the fx graph before capture reads it:

* x.type_as(y) is x.to(y.dtype) (torch's definition): the call becomes
  `x.to(<y's traced dtype>)`, so it runs wherever `.to(dtype)` runs and is
  refused where that is (`(y > 0).long().type_as(y)`, `m.type_as(i)`,
  `i.int().type_as(j)`). A type_as that keeps the dtype is capture_plumbing's
  (taken out), which runs after this.
* clamp_min / clamp_max of an integer tensor (`m.sum(1).clamp_min(1)`,
  `i.argmax(-1).clamp_max(3)`, torch.clamp_min(i, 1), the in-place
  `i.clamp_min_(1)` once made out of place) are torch.clamp(i, min=v) /
  torch.clamp(i, max=v), which capture_int_math runs exactly (a Python
  int or an integer tensor bound). A float tensor's clamp_min stays
  capture_elementwise_math's.

Neither changes a traced dtype or shape, so no propagation is needed."""
from __future__ import annotations

from typing import Optional

import torch
import torch.fx

_INTS = (torch.int64, torch.int32, torch.int16, torch.uint8, torch.int8)
_SIDES = {"clamp_min": "min", "clamp_max": "max", torch.clamp_min: "min", torch.clamp_max: "max"}


def _dtype(a) -> Optional[torch.dtype]:
    meta = a.meta.get("tensor_meta") if isinstance(a, torch.fx.Node) else None
    return getattr(meta, "dtype", None)


def type_as_to(gm: torch.fx.GraphModule) -> None:
    """x.type_as(y) with y's traced dtype known: x.to(that dtype), in place."""
    changed = False
    for fn in gm.graph.nodes:
        if fn.op == "call_method" and fn.target == "type_as" and len(fn.args) == 2 and not fn.kwargs \
                and isinstance(fn.args[0], torch.fx.Node) and _dtype(fn.args[1]) is not None:
            fn.target, fn.args = "to", (fn.args[0], _dtype(fn.args[1]))
            changed = True
    if changed:
        gm.recompile()


def _side(fn: torch.fx.Node) -> Optional[str]:
    if fn.op not in ("call_function", "call_method"):
        return None
    try:
        return _SIDES.get(fn.target)
    except TypeError:             # an unhashable target is neither
        return None


def int_clamp_sides(gm: torch.fx.GraphModule) -> None:
    """clamp_min / clamp_max of an integer tensor: torch.clamp with that one bound, in place."""
    changed = False
    for fn in gm.graph.nodes:
        side = _side(fn)
        if side is None or not fn.args or not isinstance(fn.args[0], torch.fx.Node) \
                or _dtype(fn.args[0]) not in _INTS:
            continue
        args = dict(zip(("input", side), fn.args))
        args.update(fn.kwargs)
        if set(args) != {"input", side} or len(fn.args) > 2:
            continue
        fn.op, fn.target = "call_function", torch.clamp
        fn.args, fn.kwargs = (args["input"],), {side: args[side]}
        changed = True
    if changed:
        gm.recompile()

