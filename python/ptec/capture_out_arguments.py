"""out= arguments into a tensor made for them (probe R5): `torch.add(x, 1.0,
out=buf)` with buf = torch.empty(...) / torch.empty_like(x) / torch.zeros(...)
/ x.new_zeros(...) made in forward.

torch writes the call's result into buf (resized to the result's shape),
so every later reader of buf reads the result: the call runs as its
out-of-place form, buf's later readers read the call's node, and buf itself
(read by nothing else) leaves the graph, so an empty_like with undefined
contents is never computed. Only when buf is made in forward, read by
nothing before the call, and of the result's dtype as far as its
constructor says (no dtype= but float32): else the call is left to
capture_in_place, which follows out= into other tensors or refuses it."""
from __future__ import annotations

import torch
import torch.fx

# constructors of a tensor whose contents an out= write replaces whole
_MADE = {torch.empty, torch.zeros, torch.ones, torch.full, torch.empty_like, torch.zeros_like, torch.ones_like,
         torch.full_like, "new_empty", "new_zeros", "new_ones", "new_full", "empty_like", "zeros_like"}


def _made_in_forward(b: torch.fx.Node) -> bool:
    if b.op == "get_attr":          # fx folds a constructor without the input into a constant
        return str(b.target).startswith("_tensor_constant")
    if b.op not in ("call_function", "call_method"):
        return False
    try:
        made = b.target in _MADE
    except TypeError:
        return False
    return made and b.kwargs.get("dtype", torch.float32) is torch.float32


def out_arguments_as_results(gm: torch.fx.GraphModule) -> None:
    """Each call writing out= into a tensor made for it (module doc) as the
    call's result, in place in gm's graph."""
    order = {fn: i for i, fn in enumerate(gm.graph.nodes)}
    changed = False
    for fn in list(gm.graph.nodes):
        b = fn.kwargs.get("out") if fn.op in ("call_function", "call_method") else None
        if not isinstance(b, torch.fx.Node) or not _made_in_forward(b):
            continue
        if any(order[u] < order[fn] for u in b.users):     # read (or viewed) before the write: not ours
            continue
        fn.kwargs = {k: v for k, v in fn.kwargs.items() if k != "out"}
        for u in list(b.users):
            if u is not fn:
                u.replace_input_with(b, fn)
        if not b.users:
            gm.graph.erase_node(b)
        changed = True
    if changed:
        gm.recompile()
