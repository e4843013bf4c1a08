"""ptec.nn.SVDF: TFLite's SVDF layer (singular value decomposition filter)
as a PyTorch module, for streaming keyword spotters.

Definition (TFLite's SVDF op, batch 1, zero initial state): the layer keeps
an activation state of units * rank rows and `memory` columns. At each time
step t the columns age by one (the oldest drops out), the newest column
becomes weights_feature @ x_t, and output t is, for each unit u,

    bias[u] + sum over its rank rows f = u*rank .. u*rank+rank-1 of
              sum_m weights_time[f, m] * state[f, m]

followed by the activation (none or relu). Column memory - 1 is the newest,
so weights_time[f, memory - 1] weighs the current frame and
weights_time[f, 0] the frame memory - 1 steps back.

With a zero initial state this is a causal depthwise convolution over time
of the feature filter's outputs, which is how forward computes it in plain
torch ops (it runs in float anywhere). ptec's compiler treats the module as
one layer and lowers it to ptec::quantized_svdf (docs/kernels.md "SVDF")."""
from __future__ import annotations

import math
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F


def svdf(x: torch.Tensor, weights_feature: torch.Tensor, weights_time: torch.Tensor,
         bias: Optional[torch.Tensor], rank: int) -> torch.Tensor:
    """The SVDF of x [1, T, input_size] from a zero state, without the
    activation: [1, T, units]."""
    rows, memory = weights_time.shape
    a = F.linear(x, weights_feature).transpose(1, 2)                     # [1, rows, T]
    a = F.pad(a, (memory - 1, 0))                                        # zero state: earlier frames are 0
    y = F.conv1d(a, weights_time.unsqueeze(1), groups=rows)              # [1, rows, T]
    y = y.reshape(1, rows // rank, rank, -1).sum(2).transpose(1, 2)      # [1, T, units]
    return y if bias is None else y + bias


class SVDF(nn.Module):
    """SVDF(input_size, units, rank, memory, activation=None | "relu").

    forward(x): x [1, T, input_size] (batch first) -> [1, T, units].
    Parameters: weights_feature [units*rank, input_size], weights_time
    [units*rank, memory], bias [units]."""

    def __init__(self, input_size: int, units: int, rank: int, memory: int,
                 activation: Optional[str] = None, bias: bool = True):
        super().__init__()
        for name, v in (("input_size", input_size), ("units", units), ("rank", rank), ("memory", memory)):
            if not isinstance(v, int) or v < 1:
                raise ValueError(f"SVDF: {name} must be a positive int, got {v!r}")
        if activation not in (None, "relu"):
            raise ValueError(f"SVDF: activation must be None or 'relu', got {activation!r}")
        self.input_size, self.units, self.rank, self.memory = input_size, units, rank, memory
        self.activation = activation
        rows = units * rank
        self.weights_feature = nn.Parameter(torch.empty(rows, input_size))
        self.weights_time = nn.Parameter(torch.empty(rows, memory))
        self.bias = nn.Parameter(torch.zeros(units)) if bias else None
        nn.init.uniform_(self.weights_feature, -1.0 / math.sqrt(input_size), 1.0 / math.sqrt(input_size))
        nn.init.uniform_(self.weights_time, -1.0 / math.sqrt(memory), 1.0 / math.sqrt(memory))

    def extra_repr(self) -> str:
        return (f"input_size={self.input_size}, units={self.units}, rank={self.rank}, "
                f"memory={self.memory}, activation={self.activation}")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() != 3 or x.shape[0] != 1 or x.shape[2] != self.input_size:
            raise ValueError(f"SVDF: input must be [1, T, {self.input_size}], got {list(x.shape)}")
        y = svdf(x, self.weights_feature, self.weights_time, self.bias, self.rank)
        return torch.relu(y) if self.activation == "relu" else y
