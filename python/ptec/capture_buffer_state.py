"""A forward that writes the model's own tensors (issue 15): a ring buffer
of past frames (`self.frames[:, :, -1:] = x`), a counter (`self.count +=
1`), a running mean (`self.mean.mul_(0.9).add_(0.1 * x.mean())`),
`self.h.copy_(h)`, `self.buf = torch.cat([self.buf[:, 1:], x], 1)`, a
parameter written under no_grad, a plain tensor attribute.

torch keeps the written value in the module, and its next call reads it.
ptec has tensors kept across `ptec_method_execute` calls already (the
--stateful recurrent layers' `state` / `state_write` nodes: a planned
tensor with an initial value, written back at the end of the run), so each
tensor the forward writes becomes one, without a flag, as torch behaves:

- which tensors: one eager call of a copy of the model on the example
  inputs, comparing each buffer, parameter and tensor attribute before and
  after (its value, or what the name is bound to); only when the plain
  trace refused a write into the model's tensors, so other models trace as
  before. A write that leaves the same value on the example is not seen,
  and stays refused;
- the trace: a deep copy of the model (the user's model is never written,
  by the trace, shape propagation or calibration), its written tensor
  attributes made buffers, traced with those tensors as get_attr proxies
  (fx makes other buffers constants, and would run a write of one that
  does not read the input while tracing, leaving no node); `self.buf = v`
  binds the name to v's proxy (Module.__setattr__ patched while tracing),
  and later reads of self.buf read v;
- the graph: each written tensor's reads read one `ptec_state` node at the
  start of the run, and a `ptec_state_write` node before the output stores
  its final value: the node the last write made (capture_in_place and
  capture_view_writes send the readers after a write, this one too, to
  the written value), or the value the name was last bound to;
- a tensor written but whose value before the write nothing reads (a
  whole overwrite: `self.last = y`) is not kept: nothing in the program
  reads it again (compile says so); the others say "buffer X is state kept
  across executes".

The state's int8 grid is the range of the values written into it while
calibration streams its samples in order, as torch's calls would
(quantize.calibrate carries these states from one sample to the next); a
counter past the calibrated range saturates. Refused in one line: a
written tensor that a layer reads inside itself (`self.fc.weight.mul_(0.5)`
before `self.fc(x)`: the layer's weights are constants of its kernel),
and, as --stateful, an Ethos-U target."""
from __future__ import annotations

import contextlib
from typing import Dict, List, Tuple

import numpy as np
import torch
import torch.fx
import torch.nn as nn

from .capture_modules import ptec_state, ptec_state_write
from .ir import Node
from .model_copy import model_copy

STATE = "ptec_buffer_state"     # fx node.meta / Node attrs: the model's path of the tensor a state keeps
INIT = "ptec_state_init"        # fx node.meta: the tensor's value before any run


def _tensors(model: nn.Module) -> Dict[str, Tuple[nn.Module, str, torch.Tensor]]:
    """path -> (module, name, tensor) of each parameter, buffer and tensor attribute."""
    found = {}
    for path, m in model.named_modules():
        for k, v in list(m._parameters.items()) + list(m._buffers.items()) + list(vars(m).items()):
            if isinstance(v, torch.Tensor) and not k.startswith("_"):
                found.setdefault(f"{path}.{k}" if path else k, (m, k, v))
    return found


def written_tensors(model: nn.Module, example_inputs) -> List[str]:
    """The paths of the tensors one eager call of (a copy of) the model
    writes or rebinds; [] when the call fails."""
    twin = model_copy(model)
    before = {p: (v, v.detach().clone()) for p, (_, _, v) in _tensors(twin).items()}
    try:
        with torch.no_grad():
            twin(*[x.clone() for x in example_inputs])
    except Exception:               # noqa: BLE001 - the model's own failure: the caller's refusal stands
        return []
    written = []
    for p, (m, k, _) in _tensors(twin).items():
        now = m._parameters.get(k, m._buffers.get(k, vars(m).get(k)))
        if p not in before:
            continue
        tensor, value = before[p]
        if now is not tensor or now.shape != value.shape or now.dtype != value.dtype \
                or not torch.equal(now.detach().nan_to_num(0.0), value.nan_to_num(0.0)):
            written.append(p)
    return written


def copy_with_buffers(model: nn.Module, paths: List[str]) -> Tuple[nn.Module, Dict[int, str]]:
    """A deep copy of the model whose written tensor attributes are
    buffers, and {id(tensor in the copy): path} of the written tensors."""
    twin = model_copy(model)
    ids = {}
    from .capture_module_aliases import remember_paths
    remember_paths(twin)        # a partial of __init__ holding one of its modules (capture_module_aliases)
    for p in paths:
        owner, _, k = p.rpartition(".")
        m = twin.get_submodule(owner)
        if k not in m._parameters and k not in m._buffers:
            t = vars(m).pop(k)
            m.register_buffer(k, t)
        ids[id(getattr(m, k))] = p
    return twin, ids


def states_in(model: nn.Module, states: Dict[int, str]) -> Dict[int, str]:
    """states ({id(tensor): path}, of copy_with_buffers' copy) keyed by the
    tensors at the same paths in model: the copy with_traceable_modules
    makes of it when it holds a module a stand-in replaces (nn.GRUCell,
    nn.GRU, ...) has tensors of its own, which the trace reads and writes.
    A path model does not hold keeps its tensor."""
    found = {path: t for path, t in list(model.named_parameters()) + list(model.named_buffers())}
    return {id(found[p]) if p in found else k: p for k, p in states.items()}


def with_state_reads(tracer_class):
    """tracer_class whose reads of the written tensors are get_attr proxies
    (and the proxy a name was last bound to)."""
    class StateTracer(tracer_class):
        ptec_states: Dict[int, str] = {}

        def getattr(self, attr, attr_val, parameter_proxy_cache):
            path = self.ptec_states.get(id(attr_val))
            if path is None or getattr(self, "_evaluating", False):
                return super().getattr(attr, attr_val, parameter_proxy_cache)
            if id(attr_val) in self.ptec_rebound:
                return self.ptec_rebound[id(attr_val)]
            name = self._state_name(attr_val)
            if name not in parameter_proxy_cache:
                parameter_proxy_cache[name] = self.create_proxy("get_attr", name, (), {})
                if hasattr(self, "_data"):
                    # its value is the run's (each execute reads what the last wrote), not the example's:
                    # nothing computed from it is folded into a constant (`self.buf[self.idx % n] = x`)
                    self._data.add(parameter_proxy_cache[name].node)
            return parameter_proxy_cache[name]

        def _state_name(self, tensor) -> str:
            for n, t in list(self.root.named_parameters()) + list(self.root.named_buffers()):
                if t is tensor:
                    return n
            raise KeyError(self.ptec_states[id(tensor)])
    return StateTracer


@contextlib.contextmanager
def binding_names(tracer):
    """Module.__setattr__ of a proxy to a written tensor's name (`self.buf
    = v`): the name reads v from here on (the module keeps its tensor)."""
    original = nn.Module.__setattr__
    tracer.ptec_rebound = {}

    def setattr_(m, k, v):
        held = m.__dict__.get("_parameters", {}).get(k, m.__dict__.get("_buffers", {}).get(k))
        if isinstance(v, torch.fx.Proxy) and held is not None and id(held) in tracer.ptec_states:
            tracer.ptec_rebound[id(held)] = v
            return
        original(m, k, v)
    nn.Module.__setattr__ = setattr_
    try:
        yield
    finally:
        nn.Module.__setattr__ = original


def as_states(graph: torch.fx.Graph, tracer, error) -> None:
    """Each written tensor's reads as one ptec_state node, its final value
    stored by a ptec_state_write node before the output (module doc)."""
    placeholders = [fn for fn in graph.nodes if fn.op == "placeholder"]
    output = next(fn for fn in graph.nodes if fn.op == "output")
    found = [(n, t) for n, t in list(tracer.root.named_parameters()) + list(tracer.root.named_buffers())
             if id(t) in tracer.ptec_states]
    # a name bound to another state's read (`self.x2 = self.x1`, a swap): that read becomes the other
    # state's node below, so each write is made after every read is replaced (read -> its state node)
    replaced: Dict[torch.fx.Node, torch.fx.Node] = {}
    writes = []
    for name, tensor in found:
        path = tracer.ptec_states[id(tensor)]
        owner = name.rpartition(".")[0]
        leaf = [fn for fn in graph.nodes if fn.op == "call_module" and owner
                and (owner == fn.target or owner.startswith(fn.target + "."))]
        if leaf:
            raise error(f"operator not supported: the model writes its tensor {path} while it runs, and "
                        f"layer {leaf[0].target} reads it inside itself (its weights are constants of its "
                        "kernel); compute the layer with torch.nn.functional on the written tensor")
        reads = [fn for fn in graph.nodes if fn.op == "get_attr" and fn.target == name]
        bound = tracer.ptec_rebound.get(id(tensor))
        if not reads and bound is None:
            continue
        if not placeholders:
            raise error(f"operator not supported: the model writes its tensor {path} but takes no input")
        with graph.inserting_after(placeholders[-1]):
            buffer = graph.get_attr(name)
        with graph.inserting_after(buffer):
            state = graph.call_function(ptec_state, (buffer, placeholders[0]))
        state.meta[STATE] = path
        state.meta[INIT] = tensor.detach().clone()      # before any run of the graph writes it
        for fn in reads:
            fn.replace_all_uses_with(state)
            graph.erase_node(fn)
            replaced[fn] = state
        writes.append((buffer, state if bound is None else bound.node, path))
    for buffer, value, path in writes:
        with graph.inserting_before(output):
            write = graph.call_function(ptec_state_write, (buffer, replaced.get(value, value)))
        write.meta[STATE] = path


def restore_tensors(before, model: nn.Module, attributes) -> None:
    """Each tensor of capture_in_place.tensors_of bound and valued as it was
    (a trace that failed part way may have written one), and the constants
    fx's trace set on the model (_tensor_constant0, ...) taken off:
    attributes, the names the model had before."""
    for k in set(vars(model)) - set(attributes):
        if k.startswith("_tensor_constant"):
            delattr(model, k)
    for (m, k), (tensor, value) in before.items():
        now = m._buffers[k] if k in m._buffers else vars(m).get(k)
        if now is not tensor:
            setattr(m, k, tensor)
        elif now.shape == value.shape and not torch.equal(now, value):
            with torch.no_grad():
                now.copy_(value)


@contextlib.contextmanager
def tensors_kept(model: nn.Module):
    """The model's buffers and tensor attributes as they were after the
    block: an eager call made to learn something of the model (its
    recurrent layers' sequence lengths, its masks) leaves no write of a
    forward that updates its own tensors (`self.avg.copy_(y.mean(1))`)."""
    from .capture_in_place import tensors_of
    before, attributes = tensors_of(model), set(vars(model))
    try:
        yield
    finally:
        restore_tensors(before, model, attributes)


def kept_states(g, log_notes: bool = True) -> None:
    """The graph's buffer states: a state whose value before the write
    nothing reads is dropped (a whole overwrite: nothing reads it again);
    each kept one gets its compile note."""
    for write in [n for n in g.nodes if n.op == "state_write" and n.attrs.get(STATE)]:
        state = write.inputs[0]
        readers = [u for u in g.users(state) if u.name != write.name]
        path = write.attrs[STATE]
        if not readers:
            g.nodes = [n for n in g.nodes if n.name not in (state, write.name)]
            g.node(write.inputs[1]).attrs.setdefault(
                "note", f"buffer {path} is written but its value before the write is never read: not kept "
                        "across executes")
            continue
        if _unobserved(g, state, write, path):
            continue
        init = g.node(state).attrs["init"]
        if init.ndim == 4:
            _kept_in_three_dims(g, g.node(state), write)
        if log_notes:
            g.node(state).attrs["note"] = (f"buffer {path} is state kept across executes (initial value: its "
                                           "value at compile); ptec_method_reset_state restores it")
    copied_writes(g)


def copied_writes(g) -> None:
    """A float buffer written with a value it cannot share its int8 grid
    with gets a copy of it, computed on its own grid (a requantization):
    the input as it is (`self.prev = x.clone()`, `self.prev.copy_(x)`),
    another buffer's value (the delay line `self.x2 = self.x1`, a swap), a
    constant, or a value another buffer is written with already. (A state
    and the value written into it share one grid: quantize.) An integer /
    bool buffer's value is copied as it is (capture_integer_states): none
    needed. These copies are for the grids only: the bytes a state's value
    shares with the state (an output or a write reading a state's value
    from before the writes, the delay line of integer buffers) are the
    lowering's to copy, in one place, LoweringContext.unaliased (lower.py),
    which copies what still aliases a state after these requantizations
    (a copy here is a value of its own, so none is made twice)."""
    taken = set()
    for write in [n for n in g.nodes if n.op == "state_write" and n.attrs.get(STATE)]:
        state = g.node(write.inputs[0])
        source = write.inputs[1]
        while g.node(source).op in ("reshape", "identity"):
            source = g.node(source).inputs[0]
        if state.attrs.get("dtype"):
            continue
        if source not in taken and g.node(source).op not in ("state", "input", "constant"):
            taken.add(source)
            continue
        value = g.node(write.inputs[1])
        one = Node(f"{write.name}_one", "constant", [], {"value": np.array(1.0, np.float32)}, shape=[])
        copy = Node(f"{write.name}_copy", "mul", [value.name, one.name],
                    {k: v for k, v in value.attrs.items() if k in ("source", "stack")}, shape=value.shape)
        at = g.nodes.index(write)
        g.nodes[at:at] = [one, copy]
        write.inputs[1] = copy.name


def _unobserved(g, state: str, write, path: str) -> bool:
    """Whether no output reads the state, through any number of executes:
    what is computed from it reaches only its own write (F.batch_norm's
    running statistics updated in training, which its output never reads:
    capture_batch_norm_train). Then the state, its write, what reads it and
    what only they read are dropped, with a note on the first output."""
    reach, todo = set(), [state]
    while todo:
        name = todo.pop()
        for u in g.users(name):
            if u is write or u.name in reach:
                continue
            if u.op == "state_write":
                return False            # another state's value: observed through it, perhaps
            reach.add(u.name)
            todo.append(u.name)
    if reach & set(g.outputs) or not g.outputs:
        return False
    gone = reach | {state, write.name}
    feeding = {i for n in g.nodes if n.name in gone for i in n.inputs}
    g.nodes = [n for n in g.nodes if n.name not in gone]
    while feeding:                      # what only the dropped nodes read
        dead = {n.name for n in g.nodes if n.name in feeding and n.op not in ("input", "state", "state_write")
                and n.name not in g.outputs and not g.users(n.name)}
        if not dead:
            break
        feeding = {i for n in g.nodes if n.name in dead for i in n.inputs}
        g.nodes = [n for n in g.nodes if n.name not in dead]
    first = g.node(g.outputs[0])
    note = f"buffer {path} is updated but no output reads it: not kept across executes"
    first.attrs["note"] = f"{first.attrs['note']}; {note}" if first.attrs.get("note") else note
    return True


def _kept_in_three_dims(g, state, write) -> None:
    """A 4-D state kept as [N, C, H * W] (the lowering plans no 4-D state:
    its activations are channels-last): its readers read it reshaped back,
    the value written is reshaped to it."""
    init = state.attrs["init"]
    shape = list(init.shape)
    flat = shape[:2] + [shape[2] * shape[3]]
    state.attrs["init"] = init.reshape(flat)
    back = Node(f"{state.name}_4d", "reshape", [state.name], {"shape": shape})
    g.replace_uses(state.name, back.name)
    write.inputs[0] = state.name
    g.nodes.insert(g.nodes.index(state) + 1, back)
    value = Node(f"{write.name}_3d", "reshape", [write.inputs[1]], {"shape": flat})
    write.inputs[1] = value.name
    g.nodes.insert(g.nodes.index(write), value)


def streamed(g) -> Dict[str, str]:
    """{buffer state: the value written into it}: calibration carries these
    from one sample to the next, as torch's calls would."""
    return {n.inputs[0]: n.inputs[1] for n in g.nodes if n.op == "state_write" and n.attrs.get(STATE)}
