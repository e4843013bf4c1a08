"""A p-norm written out by hand, `x.abs().pow(p).sum(dim).pow(1 / p)`
(also `** p`, torch.pow, torch.abs, torch.sum, keepdim), traced as the
one call torch.linalg.vector_norm(x, p, dim, keepdim) it equals, so it
takes capture_fp32_norms' fp32 steps (probe 8). Step by step in int8,
|x|^p sat on a grid sized by the largest row and a short row's terms
rounded to 0 (9.9 output steps at p = 3 over 8 elements).

Only for p finite and not 0, 1 or 2 (the orders capture_fp32_norms
takes), an outer exponent within 1e-9 of 1 / p, and a chain whose inner
values have no other reader (they are then dropped)."""
from __future__ import annotations

import math
import operator
from typing import Optional

import torch
import torch.fx

_POW = (operator.pow, torch.pow, "pow")
_ABS = (torch.abs, "abs", operator.abs)
_SUM = (torch.sum, "sum")


def is_call(fn, targets) -> bool:
    """fn is a call node of one of `targets` (functions or method names)."""
    if not isinstance(fn, torch.fx.Node) or fn.op not in ("call_function", "call_method"):
        return False
    try:
        return fn.target in targets
    except TypeError:
        return False


def _exponent(fn) -> Optional[float]:
    """The number e of `t ** e` / t.pow(e) / torch.pow(t, e), else None."""
    if not is_call(fn, _POW) or len(fn.args) != 2 or fn.kwargs:
        return None
    e = fn.args[1]
    return float(e) if isinstance(e, (int, float)) and not isinstance(e, bool) else None


def _only_reader(fn, reader) -> bool:
    return list(fn.users) == [reader]


def norm_chains_as_calls(graph: torch.fx.Graph) -> None:
    for root in list(graph.nodes):
        outer = _exponent(root)
        if outer is None or outer == 0:
            continue
        total = root.args[0]
        if not is_call(total, _SUM) or not _only_reader(total, root):
            continue
        names = ("input", "dim", "keepdim")
        got = dict(zip(names, total.args))
        if any(k in got or k not in names for k in total.kwargs):
            continue
        got.update(total.kwargs)
        powered, dim, keepdim = got.get("input"), got.get("dim"), got.get("keepdim", False)
        p = _exponent(powered)
        if p is None or not math.isfinite(p) or p in (0.0, 1.0, 2.0) or abs(outer * p - 1.0) > 1e-9 \
                or not _only_reader(powered, total) or not isinstance(keepdim, bool) or dim is None:
            continue
        size = powered.args[0]
        if not is_call(size, _ABS) or len(size.args) != 1 or size.kwargs or not _only_reader(size, powered):
            continue
        x = size.args[0]
        if not isinstance(x, torch.fx.Node):
            continue
        with graph.inserting_before(root):
            call = graph.call_function(torch.linalg.vector_norm, (x, p, dim, keepdim))
        call.meta.update({k: v for k, v in root.meta.items() if k != "tensor_meta"})
        root.replace_all_uses_with(call)
        for dead in (root, total, powered, size):
            graph.erase_node(dead)
