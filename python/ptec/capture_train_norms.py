"""A batch norm left in training mode inside a model in eval mode (issue
15, item 3): `model.eval(); model.bn.train()`.

capture puts the model in eval mode (a model handed over in training mode
is taken as meant for inference). A batch norm the user put back in
training mode under an eval root is deliberate: torch normalizes it by
each batch's statistics and updates its running statistics in place on
every call. It stays in training mode here, and the tracer traces through
its forward (capture.py's is_leaf_module): F.batch_norm(training=True)
with its buffers, capture_batch_norm_train's stand-in (the update kept as
states when the forward reads the statistics), num_batches_tracked an
integer state. momentum=None, torch's cumulative average (the factor
1.0 / float(num_batches_tracked) after its add_(1), a number per call):
cumulative_forward traces torch's forward with that factor as a value of
the program, 1.0 / num_batches_tracked of the integer state (float32, as
torch's true division of an int64 tensor), which the update of the
running statistics multiplies (capture_batch_norm_train)."""
from __future__ import annotations

from typing import Callable

import torch.nn as nn
import torch.nn.functional as F


def _training_norms(model: nn.Module) -> list:
    if model.training:
        return []
    return [m for m in model.modules() if m is not model and m.training
            and isinstance(m, nn.modules.batchnorm._BatchNorm) and m.track_running_stats]


def evaluated(model: nn.Module) -> nn.Module:
    """model.eval(), its batch norms left in training mode under an eval
    root kept in training mode."""
    kept = _training_norms(model)
    model.eval()
    for m in kept:
        m.train()
    return model


def trained_norm(m: nn.Module) -> bool:
    """A batch norm in training mode with running statistics: traced
    through (its F.batch_norm(training=True) call), not one layer."""
    return isinstance(m, nn.modules.batchnorm._BatchNorm) and m.training and m.running_mean is not None


def cumulative_forward(m: nn.Module, forward: Callable) -> Callable:
    """The forward the tracer calls for module m: torch's own, except a
    batch norm in training mode with momentum=None, whose
    `1.0 / float(self.num_batches_tracked)` cannot be traced (float() of a
    value the program computes): the same steps with the factor as a
    tensor, 1.0 / num_batches_tracked (torch 1.13 _BatchNorm.forward)."""
    if not (trained_norm(m) and m.momentum is None and m.track_running_stats
            and m.num_batches_tracked is not None):
        return forward

    def traced(x):
        m._check_input_dim(x)
        m.num_batches_tracked.add_(1)
        factor = 1.0 / m.num_batches_tracked
        return F.batch_norm(x, m.running_mean, m.running_var, m.weight, m.bias, True, factor, m.eps)
    return traced
