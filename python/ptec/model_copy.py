"""A deep copy of a user's model that behaves as the model does.

copy.deepcopy restores each module through its __setstate__, and some of
torch's fill in what they find missing: torch 1.13's
nn.TransformerDecoderLayer sets `activation = F.relu` when its state lacks
the key, which it does whenever the activation is a module (it lives in
_modules, not in the instance dict). The copy's instance attribute then
hides the module, and the copy runs ReLU where the model runs its own
activation. Such an attribute, in the copy's instance dict but not the
original's, shadowing a submodule, parameter or buffer of the same name, is
removed."""
from __future__ import annotations

import copy

import torch.nn as nn


def model_copy(model: nn.Module) -> nn.Module:
    twin = copy.deepcopy(model)
    if not isinstance(model, nn.Module):
        return twin
    for original, copied in zip(model.modules(), twin.modules()):
        own = original.__dict__
        for key in [k for k in copied.__dict__ if k not in own]:
            if key in copied._modules or key in copied._parameters or key in copied._buffers:
                del copied.__dict__[key]
    return twin
