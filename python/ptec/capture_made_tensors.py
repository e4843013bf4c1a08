"""Tensors made in forward by a factory and then written by traced values
(probe: trace fidelity): `buf = torch.zeros(2, 8); torch.mul(y, 2,
out=buf); return buf`, `out = torch.zeros(2, 10); out[:, 1:9] = y`,
`acc = torch.ones(2, 8); acc.add_(y)`.

torch.zeros(2, 8) takes no traced value, so fx runs it eagerly: a real
tensor, which the graph holds as a constant (`_tensor_constant0`). A write
into it by a traced value is recorded as a node on that constant, but
every eager op on the tensor afterwards (`return out`, `out * 2 + out`)
runs on the unwritten value and is frozen into another constant: the
program returned the zeros (740 steps off), or was refused ("setitem
returns NoneType").

So each factory call in the model's code is counted while tracing (torch.zeros /
ones / full / empty / eye / arange / linspace / tensor and the *_like of a
tensor made in forward), and when a traced write lands in the bytes of
one's result, the forward is traced again with those calls recorded as
nodes (their value known: capture_tracer's shadow values fold them where
nothing writes them), so the write and every later read are in the
program, as for `x.new_zeros(2, 10)` (capture_in_place, capture_view_writes,
capture_out_arguments run them).

torch.empty's values are undefined: its node is torch.zeros, allowed only
when the program's outputs never read an element nothing wrote (the
graph is run with it filled two ways: empty_read_refusal); a read of
unwritten torch.empty memory is refused in one line naming the user's
line."""
from __future__ import annotations

import contextlib
import operator
import sys
from typing import Dict, List, Optional, Set

import torch
import torch.fx

from .capture_isinstance import _model_code
from .capture_tracer import _user_site

_FACTORIES = ("zeros", "ones", "full", "empty", "eye", "arange", "linspace", "tensor", "zeros_like",
              "ones_like", "full_like", "empty_like")
_TRUE = {n: getattr(torch, n) for n in _FACTORIES}
_EMPTY = {_TRUE["empty"]: _TRUE["zeros"], _TRUE["empty_like"]: _TRUE["zeros_like"]}


def _has_proxy(args, kwargs) -> bool:
    found = []
    torch.fx.node.map_aggregate((args, kwargs), lambda a: found.append(a) if isinstance(a, torch.fx.Proxy) else a)
    return bool(found)


@contextlib.contextmanager
def factories_counted(tracer):
    """torch's factories counted per call while tracing; the calls in
    tracer.ptec_made_traced (a set of ordinals) made as nodes. The eager
    results land in tracer.ptec_made (ordinal -> tensor)."""
    traced: Set[int] = getattr(tracer, "ptec_made_traced", set())
    made: Dict[int, torch.Tensor] = {}
    tracer.ptec_made = made
    count = [0]
    saved = {n: getattr(torch, n) for n in _FACTORIES}

    def wrap(name, current):
        true = _TRUE[name]

        def factory(*args, **kwargs):
            if getattr(tracer, "_evaluating", False) or _has_proxy(args, kwargs) \
                    or not _model_code(sys._getframe(1).f_code.co_filename):
                return current(*args, **kwargs)      # a shadow value, fx records it already, or torch's / ptec's own
            count[0] += 1
            if count[0] in traced:
                target = _EMPTY.get(true, true)
                proxy = tracer.create_proxy("call_function", target, args, kwargs)
                if true in _EMPTY:
                    proxy.node.meta["ptec_empty_site"] = _user_site() or " (torch.empty in forward)"
                return proxy
            result = current(*args, **kwargs)
            if isinstance(result, torch.Tensor):
                made[count[0]] = result
            return result
        factory.__name__ = getattr(current, "__name__", name)
        factory.__doc__ = getattr(current, "__doc__", None)
        return factory

    for n, f in saved.items():
        setattr(torch, n, wrap(n, f))
    try:
        yield
    finally:
        for n, f in saved.items():
            setattr(torch, n, f)


def _written_receivers(graph: torch.fx.Graph) -> List[torch.fx.Node]:
    """The nodes a traced call writes into: setitem's tensor, out=, an in-place call's self."""
    found = []
    for fn in graph.nodes:
        if fn.op not in ("call_function", "call_method"):
            continue
        out = fn.kwargs.get("out")
        if isinstance(out, torch.fx.Node):
            found.append(out)
        name = fn.target if isinstance(fn.target, str) else getattr(fn.target, "__name__", "")
        written = fn.target in (operator.setitem, "__setitem__") or (
            isinstance(name, str) and name.endswith("_") and not name.startswith("_"))
        if written and fn.args and isinstance(fn.args[0], torch.fx.Node):
            found.append(fn.args[0])
    return found


def _storage(t: torch.Tensor) -> Optional[int]:
    try:
        return t.storage().data_ptr()
    except Exception:           # noqa: BLE001 - no storage (a meta tensor): not ours
        return None


def written_factories(graph: torch.fx.Graph, tracer) -> Set[int]:
    """The ordinals of factory calls (factories_counted) whose tensor a
    traced call writes (held by the graph as a constant fx made)."""
    made = getattr(tracer, "ptec_made", None)
    if not made:
        return set()
    by_storage = {}
    for i, t in made.items():
        s = _storage(t)
        if s is not None and t.numel() > 0:
            by_storage.setdefault(s, set()).add(i)
    found: Set[int] = set()
    for b in _written_receivers(graph):
        if b.op != "get_attr" or not str(b.target).startswith("_tensor_constant"):
            continue
        t = getattr(tracer.root, b.target, None)
        if isinstance(t, torch.Tensor) and _storage(t) in by_storage:
            found |= by_storage[_storage(t)]
    return found


def _filled(target, fill):
    def made(*args, **kwargs):
        t = target(*args, **kwargs)
        return t.fill_(fill) if t.is_floating_point() else t.fill_(int(fill))
    return made


def _leaves(v):
    found = []
    torch.fx.node.map_aggregate(v, lambda a: found.append(a) if isinstance(a, torch.Tensor) else a)
    return found


def empty_read_refusal(gm: torch.fx.GraphModule, example_inputs) -> Optional[str]:
    """One line when the program's outputs read memory of a torch.empty
    made as a node (factories_counted) that nothing wrote, else None:
    the graph runs with that tensor filled with two values, and its outputs
    differ. (Writes reach it through setitem, out=, copy_, views, ... : once
    capture_in_place has made them out-of-place, running the graph sees
    them all.)"""
    graph = gm.graph
    sites = [b for b in graph.nodes if b.meta.get("ptec_empty_site") is not None]
    if not sites:
        return None
    from .capture_tracer import restore_buffers, snapshot_buffers
    inputs = [x.clone() if isinstance(x, torch.Tensor) else x for x in example_inputs]
    for b in sites:
        target, runs = b.target, []
        try:
            for fill in (0.0, 7.25):
                b.target = _filled(target, fill)
                gm.recompile()
                saved = snapshot_buffers(gm)
                try:
                    with torch.no_grad(), torch.random.fork_rng(devices=[]):
                        torch.manual_seed(0)
                        runs.append(_leaves(gm(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs])))
                finally:
                    restore_buffers(gm, saved)
        except Exception:       # noqa: BLE001 - the graph does not run here: later checks decide
            runs = []
        finally:
            b.target = target
            gm.recompile()
        if len(runs) == 2 and not all(torch.equal(p, q) for p, q in zip(*runs)):
            return (f"the model's forward{b.meta['ptec_empty_site']}: a tensor made by torch.empty is read where "
                    "nothing wrote it (torch leaves its values undefined): make it with torch.zeros, or write all "
                    "of it first")
    return None


def made_constant_node(fn: torch.fx.Node):
    """A factory call traced as a node (factories_counted) whose arguments
    are all Python values: the IR constant of its value (the writes into it
    are separate nodes by now: capture_in_place)."""
    if fn.op != "call_function" or fn.target not in _TRUE.values():
        return None
    found = []
    torch.fx.node.map_arg((fn.args, fn.kwargs), found.append)
    if found:
        return None
    from .capture_spellings import _NUMPY
    from .ir import Node
    value = fn.target(*fn.args, **fn.kwargs)
    if not isinstance(value, torch.Tensor) or value.dtype not in _NUMPY:
        return None
    return Node(fn.name, "constant", [], dict(value=value.numpy().astype(_NUMPY[value.dtype])))
