"""log(softmax(x)) as log_softmax(x) (probe finding 13).

`x.softmax(-1).log()`, `torch.log(F.softmax(x, dim))` and `torch.log` of an
nn.Softmax module's output are what torch users write for log-probabilities;
computed as written, ptec's int8 softmax output (steps of 1/255 or so) loses
the small probabilities, whose logs then land tens of output steps off. The
log of a softmax is rewritten, on the fx graph before lowering, to the same
call of log_softmax (x - max - log(sum(exp(x - max)))), which is the value
torch gives wherever no probability underflows to 0 in float32 (there torch
gives -inf, log_softmax a finite value). The softmax call stays when
something else reads it."""
from __future__ import annotations

import torch
import torch.fx
import torch.nn as nn
import torch.nn.functional as F

_LOGS = {torch.log, "log"}
_SOFTMAX = {F.softmax: F.log_softmax, torch.softmax: torch.log_softmax, torch.Tensor.softmax: torch.log_softmax}


def _log_of(node: torch.fx.Node):
    """The value node takes the log of, or None when it is no plain log."""
    if node.op == "call_function" and node.target in _LOGS and len(node.args) == 1 and not node.kwargs:
        return node.args[0]
    if node.op == "call_method" and node.target == "log" and len(node.args) == 1 and not node.kwargs:
        return node.args[0]
    return None


def _log_softmax_call(graph: torch.fx.Graph, gm: torch.fx.GraphModule, sm: torch.fx.Node):
    """A new node: the log_softmax call of sm's operands, or None."""
    if sm.op == "call_function" and sm.target in _SOFTMAX:
        return graph.call_function(_SOFTMAX[sm.target], tuple(sm.args), dict(sm.kwargs))
    if sm.op == "call_method" and sm.target == "softmax":
        return graph.call_method("log_softmax", tuple(sm.args), dict(sm.kwargs))
    if sm.op == "call_module" and len(sm.args) == 1 and not sm.kwargs:
        m = gm.get_submodule(sm.target)
        if type(m) is nn.Softmax and m.dim is not None:
            return graph.call_function(F.log_softmax, (sm.args[0],), {"dim": m.dim})
    return None


def log_of_softmax(gm: torch.fx.GraphModule) -> None:
    """Each log of a softmax as that softmax's log_softmax (module docstring)."""
    graph, changed = gm.graph, False
    for node in list(graph.nodes):
        sm = _log_of(node)
        if not isinstance(sm, torch.fx.Node):
            continue
        with graph.inserting_before(node):
            new = _log_softmax_call(graph, gm, sm)
        if new is None:
            continue
        new.meta = dict(node.meta)
        node.replace_all_uses_with(new)
        graph.erase_node(node)
        if not sm.users:
            graph.erase_node(sm)
        changed = True
    if changed:
        graph.lint()
        gm.recompile()
