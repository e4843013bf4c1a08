"""F.batch_norm(x, running_mean, running_var, weight, bias, training=True,
momentum, eps) with the model's buffers as running statistics (issue 15,
item 3).

torch normalizes by the batch's own statistics (the output never reads
the running ones) and updates the running statistics in place:
running_mean = (1 - momentum) running_mean + momentum mean, running_var
likewise with the batch's unbiased variance (n / (n - 1) times the
biased one, n the values per channel). The output is capture_losses'
batch-statistics stand-in; the update is traced as a write into the
buffers, so that capture_buffer_state keeps them as states across
executes, as torch's module keeps them across calls: a forward that reads
them after the call (`y + self.running_mean`) reads the updated values,
call after call. A state nothing but its own update reads reaches no
output and is dropped (capture_buffer_state.kept_states).

momentum a value of the program (nn.BatchNorm's momentum=None: 1.0 /
num_batches_tracked, capture_train_norms.cumulative_forward) multiplies
as a tensor. Refused by name as before (the call left to the lowering):
running statistics that are not buffers of the model (a tensor made in
forward), or only one of the two given."""
from __future__ import annotations

from typing import Optional

import torch


def _buffer_name(root, tensor) -> Optional[str]:
    for name, b in root.named_buffers():
        if b is tensor:
            return name
    return None


def _read(tracer, name: str, tensor):
    """A traced read of the buffer `name`: the state tracer's (its state
    node, capture_buffer_state), else a get_attr whose in-place write makes
    the plain trace fall back to the states."""
    if id(tensor) in getattr(tracer, "ptec_states", {}):
        return tracer.getattr(name, tensor, {})
    return tracer.create_proxy("get_attr", name, (), {})


def with_running_update(normed, input, running_mean, running_var, training, momentum):
    """normed (the batch-statistics output, from normed()) after tracing
    torch's in-place update of the running statistics; None when it does
    not fit (module doc)."""
    if not training or momentum is None or running_mean is None or running_var is None \
            or not isinstance(input, torch.fx.Proxy):
        return None
    tracer = input.tracer
    names = [_buffer_name(tracer.root, t) for t in (running_mean, running_var)]
    if None in names or not isinstance(momentum, (int, float, torch.fx.Proxy)):
        return None
    dims = [0] + list(range(2, input.dim()))
    n = input.numel() // int(input.shape[1])
    if n < 2:
        return None     # torch raises: one value per channel
    y = normed()
    if y is None:
        return None
    m = momentum if isinstance(momentum, torch.fx.Proxy) else float(momentum)   # (a tensor: 1 / num_batches_tracked)
    shape = [1, -1] + [1] * (input.dim() - 2)
    mean = input.mean(dims)
    centered = input - mean.reshape(shape)
    var = (centered * centered).mean(dims) * (n / (n - 1))
    for name, tensor, batch in ((names[0], running_mean, mean), (names[1], running_var, var)):
        held = _read(tracer, name, tensor)
        held.copy_(held * (1.0 - m) + batch * m)
    return y
