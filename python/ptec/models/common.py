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


@torch.no_grad()
def normalize_batch_norm(model: nn.Module, x: torch.Tensor, shift: float = 0.0) -> nn.Module:
    """Set every batch-norm's running statistics to those of a batch of task
    inputs (one forward pass in training mode, cumulative averaging), so each
    normalized pre-activation has about zero mean and unit variance: an
    untrained network whose activations are neither saturated nor flat.
    Every batch-norm's bias is raised by `shift` standard deviations: most
    units then stay in ReLU's linear region, which keeps a deep random network
    from amplifying small perturbations such as int8 rounding (with a bias
    near 0, MobileNetV1's logits moved by 40+ output steps between int8 and
    fake-quant float; with 2.0 about 12)."""
    norms = [m for m in model.modules() if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d))]
    for m in norms:
        m.reset_running_stats()
        m.momentum = None
        if m.bias is not None:
            m.bias.add_(shift)
    model.train()
    model(x)
    for m in norms:
        m.momentum = 0.1
    return model.eval()


@torch.no_grad()
def fit_linear_head(model: nn.Module, head: nn.Linear, x: torch.Tensor, targets: torch.Tensor,
                    ridge: float = 1.0) -> nn.Module:
    """Train the last linear layer in closed form: ridge regression of
    `targets` [N, out_features] on the layer's input features, the rest of the
    network staying a fixed random feature extractor. A strong ridge keeps the
    head on the features' main directions, so it does not amplify their small,
    noise-like differences."""
    feats = []
    hook = head.register_forward_hook(lambda mod, inp, out: feats.append(inp[0].detach()))
    model.eval()
    model(x)
    hook.remove()
    f = feats[0].double()
    mean, std = f.mean(0), f.std(0) + 1e-6
    z = (f - mean) / std
    t = targets.double()
    t_mean = t.mean(0)
    a = z.T @ z + ridge * len(z) * torch.eye(z.shape[1], dtype=torch.float64)
    w = torch.linalg.solve(a, z.T @ (t - t_mean)).T                  # [out, features]
    head.weight.copy_((w / std).float())
    head.bias.copy_((t_mean - (w / std) @ mean).float())
    return model


def class_targets(y: torch.Tensor, classes: int, margin: float = 4.0) -> torch.Tensor:
    """Regression targets of a classifier head: +margin/2 for the class, -margin/2 else."""
    return (torch.nn.functional.one_hot(y, classes).double() - 0.5) * margin
