"""A model whose class overrides __call__ (probe: `def __call__(self, x):
return super().__call__(x) * 2`, or pre / post-processing around
self.forward): torch runs the override, while torch.fx traces the root's
forward only, so the override's steps were silently missing (57 output
steps off, no note).

The root: in capture's copy of the model (capture_module_forms.prepared),
its class becomes a subclass whose forward runs the override the first time
(fx's trace, or torch.export, starts there) and the original forward when
the override reaches it (through super().__call__, which fx patches into
its module call, or self.forward), and whose __call__ marks the override
as running, so an eager call of the copy is torch's: the override once.

A submodule's override needs nothing: its parent's traced forward calls
it through Python's attribute lookup, which finds the override, and the
override's super().__call__ is fx's module call (traced through, or one
node for a torch.nn leaf). Except for the modules ptec replaces whole by
its stand-ins (nn.LSTM, nn.MultiheadAttention, the transformer layers,
capture_modules.COVERED): the stand-in would drop the override, so such a
module (the root too) is refused in one line naming it and its override."""
from __future__ import annotations

import functools
from typing import Optional

import torch.nn as nn


def call_owner(cls: type) -> Optional[type]:
    """The class whose __call__ replaces nn.Module's (None: nn.Module's, or
    one of torch's own classes, such as fx's GraphModule, whose __call__
    runs the forward)."""
    for k in cls.__mro__:
        if "__call__" in vars(k):
            if k is nn.Module or k.__module__.split(".")[0] == "torch":
                return None
            return k
    return None


def _named(owner: type) -> str:
    return f"{owner.__qualname__}.__call__"


def call_override_refusal(model: nn.Module) -> Optional[str]:
    """One line for a module ptec replaces whole whose class overrides __call__."""
    from .capture_modules import COVERED
    for name, m in model.named_modules():
        owner = call_owner(type(m))
        if owner is not None and isinstance(m, COVERED):
            where = f"module {name} ({type(m).__name__})" if name else f"the model ({type(m).__name__})"
            base = next(c for c in type(m).__mro__ if c in COVERED)
            return (f"{where} overrides __call__ ({_named(owner)}), which torch runs instead of forward, and "
                    f"ptec computes nn.{base.__name__} whole from torch's forward: move the override's steps "
                    f"into the calling module's forward")
    return None


def root_overrides_call(model: nn.Module) -> bool:
    return call_owner(type(model)) is not None


def call_traced(root: nn.Module) -> nn.Module:
    """root (capture's copy) whose traced forward is its __call__ override (module doc)."""
    cls = type(root)
    if call_owner(cls) is None:
        return root

    def running(self, step: int) -> int:
        depth = self.__dict__.get("_ptec_call_depth", 0)
        self.__dict__["_ptec_call_depth"] = depth + step
        return depth

    def __call__(self, *args, **kwargs):
        running(self, 1)
        try:
            return cls.__call__(self, *args, **kwargs)
        finally:
            running(self, -1)

    @functools.wraps(cls.forward)          # fx reads the original forward's signature (inspect.unwrap)
    def forward(self, *args, **kwargs):
        if self.__dict__.get("_ptec_call_depth", 0):      # the override reached forward
            return cls.forward(self, *args, **kwargs)
        return __call__(self, *args, **kwargs)            # the trace starts here: the override first

    root.__class__ = type(cls.__name__, (cls,), {"forward": forward, "__call__": __call__,
                                                 "__module__": cls.__module__, "__doc__": cls.__doc__})
    return root
