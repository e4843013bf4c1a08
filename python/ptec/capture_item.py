"""Python numbers and lists read out of the input's values: `t.item()`,
`t.tolist()`, and `torch.tensor(...)` of them (probe3 items 1 and 13).

torch.fx records `x.max().item()` as a node whose traced value is a Python
float; capture used to write that number into its readers as a constant
(capture_shape_numbers), so `x / x.max().item()` divided every input by the
example's maximum, silently. A program computes every value per input, so:

* `t.item()` of a one-element tensor whose value depends on the input's data
  is traced as that tensor (a 0-d view of it), which broadcasts where the
  number was used: `x / x.max().item()` is `x / x.max()`, and
  `x.max().item() > 0` a 0-d bool tensor (torch.where takes it; Python
  control on it is refused as the tracer refuses `if x.sum() > 0`);
* `t.tolist()` of such a tensor is the tensor itself: indexing it, len() and
  iteration give its rows and elements as tensors (of a 0-d tensor: as
  item());
* `torch.tensor(v)` / `torch.as_tensor(v)` of a traced value, or of a
  (nested) list of traced values and numbers, is the value as a tensor:
  `torch.tensor(x.tolist())` a copy of x, `torch.tensor([a.item(),
  b.item()])` a stack of the two, in the dtype torch would give (dtype=
  honoured). Anything else in it is refused in one line naming the call.

int() / float() / bool() of such a value stays the tracer's one-line refusal
("depends on the input's values"): a program's shapes and path are fixed,
and Python's float() must return a real number, which fx cannot record (a
float standing for the proxy would be frozen wherever torch or math read it
eagerly), so float(t) cannot be what t.item() is; its refusal names
t.item() (capture_tracer.FLOAT_FIX).
An item() of a value that does not depend on the input (a parameter) is the
constant it always is, as before."""
from __future__ import annotations

import contextlib
import numbers

import torch
import torch.fx


def _varies(tracer, proxy) -> bool:
    """proxy's value may change from run to run (not a known constant)."""
    fixed = getattr(tracer, "fixed", None)
    return not (fixed is not None and getattr(tracer, "_values", None) is not None and fixed(proxy.node))


def item_value(tracer, kind, target, args):
    """The traced tensor standing for `t.item()` / `t.tolist()` of a value
    that depends on the input, else None (the call as before)."""
    if kind != "call_method" or target not in ("item", "tolist") or not args \
            or not isinstance(args[0], torch.fx.Proxy) or len(args) != 1 or not _varies(tracer, args[0]):
        return None
    t = args[0]
    tracer.ptec_item_read = f"Tensor.{target}()"     # named if torch then refuses a traced value (item_refusal)
    t.node.meta["ptec_item_read"] = tracer.ptec_item_read      # and if a lowering wants a number (item_lowering)
    value = tracer.value(t.node) if tracer.known(t.node) else None
    if target == "tolist" and isinstance(value, torch.Tensor) and value.dim() > 0:
        return t                        # a list of its rows: the tensor, indexed the same way
    if isinstance(value, torch.Tensor) and value.dim() == 0:
        return t
    number = t.reshape(())              # a one-element tensor's number, 0-d (torch refuses more elements)
    number.node.meta["ptec_item_read"] = tracer.ptec_item_read
    return number


def _leaves(v, out) -> bool:
    if isinstance(v, (list, tuple)):
        return all(_leaves(e, out) for e in v)
    out.append(v)
    return isinstance(v, (torch.fx.Proxy, numbers.Number, torch.Tensor))


def _dtype_of(tracer, leaves):
    """The dtype torch.tensor gives a list of these leaves."""
    kinds = []
    for v in leaves:
        if isinstance(v, torch.fx.Proxy):
            known = tracer.known(v.node) and isinstance(tracer.value(v.node), torch.Tensor)
            kinds.append(tracer.value(v.node).dtype if known else torch.get_default_dtype())
        elif isinstance(v, torch.Tensor):
            kinds.append(v.dtype)
        else:
            kinds.append(torch.bool if isinstance(v, bool) else (torch.int64 if isinstance(v, numbers.Integral)
                                                                 else torch.get_default_dtype()))
    if any(k.is_floating_point or k.is_complex for k in kinds):
        return torch.get_default_dtype()
    if all(k == torch.bool for k in kinds):
        return torch.bool
    return torch.int64


def _as_tensor(tracer, v, dtype):
    if isinstance(v, (list, tuple)):
        return torch.stack([_as_tensor(tracer, e, dtype) for e in v])
    if isinstance(v, torch.fx.Proxy):
        return v.to(dtype)
    if isinstance(v, torch.Tensor):
        return v.detach().clone().to(dtype)
    return torch.full((), v, dtype=dtype)


def _traced_tensor(tracer, original, name, data, dtype=None, **rest):
    found = []
    plain = _leaves(data, found)
    if not any(isinstance(v, torch.fx.Proxy) for v in found):
        return original(data, dtype=dtype, **rest)
    if not plain:
        from .capture_tracer import TracedControlError, _user_site
        other = type(found[-1]).__name__
        raise TracedControlError(
            f"{tracer.where()}{_user_site()}: torch.{name}(...) of traced values beside a {other} cannot be "
            "traced: use x.clone() for a copy of x, or torch.stack of the tensors")
    if isinstance(data, torch.fx.Proxy) and "ptec_item_read" not in data.node.meta:
        # a traced tensor itself (not a number read by item()/tolist()): torch keeps its dtype, so
        # as_tensor(t) is t and tensor(t) a copy of t; only an explicit dtype= casts it
        if dtype is not None:
            return data.to(dtype)
        return data if name == "as_tensor" else data.clone()
    want = dtype if dtype is not None else _dtype_of(tracer, found)
    return _as_tensor(tracer, data, want)


@contextlib.contextmanager
def tensors_of_traced_values(tracer):
    """torch.tensor / torch.as_tensor take traced values while `tracer`
    traces (module doc); any other data goes to torch's own."""
    saved = {name: getattr(torch, name) for name in ("tensor", "as_tensor")}

    def patched(name):
        original = saved[name]

        def call(data, *args, **kwargs):
            if args or not (isinstance(data, (torch.fx.Proxy, list, tuple))):
                return original(data, *args, **kwargs)
            return _traced_tensor(tracer, original, name, data, **kwargs)
        return call
    for name in saved:
        setattr(torch, name, patched(name))
    try:
        yield
    finally:
        for name, f in saved.items():
            setattr(torch, name, f)


def item_refusal(e: BaseException, where: str, site: str, text: str):
    """One line for torch refusing a traced value where it takes a Python
    number (torch.full_like(x, t.item()), torch.zeros(t.item())) in a model
    that read one with item() / tolist() (e.ptec_item_read), else None."""
    read = getattr(e, "ptec_item_read", None)
    if not read or "traced value" not in text:
        return None
    from .capture_tracer import NUMBER_FIX
    return (f"{where}{site}: a number read with {read} is given where torch takes a Python number ({text}): "
            f"it depends on the input's values, known only when the program runs: {NUMBER_FIX}")


def _item_ancestor(fn: torch.fx.Node):
    seen, todo = set(), list(fn.all_input_nodes)
    while todo:
        n = todo.pop()
        if n.meta.get("ptec_item_read"):
            return n.meta["ptec_item_read"]
        if n not in seen:
            seen.add(n)
            todo.extend(n.all_input_nodes)
    return None


def item_lowering_refusal(e: BaseException):
    """One line for capture's conversion failing on a node (a Python number
    argument given a traced value: F.leaky_relu(x, x.mean().item())) that
    reads a value of item() / tolist(), else None."""
    if not isinstance(e, (TypeError, ValueError)) or "Node" not in str(e):
        return None
    tb, fn = e.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_name == "_fx_to_graph":
            fn = tb.tb_frame.f_locals.get("fn")
        tb = tb.tb_next
    read = _item_ancestor(fn) if isinstance(fn, torch.fx.Node) else None
    if read is None:
        return None
    from .capture_tracer import NUMBER_FIX, _callee
    return (f"operator not supported: {fn.name} ({_callee(fn)}) is given a number read with {read} where ptec "
            f"takes a Python number: it depends on the input's values, known only when the program runs: "
            f"{NUMBER_FIX}")


def item_readers(gm: torch.fx.GraphModule):
    """{fx node name: "Tensor.item()"} of the nodes computed from a value
    read with item() / tolist(), for capture_own_failure's refusal of a
    reader ptec cannot rewrite (x[:, :x.argmax().item()], x.roll(i.item()))."""
    out = {}
    for fn in gm.graph.nodes:
        read = _item_ancestor(fn) if fn.op in ("call_function", "call_method", "call_module") else None
        if read:
            out[fn.name] = read
    return out
