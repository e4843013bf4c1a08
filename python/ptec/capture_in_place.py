"""In-place writes as out-of-place ops (issue 15): nn.ReLU(inplace=True),
F.relu(y, inplace=True), F.relu_(y), torch.sigmoid_(y), y.relu_(),
y.masked_fill_(m, v), y.clamp_(...), y += z, x.clone().add_(1),
torch.clamp(y, 0, 1, out=z) (a write into z), ...

An in-place call writes its result into the bytes of its first operand y,
and torch's later readers of y (and of every view sharing y's bytes) read
the written value. ptec's IR has no shared bytes: each node is a value. So
the fx graph is changed before capture reads it: the call becomes its
out-of-place op (its traced shape is the same) and the readers of y after
the call, in graph order, read the call's node. That is exact when nothing
else sharing y's bytes is read after the write; readers before it read y
before it, as in torch. Otherwise the call is refused by name:

- a view of y (x.view, x[0], split pieces, ...) made before the write and
  read after it would see the write: refused (a write through a view into
  a value read later likewise); a value that is y's tensor itself
  (nn.Identity, dropout in eval, detach) is written whole: its readers
  after the write read the call's node too;
- a parameter, buffer or tensor attribute of the model, or a constant made
  in forward (fx keeps one for every run): the write would change it for
  the next run: refused here, before fx's run of the graph writes it (a
  buffer written while fx traces, leaving no node, is found by its value
  and restored). capture then asks capture_buffer_state, which keeps the
  model's written tensors as state tensors across executes (torch's next
  call reads the written value); a constant made in forward stays refused;
- the model's input: its readers after the write read the write's result,
  as in torch (the caller's tensor is not written: ptec's outputs only).

capture runs the writes through capture_view_writes, which follows a write
through views by torch's own run of the graph (a written view goes back
into its base, earlier views are re-derived) and uses this module's spellings
(_write, as_out_of_place); the alias analysis here refuses the writes into
the model's tensors before that run, and decides alone when the run fails.

fx records `y += z` on a proxy as y = y + z (a Proxy has no __iadd__): the
tracer's proxies (AugmentedProxy) record it as the same add node marked as
a write, so the analysis sees it. zero_() and fill_(v) are the constants
zeros_like / full_like, copy_(z) is z broadcast to y's shape (expand_as)."""
from __future__ import annotations

import operator
from typing import Dict, FrozenSet, Optional, Tuple

import torch
import torch.fx
import torch.nn as nn
import torch.nn.functional as F

from .ir import UnsupportedOperator

# in-place methods whose name without "_" means something else
_NOT_THE_SAME = {"bernoulli_", "resize_", "resize_as_", "set_", "as_strided_"}
# writes of a constant: the constant of the copy's shape
_FILLS = {"zero_": torch.zeros_like, "fill_": torch.full_like}
# in-place functions (F.rrelu_ is torch.rrelu_) whose twin capture reads is F's (F.rrelu, not torch.rrelu)
_TWIN_IN_F = {"rrelu_", "threshold_", "celu_", "selu_", "dropout_", "alpha_dropout_", "feature_alpha_dropout_"}
# Python's augmented assignments torch runs in place, and their out-of-place op
_AUGMENTED = {"__iadd__": operator.add, "__isub__": operator.sub, "__imul__": operator.mul,
              "__itruediv__": operator.truediv, "__ifloordiv__": operator.floordiv, "__imod__": operator.mod,
              "__ipow__": operator.pow, "__iand__": operator.and_, "__ior__": operator.or_,
              "__ixor__": operator.xor, "__ilshift__": operator.lshift, "__irshift__": operator.rshift}
# calls named with "_" that change no value: the same tensor (an alias)
_NO_WRITE = {"requires_grad_", "detach_", "share_memory_", "retain_grad"}
# calls whose result may share the bytes of their first operand (a view, or the
# operand itself): conservative, a copy listed here only costs a refusal
_ALIASES = {"view", "view_as", "reshape", "reshape_as", "permute", "transpose", "t", "swapaxes", "swapdims",
            "moveaxis", "movedim", "squeeze", "unsqueeze", "flatten", "unflatten", "ravel", "narrow", "select",
            "expand", "expand_as", "broadcast_to", "split", "split_with_sizes", "chunk", "unbind", "tensor_split",
            "hsplit", "vsplit", "dsplit", "unfold", "diagonal", "as_strided", "contiguous", "detach", "to", "type",
            "type_as", "float", "double", "half", "bfloat16", "int", "long", "short", "bool", "char", "byte", "cpu",
            "cuda", "real", "imag", "view_as_real", "view_as_complex", "adjoint", "positive", "conj",
            "resolve_conj", "resolve_neg", "align_as", "align_to", "rename", "refine_names", "atleast_1d",
            "atleast_2d", "atleast_3d", "broadcast_tensors", "meshgrid", "einsum", "getitem", "__getitem__",
            "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout",
            "feature_dropout", "T", "mT", "H", "mH", "data", "values", "indices"} | _NO_WRITE
# of those, the ones whose result may share the bytes of any tensor operand
_ALIASES_ALL = {"broadcast_tensors", "meshgrid", "einsum", "atleast_1d", "atleast_2d", "atleast_3d"}
# torch.nn layers (leaves of the trace) that return their input, or a view of it, in eval
_DROPOUTS = tuple(getattr(nn, k) for k in ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
                                           "FeatureAlphaDropout") if hasattr(nn, k))
_ALIAS_MODULES = (nn.Identity, nn.Flatten, nn.Unflatten) + _DROPOUTS
# calls whose result is their operand itself (the same values, the same bytes): a
# write into either is a write of the whole of both (dropout: only out of training)
_SAME_NAMES = {"detach", "detach_", "requires_grad_", "positive", "dropout", "alpha_dropout",
               "feature_alpha_dropout", "dropout1d", "dropout2d", "dropout3d"}
_SAME_MODULES = (nn.Identity,) + _DROPOUTS
_MARK = "ptec_in_place"     # node.meta: an out-of-place node recorded for an augmented assignment


def _augmented(op, spelling: str):
    def record(self, other):
        p = self.tracer.create_proxy("call_function", op, (self, other), {})
        p.node.meta[_MARK] = spelling       # "+=": how a refusal names the write
        return p
    return record


class AugmentedProxy(torch.fx.Proxy):
    """A proxy that records `y += z` (torch: in place) as the add node fx
    records for y = y + z, marked as a write of y."""


_SPELLINGS = {"add": "+=", "sub": "-=", "mul": "*=", "truediv": "/=", "floordiv": "//=", "mod": "%=", "pow": "**=",
              "and_": "&=", "or_": "|=", "xor": "^=", "lshift": "<<=", "rshift": ">>="}
for _name, _op in _AUGMENTED.items():
    if hasattr(torch.Tensor, _name):
        setattr(AugmentedProxy, _name, _augmented(_op, _SPELLINGS[_op.__name__]))


def out_of_place(fn: torch.fx.Node) -> Optional[Tuple[str, object]]:
    """(op, target) of the out-of-place form of in-place call fn, or None."""
    t = fn.target
    if fn.op == "call_method" and t in _AUGMENTED:
        return "call_function", _AUGMENTED[t]
    if fn.op == "call_method" and t in _FILLS:
        return "call_function", _FILLS[t]
    if fn.op == "call_method" and t == "copy_" and len(fn.args) == 2 and isinstance(fn.args[1], torch.fx.Node) \
            and set(fn.kwargs) <= {"non_blocking"}:
        return "call_method", "expand_as"
    if fn.op == "call_method" and isinstance(t, str) and t.endswith("_") and not t.startswith("_") \
            and t not in _NOT_THE_SAME and t not in _NO_WRITE and callable(getattr(torch.Tensor, t[:-1], None)):
        return "call_method", t[:-1]
    name = getattr(t, "__name__", "") if fn.op == "call_function" else ""
    if name.endswith("_") and not name.startswith("_") and name not in _NOT_THE_SAME:
        found = any(getattr(home, name, None) is t for home in (torch, F))
        for home in ((F, torch) if name in _TWIN_IN_F else (torch, F)):
            if found and callable(getattr(home, name[:-1], None)):
                return "call_function", getattr(home, name[:-1])
    return None


def _write(fn: torch.fx.Node, mods: Dict[str, nn.Module]):
    """((op, target) fn runs as, the node it writes) when fn writes a
    tensor in place (its first operand, or its out= tensor), else None."""
    out = fn.kwargs.get("out") if fn.op in ("call_function", "call_method") else None
    if isinstance(out, torch.fx.Node):
        return (fn.op, fn.target), out
    if not fn.args or not isinstance(fn.args[0], torch.fx.Node):
        return None
    if fn.meta.get(_MARK) or (fn.op == "call_module" and getattr(mods.get(fn.target), "inplace", False) is True):
        return (fn.op, fn.target), fn.args[0]      # out of place already: the module's capture ignores `inplace`
    if fn.op == "call_function" and fn.kwargs.get("inplace") is True:
        return (fn.op, fn.target), fn.args[0]
    form = out_of_place(fn)
    return None if form is None else (form, fn.args[0])


def _call_name(fn: torch.fx.Node) -> Optional[str]:
    if fn.op == "call_method":
        return fn.target
    if fn.op != "call_function":
        return None
    if fn.target is getattr:
        return fn.args[1] if len(fn.args) > 1 and isinstance(fn.args[1], str) else None
    if fn.target is operator.getitem:
        return "getitem"
    name = getattr(fn.target, "__name__", None)
    homes = (torch, F, torch.Tensor, torch.functional)
    return name if any(getattr(h, name or "", None) is fn.target for h in homes) else None


def _is_tensor(fn: torch.fx.Node) -> bool:
    """A tensor (or a tuple of them) by the traced type; unknown types count."""
    kind = fn.meta.get("type")
    return kind is None or issubclass(kind, (torch.Tensor, tuple, list))


def _stores(fn: torch.fx.Node, stores, mods) -> FrozenSet[torch.fx.Node]:
    """The nodes whose bytes fn's value may share (fn itself for a new value)."""
    name = _call_name(fn)
    module = mods.get(fn.target) if fn.op == "call_module" else None
    if name in _ALIASES or isinstance(module, _ALIAS_MODULES):
        operands = []
        torch.fx.node.map_arg((fn.args, fn.kwargs) if name in _ALIASES_ALL else fn.args[:1], operands.append)
        shared = frozenset().union(*(stores.get(a, {a}) for a in operands if _is_tensor(a)))
        if shared:
            return shared
    return frozenset({fn})


def _same(fn: torch.fx.Node, same, mods) -> torch.fx.Node:
    """The node whose tensor fn's value is (nn.Identity, dropout in eval,
    detach, ...), else fn."""
    name = _call_name(fn)
    if not fn.args or not isinstance(fn.args[0], torch.fx.Node):
        return fn
    if "dropout" in (name or ""):
        training = fn.args[2] if len(fn.args) > 2 else fn.kwargs.get("training", fn.kwargs.get("train", True))
        name = name if training is False else None
    if name in _SAME_NAMES or (fn.op == "call_module" and isinstance(mods.get(fn.target), _SAME_MODULES)):
        return same.get(fn.args[0], fn.args[0])
    return fn


def _kept_why(shared) -> Optional[str]:
    """Why a write into one of `shared` changes the model, or None."""
    kept = [s for s in shared if s.op == "get_attr"]
    if kept and kept[0].target.startswith("_tensor_constant"):
        return ("writes in place into a tensor made in forward without the input (torch.zeros(...)), which fx "
                "keeps as one constant for every run; make it from the input (x.new_zeros(...), "
                "torch.zeros_like(x)) or write the out-of-place op")
    if kept:
        return (f"writes in place into {kept[0].target} (a parameter, buffer or constant of the model), "
                "which would change it for the next run; ptec keeps such a tensor as a state across executes "
                "when one call of the model on the example inputs changes it, which this one did not: give "
                "example inputs that change it, or write the out-of-place op")
    return None


def _why_not(fn, written, shared, stores, order, name) -> Optional[str]:
    """Why writing the tensor of nodes `written` (its first the call's
    operand) in place at fn is not the out-of-place op, or None."""
    target = written[0]
    if _kept_why(shared):
        return _kept_why(shared)
    for other, on in stores.items():
        if other in written or other is fn or not on & shared:
            continue
        later = [u for u in other.users if order[u] > order[fn]]
        if later:
            return (f"writes in place into {name(target)}, whose memory {name(other)} shares, and "
                    f"{name(later[0])} reads {other.name} after the write (torch's reader sees the write); "
                    "ptec runs an in-place op on a value that nothing sharing its memory reads "
                    "afterwards: write the out-of-place op")
    return None


def _namer(gm: torch.fx.GraphModule):
    from .capture import _source           # capture imports this module: late
    mods = dict(gm.named_modules())

    def name(fn: torch.fx.Node) -> str:
        return ("the model's output" if fn.op == "output" else f"the model's input {fn.name}"
                if fn.op == "placeholder" else f"{fn.name} ({fn.meta[_MARK]})" if fn.meta.get(_MARK)
                else _source(fn, mods))
    return name


def in_place_writes(gm: torch.fx.GraphModule, rewrite: bool = True) -> None:
    """Each in-place write as its out-of-place op, its operand's later
    readers reading it; UnsupportedOperator naming a write that is not.
    rewrite False: only the writes into the model's tensors are refused
    (before fx's run of the graph would write them)."""
    mods = dict(gm.named_modules())
    name = _namer(gm)
    order = {fn: i for i, fn in enumerate(gm.graph.nodes)}
    stores: Dict[torch.fx.Node, FrozenSet[torch.fx.Node]] = {}
    same: Dict[torch.fx.Node, torch.fx.Node] = {}       # node -> the node whose tensor it is
    changed = False
    for fn in list(gm.graph.nodes):
        if fn.kwargs.get("out") is not None and not isinstance(fn.kwargs["out"], torch.fx.Node):
            raise UnsupportedOperator(f"operator not supported: {name(fn)}: writes its results into several out= "
                                      "tensors, which ptec does not follow; use the call's result")
        form, target = _write(fn, mods) or (None, None)
        if form is None or not _is_tensor(target):
            stores[fn] = _stores(fn, stores, mods)      # a number's `n += 1` binds a new number
            same[fn] = _same(fn, same, mods)
            continue
        shared = stores.get(target, frozenset({target}))
        root = same.get(target, target)
        written = [target] + [a for a, r in same.items() if r is root and a is not target]
        why = _why_not(fn, written, shared, stores, order, name) if rewrite else _kept_why(shared)
        if why is not None:
            raise UnsupportedOperator(f"operator not supported: {name(fn)}: {why}")
        stores[fn], same[fn] = frozenset({fn}), fn      # the written bytes: read through fn from here on
        if not rewrite:
            continue
        for w in written:                   # the operand, and the nodes that are its tensor
            for u in list(w.users):
                if order[u] > order[fn]:
                    u.replace_input_with(w, fn)
        as_out_of_place(fn, form)
        changed = True
    if changed:
        gm.recompile()


def as_out_of_place(fn: torch.fx.Node, form) -> None:
    """fn, an in-place write, changed into its out-of-place op `form`."""
    if (fn.op, fn.target) != form:
        fn.op, fn.target = form
        if form == ("call_method", "expand_as"):        # y.copy_(z): z broadcast to y's shape
            fn.args, fn.kwargs = (fn.args[1], fn.args[0]), {}
    if fn.op in ("call_function", "call_method") and ("inplace" in fn.kwargs or "out" in fn.kwargs):
        fn.kwargs = {k: v for k, v in fn.kwargs.items() if k not in ("inplace", "out")}


def without_dead_code(gm: torch.fx.GraphModule) -> None:
    """fx's eliminate_dead_code, keeping the in-place writes whose result
    is unused (`self.relu(y)` writes y) and the buffer states' writes
    (capture_buffer_state: nn.LSTM's kernel path traces them too)."""
    mods = dict(gm.named_modules())
    for fn in reversed(list(gm.graph.nodes)):
        if not fn.users and not fn.is_impure() and _write(fn, mods) is None \
                and getattr(fn.target, "__name__", None) != "ptec_state_write":
            gm.graph.erase_node(fn)


def tensors_of(model: nn.Module) -> Dict[Tuple[nn.Module, str], Tuple[torch.Tensor, torch.Tensor]]:
    """Each buffer and tensor attribute of the model's modules, and a copy
    of its value: fx runs a write into one (self.b.mul_(2)) while it
    traces, leaving no node, and rebinds one written by `self.c += y`;
    torch's next run would see either."""
    kept = {}
    for m in model.modules():
        for k, v in list(m._buffers.items()) + list(vars(m).items()):
            if isinstance(v, torch.Tensor) and not isinstance(v, nn.Parameter):
                kept[(m, k)] = (v, v.detach().clone())
    return kept


def _unchanged(now: torch.Tensor, before: torch.Tensor) -> bool:
    try:
        if now.shape != before.shape or now.dtype != before.dtype:
            return False
        if now.is_floating_point():     # NaN where it was: unchanged
            return torch.equal(now.isnan(), before.isnan()) and torch.equal(now.nan_to_num(0.0),
                                                                            before.nan_to_num(0.0))
        return torch.equal(now, before)
    except (RuntimeError, TypeError):   # a layout torch.equal does not take (sparse, quantized): not ours to judge
        return True


def refuse_written_tensors(model: nn.Module, gm: torch.fx.GraphModule, before, error) -> None:
    """Raises `error` naming a buffer or tensor attribute the trace wrote
    or rebound (restored first: the user's model is left as it was), and
    UnsupportedOperator naming a call of gm that writes a parameter, buffer
    or constant (before anything runs gm, which would write it)."""
    paths = {m: path for path, m in model.named_modules()}
    written = []
    for (m, k), (tensor, value) in before.items():
        now = m._buffers[k] if k in m._buffers else vars(m).get(k)
        if now is not tensor:
            setattr(m, k, tensor)
        elif _unchanged(tensor, value):
            continue
        else:
            with torch.no_grad():
                tensor.copy_(value)
        written.append(f"{paths[m]}.{k}" if paths.get(m) else k)
    if written:
        raise error(f"the model writes its tensor {written[0]} in place while it runs (a buffer or tensor "
                    "attribute: torch's next run would read the written value); ptec keeps such a tensor as a "
                    "state across executes when one call of the model on the example inputs changes it, which "
                    "this one did not: give example inputs that change it, or compute it in forward without "
                    "writing the module's tensor")
    in_place_writes(gm, rewrite=False)
