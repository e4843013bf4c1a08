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
  part of a module ptec replaces whole (nn.TransformerEncoderLayer's
  linear1, ...) runs where torch's inference call runs it (_parts_hooked:
  the layers around it traced as torch's forward, _decomposed), and is
  left alone where torch never runs it (nn.MultiheadAttention's out_proj).
  A part called on its own runs (_ConstantView). Global hooks
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
  One with tensors (nn.Linear(4, 4)(x)) is installed in the model while
  capture runs (installed_made), its tensors those of the traced call
  (its initial weights drawn as torch draws them, capture_random); once
  traced, torch runs the model twice from different generator states:
  the same output (the forward seeds the generator, or the module's
  initial tensors are fixed: nn.LayerNorm, nn.PReLU) runs with a compile
  note, a different one (fresh random weights every call) is refused in
  one line. Batch / instance norms made in forward (training mode, batch
  statistics) are refused.
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

from .capture_train_norms import evaluated

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
    before the module's own), but on the parts of an nn.MultiheadAttention,
    which torch never calls (the parts of the other modules ptec replaces
    whole: as torch calls them, _parts_hooked)."""
    pre, post = (list(d.items()) for d in _global_dicts())
    if not (pre or post):
        return
    attention = [name for name, m in root.named_modules() if isinstance(m, nn.MultiheadAttention)]
    for name, m in root.named_modules():
        if any(_inside(name, a) for a in attention):
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
        if _UNHOOKED[0]:
            return self.module(*args, **kwargs)
        return _run_hooked(self.module, self.pre_hooks, self.hooks,
                           lambda *a, **k: self.module(*a, **k), args, kwargs)

    def __getattr__(self, name):
        """What the module has (a layer's forward reading self.norm1.eps, self.self_attn.batch_first)."""
        try:
            return nn.Module.__getattr__(self, name)
        except AttributeError:
            if name.startswith("__") or "module" not in self.__dict__.get("_modules", {}):
                raise
            return getattr(self._modules["module"], name)


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


def _inside(name: str, outer: str) -> bool:
    return name != outer and (not outer or name.startswith(outer + "."))


def _decomposed(m: nn.Module) -> None:
    """m (a layer ptec replaces whole, in the copy) left as torch's module
    and traced through: its class a subclass of its own outside torch.nn
    (which fx would keep as one node), marked for capture_modules'
    _stand_in; its parts' calls, their hooks, stand-ins, run as torch's
    forward makes them."""
    cls = type(m)
    if getattr(cls, "_ptec_decomposed", False):
        return
    body = {"_ptec_decomposed": True, "__module__": __name__, "__doc__": cls.__doc__}
    if isinstance(m, nn.TransformerEncoderLayer):
        body["forward"] = _encoder_layer_forward(cls)
    m.__class__ = type(cls.__name__, (cls,), body)


# Hooked wrappers traced as their module alone (no hooks) while > 0: a layer's fast path, which calls no part
_UNHOOKED = [0]


def _encoder_layer_forward(cls):
    """nn.TransformerEncoderLayer's forward traced: torch's, its parts
    called (their hooks with them), but where torch 1.13's inference call
    (eval, torch.no_grad) takes its fast path, which calls no part
    (torch._transformer_encoder_layer_fwd on their weights): the same
    computation, the parts' hooks not run."""
    @functools.wraps(cls.forward)
    def forward(self, src, src_mask=None, src_key_padding_mask=None):
        attn = self.self_attn
        fast = (src.dim() == 3 and not self.training and attn.batch_first and attn._qkv_same_embed_dim
                and self.activation_relu_or_gelu and self.norm1.eps == self.norm2.eps and src_mask is None
                and attn.num_heads % 2 == 0 and not torch.is_autocast_enabled())
        _UNHOOKED[0] += fast
        try:
            return cls.forward(self, src, src_mask, src_key_padding_mask)
        finally:
            _UNHOOKED[0] -= fast
    return forward


def _parts_hooked(root: nn.Module) -> set:
    """The hooks on parts of the modules ptec replaces whole, as torch 1.13
    runs them (its forward path that calls its parts: grad enabled, or any
    of the fast path's conditions unmet): a part torch calls through its
    __call__ (nn.TransformerEncoderLayer's self_attn, linear1, norm1, ...,
    an encoder's layers and norm, nn.Transformer's encoder and decoder)
    makes each layer around it decomposed (_decomposed); a part of an
    nn.MultiheadAttention (out_proj), whose forward reads its weight and
    never calls it, keeps hooks torch never runs there: left alone (they
    run if the model calls the part itself). The names of those parts."""
    from .capture_modules import COVERED
    covered = [(name, m) for name, m in root.named_modules() if isinstance(m, COVERED)]
    ignored = set()
    for name, m in list(root.named_modules()):
        if not (m._forward_hooks or m._forward_pre_hooks):
            continue
        outers = [(c, cm) for c, cm in covered if _inside(name, c)]
        if not outers:
            continue
        if any(isinstance(cm, nn.MultiheadAttention) for _, cm in outers):
            ignored.add(name)
            continue
        for _, cm in outers:
            _decomposed(cm)
    return ignored


def _hooks_as_code(root: nn.Module, error) -> nn.Module:
    """root (a copy) with the hooks fx would not run made code (module doc)."""
    from .capture_modules import COVERED
    ignored = _parts_hooked(root)
    wrapped = {}
    for name, m in list(root.named_modules()):
        if not name or not (m._forward_hooks or m._forward_pre_hooks) or name in ignored:
            continue
        if not _leaf(m) or isinstance(m, (nn.ModuleList, nn.ModuleDict)):
            continue                # fx traces its __call__: the hooks run as code (a container: never called)
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
    from .capture_call_override import call_override_refusal, call_traced, root_overrides_call
    refusal = _script_refusal(model) or torch_ao_refusal(model)     # torch.ao.quantization's: the float model asked
    refusal = refusal or call_override_refusal(model)    # nn.LSTM subclass overriding __call__ (capture_call_override)
    if refusal:
        raise error(refusal)
    evaluated(model)        # a batch norm in training mode under an eval root kept so (capture_train_norms)
    if not _needs_copy(model) and not any(_global_dicts()) and not root_overrides_call(model):
        return model
    c = _structural_copy(model, {})
    for m in c.modules():
        _fold_weights(m)
    _as_local_hooks(c)
    return call_traced(_hooks_as_code(c, error))    # the root's __call__ override traced (capture_call_override)


def with_module_forms(capture: Callable) -> Callable:
    """capture(model, ...) on prepared(model) (decorator)."""
    @functools.wraps(capture)
    def captured(model, *args, **kwargs):
        if not isinstance(model, nn.Module):
            return capture(model, *args, **kwargs)
        from .capture import CaptureError
        from .capture_module_aliases import bound_methods_as_calls, paths_known
        user = model
        model = prepared(model, CaptureError)
        del _MADE[:]
        try:
            with _globals_put_aside(), paths_known(user), \
                    bound_methods_as_calls(model):     # self.cell called by a lambda / bound forward of __init__
                try:
                    graph = capture(model, *args, **kwargs)
                finally:
                    _uninstall_made()
                    _PARTS.clear()
                examples = args[0] if args else kwargs.get("example_inputs", ())
                _judge_made_in_forward(model, list(examples), graph, CaptureError)
        finally:
            del _MADE[:]
        return graph
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
    forward) is traced through as it is: when it has no parameters or
    buffers (a function of its constructor's arguments); else
    installed_made installs it."""
    return next(m.parameters(), None) is None and next(m.buffers(), None) is None


# (class name, where, root, path) of the modules with tensors made in forward that the capture running installed
# (with_module_forms)
_MADE: list = []


def installed_made(tracer, m: nn.Module, where: str, error) -> str:
    """m (made in forward, with parameters or buffers) installed as a
    submodule of the model being traced, so that capture takes it as one
    of the model's layers (nn.Linear, nn.LayerNorm, nn.PReLU, ...), its
    tensors those made in the traced call; its path. A batch or instance
    norm is refused in one line (error): made in forward it is in training
    mode, as torch makes every module, and normalizes by the batch's
    statistics; so is a module ptec replaces whole (nn.LSTM: its stand-in
    is made from the model's submodules before tracing)."""
    from .capture_modules import COVERED
    if m.training and isinstance(m, nn.modules.batchnorm._NormBase):
        raise error(f"{where}: {type(m).__name__} is made in forward, so in training mode (torch normalizes by "
                    "each batch's statistics): make it a submodule in __init__ and call that")
    if isinstance(m, COVERED) and id(m) not in _PARTS:
        raise error(f"{where}: {type(m).__name__} is made in forward, and ptec computes it whole from a submodule "
                    "(nn.LSTM, nn.MultiheadAttention, the transformer layers, ...): make it a submodule in __init__ "
                    "and call that")
    root = tracer.root
    name = f"_ptec_made_in_forward_{len(_MADE)}"
    root.add_module(name, m)
    _MADE.append((None if id(m) in _PARTS else type(m).__name__, where, root, name))    # a part: not judged
    paths = getattr(tracer, "submodule_paths", None)
    if paths is not None:
        for sub, sm in m.named_modules():
            paths.setdefault(sm, f"{name}.{sub}" if sub else name)
    return name


def _flat_tensors(value) -> list:
    from torch.utils._pytree import tree_flatten
    return [v for v in tree_flatten(value)[0] if isinstance(v, torch.Tensor)]


def _same_on_every_call(model: nn.Module, example_inputs) -> bool:
    """Whether torch's output of model on the example is the same from one
    call to the next, the global generator's state differing (a module
    made in forward draws fresh initial weights on every call unless the
    forward seeds the generator first, or sets them). The model's tensors
    are put back as they were."""
    state = {k: v.detach().clone() for k, v in model.state_dict(keep_vars=True).items()}
    outs = []
    try:
        for seed in (1, 2):
            with torch.random.fork_rng(devices=[]), torch.no_grad():
                torch.manual_seed(seed)
                outs.append(_flat_tensors(model(*example_inputs)))
    finally:
        with torch.no_grad():
            for k, v in model.state_dict(keep_vars=True).items():
                if k in state:
                    v.copy_(state[k])
    a, b = outs
    return len(a) == len(b) and all(x.shape == y.shape and torch.equal(x, y) for x, y in zip(a, b))


def drawn_in_forward(tracer) -> None:
    """A parameter made in forward drawn at random (its module's initial
    weights): judged as the modules installed_made installs."""
    from .capture_tracer import _user_site
    _MADE.append(("Parameter", f"{tracer.where()}{_user_site()}", None, None))


def _uninstall_made() -> None:
    """The modules installed_made put in the model taken out again."""
    for _, _, root, name in _MADE:
        if root is not None:
            root._modules.pop(name, None)


def _judge_made_in_forward(model: nn.Module, example_inputs, graph, error) -> None:
    """With a module with tensors made in forward: refused in one line when
    torch's output differs from call to call (fresh random initial weights),
    else a compile note on the graph's first output."""
    made = [(cls, where) for cls, where, root, _ in _MADE if root is not None and cls is not None] \
        or [(cls, where) for cls, where, root, _ in _MADE if root is None]
    if not made:
        return
    cls, where = made[0]
    if not _same_on_every_call(model, example_inputs):
        raise error(f"{where}: {cls} is made in forward with random initial weights, new on every call (torch's "
                    "output differs from call to call): make it a submodule in __init__ and call that, or seed "
                    "the generator (torch.manual_seed) before making it")
    outputs = getattr(graph, "outputs", None)
    if not outputs:
        return
    note = (f"note: {', '.join(sorted({c for c, _ in made}))} made in forward: its parameters and buffers are "
            "constants, their values those torch makes on every call (the same each call for this model)")
    n = graph.node(outputs[0])
    n.attrs["note"] = f"{n.attrs['note']}; {note}" if n.attrs.get("note") else note


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
    """A submodule of a replaced module, read: its tensors as constants
    (self.attn.out_proj.weight); called (self.attn.out_proj(x),
    self.enc.linear1(x)), the module itself, installed in the model while
    capture runs as installed_made installs a module made in forward, its
    hooks run around it as torch's __call__ runs them. A part that is
    itself a module ptec replaces whole (an encoder layer's self_attn): its
    stand-in; refused in one line where there is none."""

    def __init__(self, module: nn.Module):
        self.__dict__["_module"] = module

    def __getattr__(self, name):
        return _as_constants(getattr(self.__dict__["_module"], name))

    def __call__(self, *args, **kwargs):
        from .capture_modules import COVERED
        from .capture_tracer import TracedControlError
        m = self.__dict__["_module"]
        pre, post = list(m._forward_pre_hooks.values()), list(m._forward_hooks.values())
        target = m
        if isinstance(m, COVERED):          # its stand-in (an encoder layer's self_attn), made once
            from .capture_modules import _stand_in
            if "_stand_in" not in self.__dict__:
                self.__dict__["_stand_in"] = answering_for(_stand_in(m), m)
            target = self.__dict__["_stand_in"]
            if target is None:
                raise TracedControlError(f"{type(m).__name__}, a part of a module ptec computes whole (nn.LSTM, "
                                         "nn.MultiheadAttention, the transformer layers), is called on its own in "
                                         "a form ptec does not replace: keep a copy of it as a submodule "
                                         "(self.x = copy.deepcopy(...)) and call that")
        _PARTS.add(id(target))
        return _run_hooked(m, pre, post, lambda *a, **k: _unhooked_call(target, a, k), args, kwargs)


# ids of the parts of replaced modules called on their own (_ConstantView): installed, not judged
_PARTS: set = set()


def _unhooked_call(m: nn.Module, args, kwargs):
    """m(*args, **kwargs) with its hooks put aside (run by the caller)."""
    saved = m._forward_pre_hooks, m._forward_hooks
    m._forward_pre_hooks, m._forward_hooks = OrderedDict(), OrderedDict()
    try:
        return m(*args, **kwargs)
    finally:
        m._forward_pre_hooks, m._forward_hooks = saved


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
