"""Forms of a module other than a plain forward (session 18 probe items 1, 2, 3, 8, R12).

* Computed weights: torch.nn.utils.prune (weight_orig * weight_mask by a
  forward pre-hook), torch.nn.utils.weight_norm (g * v / |v|),
  torch.nn.utils.spectral_norm (weight_orig / sigma; in eval mode sigma
  comes from the u, v buffers as they are, no power iteration) and
  torch.nn.utils.parametrize (parametrizations.orthogonal / spectral_norm,
  register_parametrization). Each recomputes the tensor on every call
  from the same parameters, so at compile time it is a constant: the
  capture takes a copy of the model whose module holds that value as its
  weight (what torch's eval forward uses), the hook or parametrization
  gone. The user's model is never changed (the copy shares its tensors,
  which capture only reads).
* Forward hooks and forward pre-hooks (register_forward_hook /
  register_forward_pre_hook) run as code: torch.fx does not call the
  hooks of a module it keeps as one node (nn.Linear, nn.Conv2d, ...) nor
  those of the root, so in the copy such a module is wrapped in Hooked,
  whose forward calls the hooks around the module as torch's __call__
  does (traced like forward code), and the root's forward is wrapped the
  same way. A module fx traces through runs its hooks itself. A hook on a
  module inside one ptec replaces whole (nn.LSTM, nn.MultiheadAttention,
  nn.TransformerEncoderLayer, ...) is refused in one line. Global hooks
  (register_module_forward_hook / _pre_hook) become each module's first
  hooks in the copy (not those of the parts of a module ptec replaces
  whole), and are put aside while capture runs. Backward hooks are
  irrelevant to inference: the copy has none.
* TorchScript modules (torch.jit.script / torch.jit.trace) have no Python
  forward to trace: refused in one line.
* nn.ConvTranspose1d / 2d called with output_size: the output_padding
  that gives the traced output size (conv_output_size), as for 3-D.
* A module made in forward with no parameters or buffers (nn.ReLU()(x),
  nn.Upsample(scale_factor=2)(x)) is a function of its constructor's
  arguments: traced through (traced_through, capture_tracer's call_module).
* The stand-ins of capture_modules (nn.LSTM's Recurrent, nn.MultiheadAttention's
  SelfAttention, the transformer layers' ...) answer what they do not
  have themselves from the module they stand for (OriginalAttributes):
  self.rnn.num_layers, self.attn.out_proj.weight (tensors as constants),
  self.transformer.generate_square_subsequent_mask(T).
"""
from __future__ import annotations

import contextlib
import copy
import functools
from collections import OrderedDict
from typing import Callable, Optional

import torch
import torch.nn as nn

# the module attributes holding per-module dicts / sets that a copy must not share
_OWN = ("_parameters", "_buffers", "_forward_hooks", "_forward_pre_hooks", "_state_dict_hooks",
        "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks", "_non_persistent_buffers_set")


def _script_refusal(model: nn.Module) -> Optional[str]:
    script = getattr(torch.jit, "ScriptModule", ())
    for name, m in model.named_modules():
        if isinstance(m, script):
            where = "the model is" if not name else f"module {name} is"
            return (f"{where} a TorchScript module (torch.jit.script / torch.jit.trace), which has no Python "
                    "forward to trace: pass the Python nn.Module it was made from")
    return None


def _global_dicts() -> tuple:
    """torch's global forward pre-hook and hook dicts (register_module_forward_pre_hook / _hook)."""
    import torch.nn.modules.module as mm
    return mm._global_forward_pre_hooks, mm._global_forward_hooks


def _as_local_hooks(root: nn.Module) -> None:
    """The global hooks as each module's first hooks (torch runs them
    before the module's own), except in a module ptec replaces whole,
    whose parts its stand-in does not call (nor, in eval, does torch's
    fast path of the transformer layers)."""
    from .capture_modules import COVERED
    pre, post = (list(d.items()) for d in _global_dicts())
    if not (pre or post):
        return
    covered = [name for name, m in root.named_modules() if name and isinstance(m, COVERED)]
    for name, m in root.named_modules():
        if any(name.startswith(c + ".") for c in covered):
            continue
        m._forward_pre_hooks = OrderedDict([(("global", k), h) for k, h in pre] + list(m._forward_pre_hooks.items()))
        m._forward_hooks = OrderedDict([(("global", k), h) for k, h in post] + list(m._forward_hooks.items()))


@contextlib.contextmanager
def _globals_put_aside():
    """torch's global hooks cleared while capture runs (each module of the
    copy has them: _as_local_hooks), then put back as they were."""
    dicts = _global_dicts()
    saved = [list(d.items()) for d in dicts]
    for d in dicts:
        d.clear()
    try:
        yield
    finally:
        for d, items in zip(dicts, saved):
            d.clear()
            d.update(items)


def _structural_copy(m: nn.Module, memo: dict) -> nn.Module:
    """m's module tree as new module objects with their own dicts (of
    parameters, buffers, children, hooks) sharing m's tensors."""
    if id(m) in memo:
        return memo[id(m)]
    c = type(m).__new__(type(m))
    memo[id(m)] = c
    d = dict(m.__dict__)
    for k in _OWN:
        if k in d:
            d[k] = copy.copy(d[k])
    d["_backward_hooks"] = OrderedDict()          # irrelevant to inference
    d["_modules"] = OrderedDict((k, None if v is None else _structural_copy(v, memo))
                                for k, v in m._modules.items())
    c.__dict__.update(d)
    return c


def _weight_hook(hook) -> Optional[tuple]:
    """(tensor name, the source tensors' suffixes) of a pre-hook that
    computes a module's tensor: prune, weight_norm, spectral_norm."""
    from torch.nn.utils.prune import BasePruningMethod
    from torch.nn.utils.spectral_norm import SpectralNorm
    from torch.nn.utils.weight_norm import WeightNorm
    if isinstance(hook, BasePruningMethod):
        return hook._tensor_name, ("_orig", "_mask")
    if isinstance(hook, WeightNorm):
        return hook.name, ("_g", "_v")
    if isinstance(hook, SpectralNorm):
        return hook.name, ("_orig", "_u", "_v")
    return None


def _fold_weights(c: nn.Module) -> None:
    """c's computed tensors (module doc) as plain parameters of their value now."""
    import torch.nn.utils.parametrize as parametrize
    with torch.no_grad():
        if parametrize.is_parametrized(c):
            names = list(c.parametrizations.keys())
            values = {k: getattr(c, k).detach().clone() for k in names}
            c.__class__ = type(c).__bases__[0]           # parametrize's injected class: its base
            del c._modules["parametrizations"]
            for k, v in values.items():
                c._parameters[k] = nn.Parameter(v, requires_grad=False)
        folded = {}
        for key, hook in list(c._forward_pre_hooks.items()):
            found = _weight_hook(hook)
            if found is None:
                continue
            name, sources = found
            hook(c, ())             # (eval: spectral_norm's sigma from u and v as they are; writes only c's dict)
            folded[name] = sources
            del c._forward_pre_hooks[key]
        for name, sources in folded.items():
            value = c.__dict__.pop(name).detach().clone()
            for s in sources:
                c._parameters.pop(name + s, None)
                c._buffers.pop(name + s, None)
            c._parameters[name] = nn.Parameter(value, requires_grad=False)


class Hooked(nn.Module):
    """A module with forward (pre-)hooks as code: torch's __call__ order,
    a pre-hook's result (a tuple, or one value) replacing the arguments, a
    hook's result (not None) replacing the output."""

    def __init__(self, module: nn.Module, pre, post):
        super().__init__()
        self.module = module
        self.__dict__["pre_hooks"], self.__dict__["hooks"] = list(pre), list(post)

    def forward(self, *args, **kwargs):
        return _run_hooked(self.module, self.pre_hooks, self.hooks,
                           lambda *a, **k: self.module(*a, **k), args, kwargs)


def _run_hooked(m, pre, post, call: Callable, args, kwargs):
    for hook in pre:
        got = hook(m, args)
        if got is not None:
            args = got if isinstance(got, tuple) else (got,)
    out = call(*args, **kwargs)
    for hook in post:
        got = hook(m, args, out)
        if got is not None:
            out = got
    return out


def _leaf(m: nn.Module) -> bool:
    from .nn import SVDF
    return isinstance(m, SVDF) or torch.fx.Tracer().is_leaf_module(m, "")


def _hooks_as_code(root: nn.Module, error) -> nn.Module:
    """root (a copy) with the hooks fx would not run made code (module doc)."""
    from .capture_modules import COVERED
    covered = [name for name, m in root.named_modules() if name and isinstance(m, COVERED)]
    wrapped = {}
    for name, m in list(root.named_modules()):
        if not name or not (m._forward_hooks or m._forward_pre_hooks):
            continue
        outer = next((c for c in covered if name.startswith(c + ".")), None)
        if outer is not None:
            raise error(f"module {name} has a forward hook, inside module {outer} "
                        f"({type(root.get_submodule(outer)).__name__}), which ptec computes whole: "
                        f"register the hook on {outer} or remove it")
        if not _leaf(m):
            continue                # fx traces its __call__: the hooks run as code
        pre, post = list(m._forward_pre_hooks.values()), list(m._forward_hooks.values())
        m._forward_pre_hooks.clear()
        m._forward_hooks.clear()
        wrapped[id(m)] = Hooked(m, pre, post)
    for parent in list(root.modules()):         # every place it is installed (a module used twice)
        for attr, m in list(parent._modules.items()):
            if m is not None and id(m) in wrapped and parent is not wrapped[id(m)]:
                parent._modules[attr] = wrapped[id(m)]
    if not (root._forward_hooks or root._forward_pre_hooks):
        return root
    pre, post = list(root._forward_pre_hooks.values()), list(root._forward_hooks.values())
    root._forward_pre_hooks.clear()
    root._forward_hooks.clear()
    cls = type(root)
    if isinstance(root, COVERED):       # the stand-in replaces it: the hooks go around
        hooked = type("Hooked", (Hooked,), {"forward": functools.wraps(cls.forward)(Hooked.forward)})
        return hooked(root, pre, post)

    @functools.wraps(cls.forward)
    def forward(self, *args, **kwargs):
        return _run_hooked(self, pre, post, lambda *a, **k: cls.forward(self, *a, **k), args, kwargs)
    root.__class__ = type(cls.__name__, (cls,), {"forward": forward, "__module__": cls.__module__,
                                                 "__doc__": cls.__doc__})
    return root


def _needs_copy(model: nn.Module) -> bool:
    import torch.nn.utils.parametrize as parametrize
    return any(m._forward_hooks or m._forward_pre_hooks or m._backward_hooks or parametrize.is_parametrized(m)
               for m in model.modules())


def prepared(model: nn.Module, error) -> nn.Module:
    """The model capture traces (module doc): model itself, or a copy
    (in eval mode) with its computed weights folded and its hooks as code.
    error: the exception class of a refusal."""
    from .capture_torch_ao import torch_ao_refusal
    refusal = _script_refusal(model) or torch_ao_refusal(model)     # torch.ao.quantization's: the float model asked
    if refusal:
        raise error(refusal)
    model.eval()
    if not _needs_copy(model) and not any(_global_dicts()):
        return model
    c = _structural_copy(model, {})
    for m in c.modules():
        _fold_weights(m)
    _as_local_hooks(c)
    return _hooks_as_code(c, error)


def with_module_forms(capture: Callable) -> Callable:
    """capture(model, ...) on prepared(model) (decorator)."""
    @functools.wraps(capture)
    def captured(model, *args, **kwargs):
        if not isinstance(model, nn.Module):
            return capture(model, *args, **kwargs)
        from .capture import CaptureError
        model = prepared(model, CaptureError)
        with _globals_put_aside():
            return capture(model, *args, **kwargs)
    return captured


# ---------------------------------------------------------------------------
# nn.ConvTranspose1d / 2d(x, output_size)

def conv_output_size(m: nn.Module, fn, in_shape, out_shape) -> nn.Module:
    """m, or for a transposed convolution called with output_size (the
    keyword, or the second positional argument) a copy whose
    output_padding gives the traced output size, as torch picks it."""
    if not isinstance(m, (nn.ConvTranspose1d, nn.ConvTranspose2d)) or in_shape is None or out_shape is None:
        return m
    if len(fn.args) < 2 and fn.kwargs.get("output_size") is None:
        return m
    spatial = 1 if isinstance(m, nn.ConvTranspose1d) else 2
    k, s, p, d = (list(v) for v in (m.kernel_size, m.stride, m.padding, m.dilation))
    lead = len(out_shape) - spatial
    extra = tuple(int(out_shape[lead + i]) - ((int(in_shape[lead + i]) - 1) * s[i] - 2 * p[i] + d[i] * (k[i] - 1) + 1)
                  for i in range(spatial))
    if tuple(m.output_padding) == extra:
        return m
    twin = copy.copy(m)
    twin.output_padding = extra
    return twin


# ---------------------------------------------------------------------------
# a module made in forward

def traced_through(m: nn.Module) -> bool:
    """Whether a module that is not a submodule of the model (made in
    forward) is traced through: when it has no parameters or buffers (a
    function of its constructor's arguments); else it stays refused."""
    return next(m.parameters(), None) is None and next(m.buffers(), None) is None


# ---------------------------------------------------------------------------
# the attributes of a module ptec replaces by a stand-in (capture_modules)

class OriginalAttributes:
    """A stand-in that answers what it does not have itself from the
    module it stands for: self.rnn.num_layers, self.attn.out_proj.weight,
    self.transformer.generate_square_subsequent_mask(T)."""

    def __getattr__(self, name):
        try:
            return nn.Module.__getattr__(self, name)
        except AttributeError:
            original = self.__dict__.get("_ptec_original")
            if original is None or name.startswith("__"):
                raise
            return _as_constants(getattr(original, name))


def _as_constants(value):
    """A value read from a replaced module: its tensors as constants (fx
    traces a parameter only of the model's own modules)."""
    if isinstance(value, torch.Tensor):
        return value.detach()
    if isinstance(value, nn.Module):
        return _ConstantView(value)
    return value


class _ConstantView:
    """A submodule of a replaced module, read only: its tensors as
    constants (self.attn.out_proj.weight); called, refused in one line."""

    def __init__(self, module: nn.Module):
        self.__dict__["_module"] = module

    def __getattr__(self, name):
        return _as_constants(getattr(self.__dict__["_module"], name))

    def __call__(self, *args, **kwargs):
        from .capture_tracer import TracedControlError
        raise TracedControlError(f"{type(self.__dict__['_module']).__name__}, a part of a module ptec computes whole "
                                 "(nn.LSTM, nn.MultiheadAttention, the transformer layers), is called on its own: "
                                 "keep a copy of it as a submodule (self.x = copy.deepcopy(...)) and call that")


def answering_for(stand_in, original: nn.Module):
    """stand_in (capture_modules' module for `original`), also answering
    for original's attributes; its stand-ins of original's submodules of
    the same name too (an encoder's layers)."""
    from .capture_modules import COVERED
    if not isinstance(stand_in, nn.Module) or not isinstance(original, nn.Module) or stand_in is original:
        return stand_in
    if not isinstance(stand_in, OriginalAttributes):
        return stand_in
    stand_in.__dict__["_ptec_original"] = original
    mine = dict(stand_in.named_modules())
    for name, m in original.named_modules():
        if name and isinstance(m, COVERED) and name in mine and mine[name] is not m:
            answering_for(mine[name], m)
    return stand_in
