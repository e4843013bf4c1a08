"""A submodule the forward reaches through a reference taken before the
copy capture traces (issue 15, item 2).

capture traces a copy of the user's model (capture_modules' stand-ins of
nn.GRUCell / nn.LSTMCell / nn.RNNCell / nn.GRU / ..., written buffers made
states, hooks as code). A reference to a submodule taken in __init__ does
not follow the copy: `self.step = lambda x, h: self.cell(x, h)` keeps the
user's model (a function is copied as itself), and
`functools.partial(run, self.cell)` or `self.cells = [self.cell]` keep the
copy's cell, which a stand-in then replaced. Either call reached a module
that is no submodule of the traced model: taken for a module made in
forward (capture_module_forms.installed_made), which refused a recurrent
cell ("made in forward") and kept another layer's weights as constants.

Each such module is known here by its path in the model it belongs to
(the user's model, and each copy capture makes of it whole); the call goes
to the traced model's module at that path (the stand-in there), when it is
of the same class (or stands for one).

A submodule's bound forward kept in __init__, `self.step = self.cell.forward`
(or its `.__call__`, bound before fx patches the module call), runs the cell's forward without torch's module call,
which the tracer sees (and with it, the cell's parameters read outside
the traced model: fx refused "not a member of this module"). While
capture runs, such an attribute holds the module itself
(bound_methods_as_calls), so `self.step(x, h)` is the call
`self.cell(x, h)`: the same result when the module has no hooks (a
forward kept bound skips them, so a module with hooks keeps its bound
forward)."""
from __future__ import annotations

import contextlib
import types
import weakref
from typing import Dict, Optional, Tuple

import torch.nn as nn

# id(module) -> (weak reference to it, its path in the model), of the models capture copies
_PATHS: Dict[int, Tuple[weakref.ref, str]] = {}


def remember_paths(model: nn.Module) -> None:
    """Each submodule of model known by its path."""
    for path, m in model.named_modules():
        if path:
            _PATHS[id(m)] = (weakref.ref(m), path)


@contextlib.contextmanager
def paths_known(model: nn.Module):
    """remember_paths(model) for the block; what was known before, after
    it (a capture within a capture)."""
    saved = dict(_PATHS)
    remember_paths(model)
    try:
        yield
    finally:
        _PATHS.clear()
        _PATHS.update(saved)


def _class_of(m) -> type:
    original = m.__dict__.get("_ptec_original") if isinstance(m, nn.Module) else None
    return type(original) if original is not None else type(m)


def module_at_same_path(root: nn.Module, m: nn.Module) -> Optional[nn.Module]:
    """The module of root at the path m has in the model it was remembered
    with (a stand-in, or the copy's module), or None: m unknown, no such
    path in root, or a module of another class there."""
    found = _PATHS.get(id(m))
    if found is None or found[0]() is not m:
        return None
    try:
        target = root.get_submodule(found[1])
    except AttributeError:
        return None
    if target is m or _class_of(target) is not type(m):
        return None
    return target


def _called_module(v) -> Optional[nn.Module]:
    """The module whose call v stands for: v a bound forward of a module
    without hooks, or its bound __call__ (kept before fx patched the
    module call: it ran the forward unseen too); else None."""
    target = getattr(v, "__self__", None)
    if not isinstance(v, types.MethodType) or not isinstance(target, nn.Module):
        return None
    if v.__func__ is getattr(type(target), "__call__", None) or v.__func__ is nn.Module._call_impl:
        return target
    hooked = target._forward_hooks or target._forward_pre_hooks or nn.modules.module._global_forward_hooks \
        or nn.modules.module._global_forward_pre_hooks
    return target if v.__func__ is getattr(type(target), "forward", None) and not hooked else None


@contextlib.contextmanager
def bound_methods_as_calls(model: nn.Module):
    """For the block, each attribute of model's modules holding a bound
    forward / __call__ of a module (module doc) holds that module (set in
    the instance's __dict__, not registered as a submodule); restored
    after."""
    swapped = []
    for m in model.modules():
        for k, v in list(vars(m).items()):
            target = _called_module(v)
            # (not a module's own method kept before its forward is replaced: its call would reach the new one)
            if target is not None and target is not m and "forward" not in vars(target):
                swapped.append((m, k, v))
                m.__dict__[k] = target
    try:
        yield
    finally:
        for m, k, v in swapped:
            m.__dict__[k] = v
