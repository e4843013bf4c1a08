"""Functions registered with torch.fx.wrap traced through (probe: trace
fidelity).

`torch.fx.wrap("name")` (or `@torch.fx.wrap`) at a module's top level
makes fx keep every call of that function as one call_function node: its
author's way around Python fx cannot trace (control on values, loops on
sizes). ptec has no kernel for an arbitrary function, so such a model was
refused ("no kernel for wrapped_fn") even when the body traces with the
example's values known (capture_tracer: sizes, dtypes, pieces are Python
values). The body is traced instead, its ops recorded one by one; when
that fails (the body needs a value only known when the program runs), the
nodes it made are removed and the call stays one node, refused in one
line naming it, as before.

ptec's own leaves (ptec_state / masked_softmax, torchvision's roi_align
/ nms / ..., which fx.wrap too: the tracer's autowrap functions) and torchvision's MultiScaleRoIAlign
helpers (capture_torchvision lowers the module whole) stay one node."""
from __future__ import annotations

import torch.fx

try:
    from torch.fx._symbolic_trace import _wrapped_fns_to_patch
except ImportError:         # a torch without fx.wrap's registry: nothing is traced through
    _wrapped_fns_to_patch = []

# torch's, ptec's own leaves (ptec_state, masked_softmax: capture_modules), MultiScaleRoIAlign's helpers
_KEPT_MODULES = ("torch.", "ptec.", "torchvision.ops.poolers")
TRACED_THROUGH = "ptec_traced_through"


def _registered(target) -> bool:
    """target is a Python function torch.fx.wrap registered (by its module's globals and name)."""
    glob, name = getattr(target, "__globals__", None), getattr(target, "__name__", None)
    if glob is None or name is None:
        return False
    return any(g is glob and n == name for g, n in _wrapped_fns_to_patch)


def wrapped_traced_through(tracer, kind, target, args, kwargs):
    """The traced result of target's body when it is a function fx.wrap
    registered and its body traces, else None (the call stays one node)."""
    if kind != "call_function" or getattr(tracer, "_evaluating", False) or not _registered(target):
        return None
    if id(target) in getattr(tracer, "_autowrap_function_ids", ()) \
            or (getattr(target, "__module__", None) or "").startswith(_KEPT_MODULES):
        return None
    graph = tracer.graph
    before = set(graph.nodes)
    try:
        result = target(*args, **kwargs)
    except Exception:           # noqa: BLE001 - the body does not trace: the call stays one node (refused)
        result = None
    if isinstance(result, torch.fx.Proxy):
        # fx's wrapper marks what it returns "is_wrapped", and GraphModule's code then calls
        # torch.fx.wrap on that node's name (registering "torch.cat" for good): unmark_traced_through
        result.node.meta[TRACED_THROUGH] = True
        return result
    # a tuple or a constant (fx's wrapper reads .node of what it returns), or a failure: one node
    made = [n for n in graph.nodes if n not in before]
    for n in reversed(made):
        if not n.users:
            graph.erase_node(n)
    return None


def unmark_traced_through(graph: torch.fx.Graph) -> None:
    """The "is_wrapped" mark fx's wrapper put on a traced-through body's
    last node removed (wrapped_traced_through)."""
    for fn in graph.nodes:
        if fn.meta.pop(TRACED_THROUGH, False):
            fn.meta.pop("is_wrapped", None)
