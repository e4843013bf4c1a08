"""Helpers shared by the zoo models."""
from __future__ import annotations

import copy

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


def _head_inputs(model: nn.Module, head_name: str, x: torch.Tensor) -> torch.Tensor:
    feats = []
    hook = model.get_submodule(head_name).register_forward_hook(
        lambda mod, inp, out: feats.append(inp[0].detach()))
    model.eval()
    model(x)
    hook.remove()
    return feats[0].double()


def _round_to_256_levels(t: torch.Tensor) -> torch.Tensor:
    lo, hi = (float(v) for v in torch.aminmax(t))
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    step = (hi - lo) / 255.0 or 1.0
    zero = round(-128 - lo / step)
    # in place after the first division: the fit's slowest pass, half the time
    return t.div(step).round_().add_(zero).clamp_(-128, 127).sub_(zero).mul_(step)


@torch.no_grad()
def int8_rounded_copy(model: nn.Module, head_name: str) -> nn.Module:
    """A copy of `model` perturbed the way an int8 program perturbs it: every
    conv and linear weight but the head's rounded to 255 symmetric levels per
    output channel, every module's output (except the bare conv/linear
    outputs, which batch-norm folding never materializes) to 256 levels over
    its batch range. A noise model for fitting the head, not the compiler's
    arithmetic."""
    rounded = copy.deepcopy(model).eval()
    head = rounded.get_submodule(head_name)
    for mod in rounded.modules():
        if isinstance(mod, (nn.Conv2d, nn.Linear)):
            if mod is not head:
                w = mod.weight
                scale = w.abs().reshape(w.shape[0], -1).amax(1).clamp_min(1e-30) / 127.0
                scale = scale.reshape((-1,) + (1,) * (w.ndim - 1))
                w.copy_(torch.round(w / scale) * scale)
        elif mod is not rounded and not isinstance(mod, nn.Dropout):
            mod.register_forward_hook(lambda m, inp, out: _round_to_256_levels(out))
    return rounded


@torch.no_grad()
def fit_linear_head(model: nn.Module, head_name: str, x: torch.Tensor, targets: torch.Tensor,
                    ridge: float = 1.0, rounding: float = 0.0) -> nn.Module:
    """Train the last linear layer in closed form: ridge regression of
    `targets` [N, out_features] on the layer's input features, the rest of the
    network staying a fixed random feature extractor. A strong ridge keeps the
    head on the features' main directions, so it does not amplify their small,
    noise-like differences.
    `rounding` > 0 also penalizes the head's response to int8 rounding: the
    difference D between the features of `int8_rounded_copy` and the float
    features adds rounding * D^T D to the normal equations (the expected loss
    when the features move by D). A deep random feature extractor moves under
    int8 rounding by a good part of its class signal; a head fitted without
    this follows those moving directions, and the int8 program's decisions
    differ from float's on 3 % of inputs (MobileNetV2-0.35; 0.7 % with it)."""
    head = model.get_submodule(head_name)
    f = _head_inputs(model, head_name, x)
    mean, std = f.mean(0), f.std(0) + 1e-6
    z = (f - mean) / std
    a = z.T @ z + ridge * len(z) * torch.eye(z.shape[1], dtype=torch.float64)
    if rounding > 0:
        d = (_head_inputs(int8_rounded_copy(model, head_name), head_name, x) - f) / std
        a += rounding * (d.T @ d)
    t = targets.double()
    t_mean = t.mean(0)
    w = torch.linalg.solve(a, z.T @ (t - t_mean)).T                  # [out, features]
    head.weight.copy_((w / std).float())
    head.bias.copy_((t_mean - (w / std) @ mean).float())
    return model


def class_targets(y: torch.Tensor, classes: int, margin: float = 4.0) -> torch.Tensor:
    """Regression targets of a classifier head: +margin/2 for the class, -margin/2 else."""
    return (torch.nn.functional.one_hot(y, classes).double() - 0.5) * margin
