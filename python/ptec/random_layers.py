"""Layers that draw random numbers on every call, even in eval: F.dropout
(and dropout1d / 2d / 3d) called with training=True, and
nn.FractionalMaxPool2d / 3d built without _random_samples. A Cortex-M can
draw random numbers, so these run with torch's semantics in distribution
(not torch's own random stream, which no device reproduces) on ptec's
random kernels (src/kernels/portable/op_random_*.c), each with its own
generator seeded at load from a seed the compiler writes for the node
(node_seed): the stream restarts at each load, so a reloaded method
repeats its draws, and advances from one execute to the next.

random_dropout (attrs p, mask_dims, seed): mask_dims = rank drops
elements, 2 whole channels of [N, C, ...] (dropout1d / 2d / 3d).
random_fractional_pick (attrs kernel, out: the output's spatial sizes, seed): its input holds every
stride-1 window's max ([N, C, H', W'], or [N, C, T', H', W']); per plane it
draws torch's samples and copies the windows at torch's starts.
"""
from __future__ import annotations

import zlib
from typing import List

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from .fractional_max_pool import every_window_nodes, window_starts
from .ir import Node

RANDOM_OPS = ("random_dropout", "random_fractional_pick")


def node_seed(name: str, seed: int = 0) -> int:
    """The seed written for a node: from its name (so two random layers draw
    different streams) and the compile's seed (compile_model's random_seed)."""
    return zlib.crc32(f"{seed}:{name}".encode()) & 0x7FFFFFFF


def note(n: Node, where: str) -> str:
    """The compile-time line saying that the layer draws random numbers."""
    if n.attrs.get("uniform"):          # capture_random's bits: rand, randn, bernoulli, gumbel_softmax, ...
        return (f"note: {where} draws random numbers on the device on every execute (torch's distribution, "
                "ptec's own stream, restarted at each load)" + ("; its generator= argument is ignored (ptec's "
                                                                "draws never follow a torch.Generator's stream)"
                                                                if n.attrs.get("generator_ignored") else ""))
    if n.op == "random_fractional_pick":
        return (f"note: {where} draws random pooling regions on the device on every execute "
                "(torch's distribution, ptec's own stream, restarted at each load)")
    return (f"note: {where}: dropout with training=True draws random numbers on the device on every "
            "execute (ptec's own stream, restarted at each load); for inference pass "
            "training=self.training")


def dropout_node(name: str, fn_name: str, ins: List[str], p: float, in_shape, error) -> Node:
    """F.dropout (mask over every element) or dropout1d / 2d / 3d (whole
    channels) with training=True."""
    if not 0.0 <= p <= 1.0:
        raise error(f"{fn_name}: p {p} is not a probability")
    if p == 1.0:
        raise error(f"{fn_name}: p = 1 drops everything (the output is all zeros): use torch.zeros_like")
    rank = len(in_shape) if in_shape is not None else None
    channel = {"dropout1d": (2, 3), "dropout2d": (3, 4), "dropout3d": (4, 5)}.get(fn_name)
    if rank is None:
        raise error(f"{fn_name}: needs a traced input shape")
    if channel is not None and rank != channel[1]:
        # torch treats the unbatched form ([C, ...]) as channels of one batch: not captured
        raise error(f"{fn_name}: a {rank}-D input; ptec takes the batched {channel[1]}-D [N, C, ...] form")
    return Node(name, "random_dropout", ins[:1], dict(p=float(p), mask_dims=rank if channel is None else 2,
                                                      seed=node_seed(name)))


def fractional_random_nodes(name: str, what: str, m, ins: List[str], in_shape, out_shape, error) -> List[Node]:
    """nn.FractionalMaxPool2d / 3d without _random_samples: every stride-1
    window's max (fractional_max_pool.every_window_nodes), then the random
    pick."""
    three = isinstance(m, nn.FractionalMaxPool3d)
    rank = 5 if three else 4
    if getattr(m, "return_indices", False):
        raise error(f"{what}: return_indices with random regions is not supported")
    if in_shape is None or out_shape is None or len(in_shape) != rank:
        raise error(f"{what}: needs a traced {rank}-D [N, C, ...]")
    n, c = int(in_shape[0]), int(in_shape[1])
    nodes, _, k, full = every_window_nodes(name, what, m, ins[0], in_shape, error)
    x = f"{name}_windows"
    if three:
        nodes.append(Node(f"{name}_volume", "reshape", [x], dict(target_shape=[n, c] + full)))
        x = f"{name}_volume"
    nodes.append(Node(name, "random_fractional_pick", [x], dict(
        kernel=k, out=[int(v) for v in out_shape[2:]], seed=node_seed(name))))
    return nodes


def eval_random(n: Node, x: torch.Tensor) -> torch.Tensor:
    """The float graph's value (calibration, shapes): torch's own draws."""
    a = n.attrs
    if n.op == "random_dropout":
        if a["mask_dims"] == x.dim():
            return F.dropout(x, a["p"], True)
        keep = (torch.rand(tuple(x.shape[:2]) + (1,) * (x.dim() - 2)) >= a["p"]).to(x.dtype)
        return x * keep / (1.0 - a["p"])
    k, m = a["kernel"], a["out"]
    full = list(x.shape[2:])
    out = torch.empty(tuple(x.shape[:2]) + tuple(m), dtype=x.dtype)
    order = [0, 1, 2] if len(k) == 3 else [1, 0]     # sample index of each spatial dim
    for b in range(x.shape[0]):
        for c in range(x.shape[1]):
            s = torch.rand(len(k)).numpy()
            idx = [window_starts(s[order[i]], full[i] + k[i] - 1, m[i], k[i]) for i in range(len(k))]
            out[b, c] = x[b, c][np.ix_(*idx)]
    return out
