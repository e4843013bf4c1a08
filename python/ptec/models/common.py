"""Helpers shared by the zoo models."""
from __future__ import annotations

import torch
import torch.nn as nn


def conv_bn_relu(cin, cout, k, stride=1, padding=None, groups=1, relu6=False) -> nn.Sequential:
    if padding is None:
        padding = (k - 1) // 2 if isinstance(k, int) else tuple((x - 1) // 2 for x in k)
    return nn.Sequential(nn.Conv2d(cin, cout, k, stride, padding, groups=groups, bias=False),
                         nn.BatchNorm2d(cout), nn.ReLU6() if relu6 else nn.ReLU())


def randomize_batch_norm(model: nn.Module, seed: int = 0) -> nn.Module:
    """Give batch-norm layers non-trivial running statistics and affine
    parameters, so that an untrained zoo model exercises BN folding and has
    activations of realistic, varied ranges."""
    g = torch.Generator().manual_seed(seed)
    for m in model.modules():
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
            c = m.num_features
            with torch.no_grad():
                m.running_mean.copy_(torch.randn(c, generator=g) * 0.1)
                m.running_var.copy_(torch.rand(c, generator=g) * 0.5 + 0.75)
                if m.weight is not None:
                    m.weight.copy_(torch.rand(c, generator=g) * 0.5 + 0.75)
                    m.bias.copy_(torch.randn(c, generator=g) * 0.1)
    return model


def make_divisible(v: float, divisor: int = 8, min_value: int = None) -> int:
    min_value = min_value or divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v
