"""Call forms a forward may use, brought to the one form capture reads
(probe items 4, 5, R4, R13):

* arguments by keyword: `torch.cat(tensors=[x, x])`, `torch.add(input=x,
  other=y)`, `F.linear(input=x, weight=w)`, `torch.where(condition=c,
  input=x, other=y)`, `x.reshape(shape=(4, 8))`. Before a call is
  recorded, its required parameters (those without a default) given by
  keyword move to their positional slots, in order, as far as every
  overload the call binds to agrees (positional_form). Keywords of
  parameters with a default stay keywords (`torch.cat([x, y], dim=1)`,
  `x.clamp(min=0.)`), the form capture has always read; a call whose
  overloads disagree on the slots is left as written.
* forward parameters the example inputs do not give (`def forward(self, x,
  mask=None)`, `scale: float = 2.0`, keyword-only ones): bound to their
  defaults while tracing, no placeholder (root_arguments). This is also
  what lets nn.GRU, nn.LSTM, nn.GRUCell, nn.LSTMCell, nn.EmbeddingBag,
  nn.MultiheadAttention, nn.TransformerEncoder(Layer) and
  nn.ConvTranspose2d be the whole model: their forwards (or their
  stand-ins') have such parameters.
* `def forward(self, *xs)`: one placeholder per example input (torch.fx
  1.13's own *args path rebuilds the code object, which Python 3.11
  refuses). `def forward(self, x, **kw)` (same fx path): traced with kw
  empty, as the program is called (inputs only).
* `torch.Tensor.add(x, 1.5)`, `torch.Tensor.relu(x)`: a C method of
  torch's tensor class refuses fx's proxy before any hook sees it; while
  tracing, those class attributes are functions that record the method
  call on a proxy and call the C method otherwise (unbound_methods_traced).
"""
from __future__ import annotations

import contextlib
import functools
import inspect
from typing import Any, Dict, List, Tuple

import torch
import torch.fx
from torch.fx.operator_schemas import get_signature_for_torch_op

_EMPTY = inspect.Parameter.empty
_POSITIONAL = inspect.Parameter.POSITIONAL_OR_KEYWORD
# set on the class attributes unbound_methods_traced installs: the method's name
TENSOR_METHOD = "_ptec_tensor_method"


# -- keywords to positions ------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _signatures(kind: str, target) -> Tuple[inspect.Signature, ...]:
    """The signatures a call may bind to: a torch op's overloads (its
    TorchScript schemas, `self` named `input`), or a Python function's one.
    A Tensor method's include its receiver as the first parameter."""
    found = None
    try:
        if kind == "call_method":
            own = torch.Tensor.__dict__.get(target)
            if inspect.isfunction(own) and not hasattr(own, TENSOR_METHOD):   # written in Python (split, unique)
                found = [inspect.signature(own)]
            else:
                packet = getattr(torch.ops.aten, target, None)
                found = get_signature_for_torch_op(packet) if packet is not None else None
        elif isinstance(target, type):
            found = None
        elif inspect.isbuiltin(target):
            found = get_signature_for_torch_op(target)
        elif inspect.isfunction(target):
            from torch._jit_internal import boolean_dispatched
            if target in boolean_dispatched:            # F.max_pool2d: the two branches' signatures
                both = boolean_dispatched[target]
                found = [inspect.signature(both["if_true"]), inspect.signature(both["if_false"])]
            else:
                found = [inspect.signature(inspect.unwrap(target))]
    except Exception:                                   # noqa: BLE001 - no signature: left as written
        found = None
    return tuple(found or ())


def _names(value) -> bool:
    return isinstance(value, str) or (isinstance(value, (list, tuple)) and bool(value)
                                      and all(isinstance(v, str) for v in value))


def _moved(sig: inspect.Signature, args: tuple, kwargs: Dict[str, Any]):
    """(args, kwargs) with the required parameters given by keyword in their
    positional slots, or None when the call does not bind to sig."""
    try:
        bound = sig.bind(*args, **kwargs).arguments
    except TypeError:
        return None
    for name, value in bound.items():
        # a named-tensor overload (dim: str) binds any value by name: not this call's
        if sig.parameters[name].annotation in (str, List[str]) and not _names(value):
            return None
    params = list(sig.parameters.values())
    args, kwargs = list(args), dict(kwargs)
    for p in params[len(args):]:
        if p.kind != _POSITIONAL or p.default is not _EMPTY or p.name not in kwargs:
            break
        args.append(kwargs.pop(p.name))
    return tuple(args), kwargs


def positional_form(kind: str, target, args: tuple, kwargs: Dict[str, Any]) -> Tuple[tuple, Dict[str, Any]]:
    """The call's arguments with its required parameters given by keyword
    moved to their positional slots (module doc); as given when nothing
    moves, the call has no known signature, or its overloads disagree."""
    if kind not in ("call_function", "call_method") or not kwargs:
        return args, kwargs
    if (getattr(target, "__module__", None) or "").startswith("ptec"):
        return args, kwargs             # ptec's own functions (stand-ins, markers) are read as made
    try:
        hash(target)
    except TypeError:
        return args, kwargs
    forms = []
    for sig in _signatures(kind, target):
        form = _moved(sig, args, kwargs)
        if form is not None and form not in forms:
            forms.append(form)
    if len(forms) != 1:
        return args, kwargs
    return forms[0]


def method_call(kind: str, target):
    """(kind, target) of a call: a call recorded through one of
    unbound_methods_traced's functions (fx's __torch_function__ passes it
    as a function) is the Tensor method it stands for."""
    name = getattr(target, TENSOR_METHOD, None) if kind == "call_function" else None
    return ("call_method", name) if name else (kind, target)


# -- torch.Tensor.add(x, ...) -----------------------------------------------------

def _traced_method(name: str, c_method):
    def method(self, *args, **kwargs):
        if isinstance(self, torch.fx.Proxy):
            return getattr(self, name)(*args, **kwargs)
        return c_method(self, *args, **kwargs)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = c_method.__doc__
    setattr(method, TENSOR_METHOD, name)
    return method


# torch's C tensor class (torch 2.3 renamed it TensorBase)
_TENSOR_BASE = getattr(torch._C, "TensorBase", None) or torch._C._TensorBase
_METHOD_DESCRIPTOR = type(_TENSOR_BASE.add)


@contextlib.contextmanager
def unbound_methods_traced():
    """While tracing: torch.Tensor.<m> for each C method of the tensor class
    (not the Python ones, which fx traces already, nor the dunders) is a
    function that records x.<m>(...) when given a proxy."""
    # torch caches its table of tensor methods on first use: taken before
    # the class attributes change, so that it names the C methods
    torch.overrides._get_tensor_methods()
    installed = []
    try:
        for name, c_method in vars(_TENSOR_BASE).items():
            if name.startswith("__") or name in torch.Tensor.__dict__ or type(c_method) is not _METHOD_DESCRIPTOR:
                continue
            setattr(torch.Tensor, name, _traced_method(name, c_method))
            installed.append(name)
        yield
    finally:
        for name in installed:
            delattr(torch.Tensor, name)


# -- the root's parameters ---------------------------------------------------------

def root_arguments(tracer, root_fn, examples: int):
    """(fn, args) for torch.fx.Tracer.create_args_for_root of a module's
    forward: a placeholder for each of the `examples` inputs, the defaults
    of the parameters after them, and the example inputs beyond the named
    parameters as *args. None when the forward has a parameter neither an
    input nor a default gives, or a form this does not cover (fx's own
    path then)."""
    fn = inspect.unwrap(root_fn)
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    params = list(sig.parameters.values())
    if not params or params[0].kind != _POSITIONAL:
        return None
    params = params[1:]                                   # self
    named = [p for p in params if p.kind in (inspect.Parameter.POSITIONAL_ONLY, _POSITIONAL)]
    varargs = [p for p in params if p.kind == inspect.Parameter.VAR_POSITIONAL]
    keyword_only = [p for p in params if p.kind == inspect.Parameter.KEYWORD_ONLY]
    keywords = any(p.kind == inspect.Parameter.VAR_KEYWORD for p in params)   # forward(x, **kw): kw empty
    extra = max(0, examples - len(named))
    missing = [p.name for p in named[examples:] + keyword_only if p.default is _EMPTY]
    if missing and examples:
        from .capture_modules import CaptureModuleError
        given = f"{examples} example input" + ("s" if examples > 1 else "")
        raise CaptureModuleError(
            f"{type(tracer.root).__name__}.forward takes {', '.join(p.name for p in named)}, the {given} "
            f"{'leaves' if examples == 1 else 'leave'} {', '.join(missing)} without a value: "
            "give one example input per parameter without a default (or give it a default)")
    if extra and not varargs:
        return None
    if examples >= len(named) and not varargs and not keyword_only and not keywords:
        return None                                       # every parameter an input: fx's own path

    def placeholder(name, default=_EMPTY):
        return tracer.create_proxy("placeholder", name, () if default is _EMPTY else (default,), {},
                                   type_expr=fn.__annotations__.get(name))
    args = [tracer.root]
    for i, p in enumerate(named):
        args.append(placeholder(p.name, p.default) if i < examples else p.default)
    for i in range(extra):
        args.append(placeholder(f"{varargs[0].name}_{i}"))
    defaults = {p.name: p.default for p in keyword_only}

    def call(*a):
        return root_fn(*a, **defaults)
    return call, args

