"""Plumbing calls that do not change a value in a float32 program run on one
CPU (issue 15), taken out of the traced graph before capture reads it:

* x.detach(), x.cpu(), x.requires_grad_(), x.data, torch.detach(x), and
  x.to(...) / x.type(...) / x.type_as(y) / x.float() / x.bool() whose
  traced result has the dtype of x (`(x > 0.2).bool()`: a bool's bool,
  probe 8): each reader reads x itself;
* `t.device` / `t.dtype` read in the forward (x.to(x.device), ...): the
  value tracing saw (the CPU; t's traced dtype), written into the readers;
* a cast that does change the dtype, spelled with a CPU device or flags
  (x.to('cpu', torch.float16), x.to(ids)), is spelled x.to(dtype), which
  capture's casts read;
* float64: ptec carries every float value as float32. x.double() /
  x.to(torch.float64) / `.float()` of a float64 value are taken out like
  the calls above, and a reduction's dtype=torch.float32 or torch.float64
  (x.sum(-1, dtype=...), torch.cumsum, F.softmax, ...) is dropped: a chain
  torch computes in float64 and casts back with `.float()` runs in float32
  (a deviation far below an int8 step, docs/aot.md). A model output traced
  as float64 (`x.double().exp()`, `x.double() * 2 + 1`) is that chain
  computed in float32 and returned as float64 (capture_casts.output_dtype:
  a Double output, the float32 value exactly); `return x.double()` keeps
  a `.to(torch.float32)` marker traced as float64 for it. A cast of an
  integer value (`i.double()`: capture_int_casts, a float64 output of the
  exact value) stays a cast, as does its `.float()`.

Runs after shape propagation: the traced dtypes decide, so a call whose
dtype is unknown stays in the graph (refused by name if nothing lowers it).
Another device (x.cuda(), x.to("cuda")) is not taken out."""
from __future__ import annotations

import builtins
from typing import Optional

import torch
import torch.fx
import torch.nn.functional as F

FLOATS = (torch.float32, torch.float64)

# len(x) of a traced tensor: torch.fx cannot record it (a Python int), while
# x.shape[0] is the traced size, which capture folds into its readers
TRACED_LEN = "len(x) of a tensor cannot be traced: write x.shape[0] instead"

# calls whose result is their first argument's value, whatever else they are given
_SAME_VALUE_METHODS = {"detach", "detach_", "cpu", "requires_grad_"}
# calls whose result is the first argument's value when the traced dtype does not change
_CAST_METHODS = {"to", "type", "type_as", "float", "double", "bool"}
# the reductions and normalizations that take a dtype= keyword to compute in
_DTYPE_KEYWORD = {"sum", "mean", "nansum", "prod", "cumsum", "cumprod", "softmax", "log_softmax",
                  torch.sum, torch.mean, torch.nansum, torch.prod, torch.cumsum, torch.cumprod,
                  torch.softmax, torch.log_softmax, F.softmax, F.log_softmax, F.softmin}


def _dtype(a) -> Optional[torch.dtype]:
    meta = a.meta.get("tensor_meta") if isinstance(a, torch.fx.Node) else None
    return getattr(meta, "dtype", None)


def _on_cpu(v) -> bool:
    try:
        return torch.device(v).type == "cpu"
    except (TypeError, RuntimeError):
        return False


def _moves_nothing(v) -> bool:
    """An argument of x.to / x.type that names no other device: a CPU
    device, a dtype, a tensor (to(other): its dtype and device), a flag
    (non_blocking, copy) or a memory format."""
    return (isinstance(v, (torch.dtype, bool, torch.memory_format, torch.fx.Node))
            or (isinstance(v, (str, torch.device)) and _on_cpu(v)))


def _same_value(fn: torch.fx.Node) -> bool:
    """fn's traced value is its first argument's (the dtypes as ptec carries them)."""
    if not fn.args or not isinstance(fn.args[0], torch.fx.Node):
        return False
    if fn.op == "call_function":
        return fn.target is torch.detach or (fn.target is builtins.getattr and fn.args[1:] == ("data",))
    if fn.op != "call_method":
        return False
    if fn.target in _SAME_VALUE_METHODS:
        return True
    if fn.target not in _CAST_METHODS or not all(_moves_nothing(v) for v in list(fn.args[1:]) + list(fn.kwargs.values())):
        return False
    before, after = _dtype(fn.args[0]), _dtype(fn)
    if _int_to_double(fn.args[0]) and after != before:
        return False                          # i.double().float(): the double's float (capture_int_casts)
    return before is not None and (after == before or (before in FLOATS and after in FLOATS))


def _int_to_double(fn) -> bool:
    """fn casts an integer tensor into float64 (`i.double()`): a float64
    value the program holds exactly (capture_int_casts)."""
    return (isinstance(fn, torch.fx.Node) and fn.op == "call_method" and fn.target in ("double", "to", "type")
            and bool(fn.args) and _dtype(fn) == torch.float64 and _dtype(fn.args[0]) is not None
            and not _dtype(fn.args[0]).is_floating_point and _dtype(fn.args[0]) is not torch.bool)


def _bool_to_double(fn) -> bool:
    """fn casts a bool into float64 (`(x > 0).double()`): its 0 / 1 carried
    as float32, as `.float()` of the bool."""
    return (isinstance(fn, torch.fx.Node) and fn.op == "call_method" and fn.target in ("double", "to", "type")
            and bool(fn.args) and _dtype(fn) == torch.float64 and _dtype(fn.args[0]) is torch.bool)


def _as_plain_cast(fn: torch.fx.Node):
    """x.to('cpu', torch.float16, non_blocking=True), x.to(ids) of another
    dtype: (args, kwargs) of the same cast spelled x.to(dtype), which
    capture reads (capture_casts, capture_indices); else None."""
    if fn.op != "call_method" or fn.target != "to" or not fn.args or not isinstance(fn.args[0], torch.fx.Node):
        return None
    rest = list(fn.args[1:]) + list(fn.kwargs.values())
    if not all(_moves_nothing(v) for v in rest) or set(fn.kwargs) - {"device", "dtype", "non_blocking", "copy",
                                                                     "memory_format"}:
        return None
    dtypes = [v for v in rest if isinstance(v, torch.dtype)] or \
        [_dtype(v) for v in rest if isinstance(v, torch.fx.Node)]
    if len(dtypes) != 1 or dtypes[0] is None or rest == [dtypes[0]]:
        return None
    return (fn.args[0], dtypes[0]), {}


def _traced_attribute(fn: torch.fx.Node):
    """The value tracing saw for `t.device` / `t.dtype` (a constant of the
    program), else None."""
    if fn.op != "call_function" or fn.target is not builtins.getattr or len(fn.args) != 2 \
            or not isinstance(fn.args[0], torch.fx.Node):
        return None
    if fn.args[1] == "device" and _dtype(fn.args[0]) is not None:
        return torch.device("cpu")            # shape propagation runs the model on the CPU
    if fn.args[1] == "dtype":
        return _dtype(fn.args[0])
    return None


def _float_dtype_keyword(fn: torch.fx.Node) -> bool:
    try:
        known = fn.target in _DTYPE_KEYWORD
    except TypeError:                         # an unhashable target is none of these
        return False
    return (known and fn.kwargs.get("dtype") in FLOATS and bool(fn.args)
            and _dtype(fn.args[0]) in FLOATS)


def tidy_plumbing(gm: torch.fx.GraphModule, error) -> None:
    """Take the calls above out of gm's graph (in place); a float64 model
    output of float math stays traced as float64 (a Double output)."""
    graph = gm.graph
    # float64 outputs of float math, before their casts are taken out: (position, traced meta)
    output = next(fn for fn in graph.nodes if fn.op == "output")
    traced = [(k, dict(out.meta)) for k, out in enumerate(_outputs(output))
              if _dtype(out) in FLOATS and not _int_to_double(out)]
    for fn in list(graph.nodes):
        if _bool_to_double(fn):
            fn.target, fn.args, fn.kwargs = "float", fn.args[:1], {}      # its 0 / 1, exact in float32
            continue
        value = _traced_attribute(fn)
        if value is not None:
            for user in list(fn.users):
                user.args, user.kwargs = torch.fx.node.map_arg((user.args, user.kwargs),
                                                               lambda a, fn=fn, value=value: value if a is fn else a)
            graph.erase_node(fn)
        elif _same_value(fn):
            fn.replace_all_uses_with(fn.args[0])
            graph.erase_node(fn)
        elif _as_plain_cast(fn) is not None:
            fn.args, fn.kwargs = _as_plain_cast(fn)
        elif _float_dtype_keyword(fn):
            fn.kwargs = {k: v for k, v in fn.kwargs.items() if k != "dtype"}
    outs = _outputs(output)
    marks = [(k, meta) for k, meta in traced if _dtype(outs[k]) != meta["tensor_meta"].dtype]
    for k, meta in marks:
        # `return x.double()` (its cast taken out: x float32) or `return d.float()` (d float64):
        # the value marked with its traced dtype (`.to(torch.float32)`, an identity:
        # capture_casts.output_dtype makes a float64 one a Double output)
        with graph.inserting_before(output):
            marked = graph.call_method("to", (outs[k], torch.float32))
        marked.meta = meta
        outs[k] = marked
    if marks:
        single = not isinstance(output.args[0], (tuple, list))
        output.args = (outs[0] if single else type(output.args[0])(outs),)
    gm.recompile()


def _outputs(output: torch.fx.Node) -> list:
    return list(output.args[0]) if isinstance(output.args[0], (tuple, list)) else [output.args[0]]
