"""nn.FractionalMaxPool2d / 3d built with fixed `_random_samples` (capture's
stand-in). Without them torch draws the samples on every call, so the
pooling regions change from call to call: ptec draws them on the device
(random_layers). Samples that differ between batch elements give regions
per element: the pool is then pool_indices' window_max of each element's
windows.

With fixed samples each (batch, channel) plane has fixed regions. Torch
(ATen's FractionalMaxPool2d.cpp / 3d.cpp) starts the windows along a dim
of input size n, output size m and kernel k at
    int((i + u) * alpha) - int(u * alpha),  alpha = (n - k) / (m - 1),
for i < m - 1, and at n - k for the last, in float32; u is the plane's
sample for that dim: sample[0] is W and sample[1] H in 2-D, sample[0] T,
[1] H and [2] W in 3-D. Each output is the max of a k-wide window at such
a start. So: max pools of the kernel with stride 1 give every window's
max (over depth first, on [N, C, T, H * W], then over H and W on
[N, C * T', H, W]), and a depthwise convolution whose one-hot weights
pick, per channel, the windows at that channel's starts copies them out
([N, C * outputs, 1, 1], reshaped to the output). The picking is a copy
in float; in int8 it is one requantization.
"""
from __future__ import annotations

from typing import List

import numpy as np
import torch.nn as nn

from .ir import Node

def window_starts(u: float, n: int, m: int, k: int) -> List[int]:
    """Torch's window starts along one dim for sample u (float32 as ATen)."""
    starts = [0] * m
    if m > 1:
        alpha = np.float32(n - k) / np.float32(m - 1)
        u = np.float32(u)
        for i in range(m - 1):
            starts[i] = int(np.float32(np.float32(i) + u) * alpha) - int(u * alpha)
    starts[m - 1] = n - k
    return starts


def every_window_nodes(name: str, what: str, m, x: str, in_shape, error):
    """Every stride-1 window's max of `m`'s kernel on x ([N, C, ...] of the
    pool's rank): max pools over the depth first in 3-D (on [N, C, T, H * W],
    viewed back as [N, C * T', H, W]), then over H and W, the last node
    `{name}_windows`. Returns (nodes, spatial sizes, kernel, window counts)."""
    three = isinstance(m, nn.FractionalMaxPool3d)
    rank = 5 if three else 4
    n, c = int(in_shape[0]), int(in_shape[1])
    spatial = [int(s) for s in in_shape[2:]]
    k = [int(v) for v in (m.kernel_size if isinstance(m.kernel_size, (tuple, list))
                          else [m.kernel_size] * (rank - 2))]
    if any(k[i] > spatial[i] for i in range(rank - 2)):
        raise error(f"{what}: the kernel {k} is larger than the input {spatial}")
    full = [spatial[i] - k[i] + 1 for i in range(rank - 2)]    # window starts a stride-1 pool gives
    nodes: List[Node] = []
    if three:
        t, h, w = spatial
        nodes += [Node(f"{name}_rows", "reshape", [x], dict(target_shape=[n, c, t, h * w])),
                  Node(f"{name}_tmax", "max_pool2d", [f"{name}_rows"], dict(
                      kernel=[k[0], 1], stride=[1, 1], padding=[0, 0], dilation=[1, 1], ceil_mode=False)),
                  Node(f"{name}_planes", "reshape", [f"{name}_tmax"], dict(target_shape=[n, c * full[0], h, w]))]
        x = f"{name}_planes"
    nodes.append(Node(f"{name}_windows", "max_pool2d", [x], dict(
        kernel=k[-2:], stride=[1, 1], padding=[0, 0], dilation=[1, 1], ceil_mode=False)))
    return nodes, spatial, k, full


def fractional_max_pool_nodes(name: str, what: str, m, ins: List[str], in_shape, out_shape, error) -> List[Node]:
    """The nodes for `m` (fixed samples) on ins[0]; the last is named `name`."""
    three = isinstance(m, nn.FractionalMaxPool3d)
    rank = 5 if three else 4
    if in_shape is None or out_shape is None or len(in_shape) != rank:
        raise error(f"{what}: needs a traced {rank}-D [N, C, ...]")
    samples = m._random_samples.detach().cpu().numpy().astype(np.float32)
    n, c = int(in_shape[0]), int(in_shape[1])
    if samples.shape != (n, c, rank - 2) and samples.shape != (1, c, rank - 2):
        raise error(f"{what}: _random_samples has shape {list(samples.shape)}, the input needs "
                    f"{[n, c, rank - 2]}")
    if any((samples[b] != samples[0]).any() for b in range(samples.shape[0])):
        # regions per batch element: the listed windows of each (pool_indices)
        from .pool_indices import window_node
        return [window_node(name, "window_max", m, ins[0], in_shape, out_shape, what, error)]
    outs = [int(s) for s in out_shape[2:]]
    order = [0, 1, 2] if three else [1, 0]        # sample index of each spatial dim (D, H, W / H, W)
    nodes, spatial, k, full = every_window_nodes(name, what, m, ins[0], in_shape, error)
    # every window's max as [N, C, (T') * H', W']: depth windows stacked over H windows
    rows = (full[0] if three else 1) * full[-2]
    nodes.append(Node(f"{name}_stack", "reshape", [f"{name}_windows"], dict(target_shape=[n, c, rows, full[-1]])))
    per = int(np.prod(outs))
    weight = np.zeros((c * per, 1, rows, full[-1]), np.float32)
    for ch in range(c):
        starts = [window_starts(samples[0, ch, order[i]], spatial[i], outs[i], k[i]) for i in range(rank - 2)]
        for j, pos in enumerate(np.ndindex(*outs)):
            at = [starts[i][pos[i]] for i in range(rank - 2)]
            row = at[0] * full[1] + at[1] if three else at[0]
            weight[ch * per + j, 0, row, at[-1]] = 1.0
    nodes += [Node(f"{name}_pick", "conv2d", [f"{name}_stack"], dict(
                  weight=weight, bias=None, stride=[1, 1], padding=[0, 0], dilation=[1, 1], groups=c)),
              Node(name, "reshape", [f"{name}_pick"], dict(target_shape=[n, c] + outs))]
    return nodes
