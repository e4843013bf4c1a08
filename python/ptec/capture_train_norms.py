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
integer state. momentum=None (a cumulative average over
num_batches_tracked) is refused in one line by the trace (float() of a
value the program computes)."""
from __future__ import annotations

from typing import Optional

import torch.nn as nn


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


def train_norm_refusal(model: nn.Module) -> Optional[str]:
    """One line for a batch norm kept in training mode whose momentum is
    None: torch's running statistics are then the average over
    num_batches_tracked calls (1 / count a number per call)."""
    kept = _training_norms(model) if not model.training else []
    for name, m in model.named_modules():
        if any(m is k for k in kept) and m.momentum is None:
            return (f"module {name} ({type(m).__name__}) is in training mode inside a model in eval mode, with "
                    "momentum=None: torch averages its running statistics over num_batches_tracked calls, a "
                    "weight per call ptec does not compute; give it a momentum (torch's default is 0.1) or "
                    f"call model.{name}.eval()")
    return None
