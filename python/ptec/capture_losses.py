"""The losses a forward computes to score its input (an anomaly detector's
reconstruction error, a classifier's cross-entropy against the predicted
class) and F.batch_norm with the batch's own statistics (issue 15): each a
stand-in the fx tracer runs instead of the call (capture_modules'
FUNCTIONAL_STAND_INS), so the trace holds torch's formula in ops ptec
lowers (subtract, square, abs, where, softplus, log-softmax, a gather,
layer_norm, mean / sum):

* F.mse_loss, l1_loss, smooth_l1_loss(beta), huber_loss(delta): the
  element-wise loss of input - target;
* F.binary_cross_entropy (torch's logs clamped at -100, weight),
  binary_cross_entropy_with_logits (weight, pos_weight): torch's stable
  max(x, 0) - x t + log(1 + exp(-|x|)), which is softplus(x) - x t;
* F.kl_div (log_target or not; "batchmean" the sum over the batch size);
* F.nll_loss and F.cross_entropy with class-index targets of [N, C] or
  [N, C, d...] scores: the score at the target class gathered (a constant
  target: its weight and ignore_index folded into constants; a computed
  one, as an argmax: without weight, its values taken as classes, as torch
  raises for any other but ignore_index), cross_entropy's log-softmax over
  dim 1 first; probability targets (float, the input's shape) and
  label_smoothing as torch's sums (constant or computed targets, weight
  and ignore_index as torch 1.13: the smoothing term weighs each class);
* reduction "none", "mean" or "sum" each (nll_loss's mean divides by the
  sum of the kept targets' weights, as torch);
* F.batch_norm(x, None, None, training=True): the mean and biased variance
  over every dim but 1, (x - mean) / sqrt(var + eps): layer_norm of each
  channel's values as one row; weight and bias. With the model's buffers
  as running statistics: the same output, torch's in-place update of them
  traced as states (capture_batch_norm_train).

A call these do not cover (the legacy size_average / reduce arguments,
running statistics that are not the model's buffers) stays the call,
refused by name."""
from __future__ import annotations

import torch
import torch.nn.functional as F

_REDUCTIONS = ("none", "mean", "sum")


def _legacy(size_average, reduce) -> bool:
    return size_average is not None or reduce is not None


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _pointwise(kind):
    """mse / l1 / smooth_l1 / huber: (input, target, ...) -> the loss."""
    def call(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0, delta=1.0):
        if _legacy(size_average, reduce) or reduction not in _REDUCTIONS:
            return None
        d = input - target
        if kind == "mse":
            loss = d * d
        elif kind == "l1" or (kind == "smooth_l1" and beta == 0):
            loss = torch.abs(d)
        else:
            a = torch.abs(d)
            edge = beta if kind == "smooth_l1" else delta
            inside = 0.5 * d * d
            outside = a - 0.5 * edge
            if kind == "smooth_l1":
                inside = inside / edge
            else:
                outside = outside * edge
            loss = torch.where(a < edge, inside, outside)
        return _reduce(loss, reduction)
    return call


def _bce(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    if _legacy(size_average, reduce) or reduction not in _REDUCTIONS:
        return None
    log_x = torch.clamp(torch.log(input), min=-100.0)
    log_1mx = torch.clamp(torch.log(1.0 - input), min=-100.0)
    loss = -(target * log_x + (1.0 - target) * log_1mx)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def _bce_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean", pos_weight=None):
    if _legacy(size_average, reduce) or reduction not in _REDUCTIONS:
        return None
    # torch's max(x, 0) - x t + log(1 + exp(-|x|)) is softplus(x) - x t (one table, fewer roundings); with
    # pos_weight p: (1 - t) x + (1 + (p - 1) t) softplus(-x) = (1 + (p - 1) t) softplus(x) - p t x
    soft = F.softplus(input)
    if pos_weight is None:
        loss = soft - input * target
    else:
        loss = (1.0 + (pos_weight - 1.0) * target) * soft - input * (pos_weight * target)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def _kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    if _legacy(size_average, reduce) or reduction not in _REDUCTIONS + ("batchmean",):
        return None
    if log_target:
        loss = torch.exp(target) * (target - input)
    else:
        loss = torch.xlogy(target, target) - target * input
    if reduction == "batchmean":
        return loss.sum() / int(input.shape[0]) if input.dim() else loss.sum()
    return _reduce(loss, reduction)


def _picked(scores, target, weight, ignore_index, reduction):
    """nll_loss of scores [N, C, d...] (or [C]) at class-index targets."""
    if reduction not in _REDUCTIONS or scores.dim() < 1:
        return None
    batched = scores.dim() >= 2
    classes = int(scores.shape[1 if batched else 0])
    at = 1 if batched else 0
    if isinstance(weight, torch.fx.Proxy):
        return None                                      # computed class weights: not known here
    if isinstance(target, torch.Tensor) and not isinstance(target, torch.fx.Proxy):
        t = target.detach().long()
        kept = t != ignore_index
        if ((t[kept] < 0) | (t[kept] >= classes)).any():
            return None                                  # torch raises: the model's own error
        w = torch.ones(classes) if weight is None else weight.detach().float()
        per = torch.where(kept, w[torch.where(kept, t, torch.zeros_like(t))], torch.zeros(()))
        idx = torch.where(kept, t, torch.zeros_like(t)).unsqueeze(at)
        loss = -torch.gather(scores, at, idx).squeeze(at) * per
        if reduction == "mean":
            total = float(per.sum())
            return loss.sum() / total if total else loss.sum() * float("nan")
        return _reduce(loss, reduction)
    # a computed target: its ignored entries (torch's default -100 included) pick class 0, weighed 0;
    # torch's mean divides by the weight kept (torch's 0 / 0 NaN when all are ignored: the int8 division gives 0)
    kept = target != ignore_index
    idx = torch.where(kept, target, 0)
    per = kept.float()
    if weight is not None:
        per = per * F.embedding(idx, weight.detach().float().reshape(-1, 1)).squeeze(-1)
    loss = -torch.gather(scores, at, idx.unsqueeze(at)).squeeze(at) * per
    if reduction == "mean":
        return loss.sum() / per.sum()
    return _reduce(loss, reduction)


def _nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    if _legacy(size_average, reduce):
        return None
    return _picked(input, target, weight, ignore_index, reduction)


def _cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                   reduction="mean", label_smoothing=0.0):
    if _legacy(size_average, reduce) or reduction not in _REDUCTIONS:
        return None
    at = 1 if input.dim() >= 2 else 0
    logp = torch.log_softmax(input, at)
    classes = int(input.shape[at])
    if target.dtype.is_floating_point:                       # class probabilities
        if weight is not None:
            return None
        if label_smoothing:
            target = target * (1.0 - label_smoothing) + label_smoothing / classes
        loss = -(target * logp).sum(at)
        if reduction == "mean":                              # torch: over the positions, numel / C
            positions = 1
            for d in input.shape:
                positions *= int(d)
            return loss.sum() / (positions // classes)
        return _reduce(loss, reduction)
    picked = _picked(logp, target, weight, ignore_index, reduction)
    if picked is None or not label_smoothing:
        return picked
    # torch's (1 - e) nll + e / C * the sum over classes of -log p (each class weighed when weight is
    # given), ignored positions 0; its mean divides by the kept targets' weight (their count without weight)
    w = None if weight is None else weight.detach().float()
    if isinstance(target, torch.fx.Proxy):
        keep = target != ignore_index
        kept = keep.float()
        per = kept
        if w is not None:
            per = kept * F.embedding(torch.where(keep, target, 0), w.reshape(-1, 1)).squeeze(-1)
    else:
        t = target.detach().long()
        keep = t != ignore_index
        kept = keep.float()
        per = kept if w is None else torch.where(keep, w[torch.where(keep, t, torch.zeros_like(t))], torch.zeros(()))
    scored = logp
    if w is not None:
        shape = [1] * input.dim()
        shape[at] = classes
        scored = logp * w.reshape(shape)
    smooth = -scored.sum(at) * kept
    if reduction == "sum":
        smooth = smooth.sum()
    elif reduction == "mean":
        smooth = smooth.sum() / (per.sum() if isinstance(per, torch.fx.Proxy) else float(per.sum()))
    return (1.0 - label_smoothing) * picked + label_smoothing / classes * smooth


def _batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
                eps=1e-5):
    if running_mean is not None or running_var is not None:
        # training: the batch's statistics, the buffers updated in place as states (capture_batch_norm_train)
        from .capture_batch_norm_train import with_running_update
        return with_running_update(lambda: _batch_norm(input, None, None, weight, bias, training, momentum, eps),
                                   input, running_mean, running_var, training, momentum)
    if not training or input.dim() < 2:
        return None          # ptec's own layer
    # per channel its values as one row: torch's normalization over the row is layer_norm's (biased variance)
    channels, batch = int(input.shape[1]), int(input.shape[0])
    rest = [int(d) for d in input.shape[2:]]
    rows = input.transpose(0, 1).reshape(channels, -1)
    normed = F.layer_norm(rows, [int(rows.shape[1])], eps=eps)
    y = normed.reshape([channels, batch] + rest).transpose(0, 1)
    shape = [1, -1] + [1] * (input.dim() - 2)
    if weight is not None:
        y = y * weight.detach().reshape(shape).expand(y.shape).clone()
    if bias is not None:
        y = y + bias.detach().reshape(shape).expand(y.shape).clone()
    return y


_LOSS = ("size_average", "reduce", "reduction")
# function -> (parameter names, leading tensors, stand-in, constants allowed among the tensors)
STAND_INS = {
    F.mse_loss: (("input", "target") + _LOSS, 2, _pointwise("mse"), True),
    F.l1_loss: (("input", "target") + _LOSS, 2, _pointwise("l1"), True),
    F.smooth_l1_loss: (("input", "target") + _LOSS + ("beta",), 2, _pointwise("smooth_l1"), True),
    F.huber_loss: (("input", "target", "reduction", "delta"), 2, _pointwise("huber"), True),
    F.binary_cross_entropy: (("input", "target", "weight") + _LOSS, 2, _bce, True),
    F.binary_cross_entropy_with_logits: (("input", "target", "weight") + _LOSS + ("pos_weight",), 2, _bce_logits,
                                         True),
    F.kl_div: (("input", "target") + _LOSS + ("log_target",), 2, _kl_div, True),
    F.nll_loss: (("input", "target", "weight", "size_average", "ignore_index", "reduce", "reduction"), 2,
                 _nll_loss, True),
    F.cross_entropy: (("input", "target", "weight", "size_average", "ignore_index", "reduce", "reduction",
                       "label_smoothing"), 2, _cross_entropy, True),
    F.batch_norm: (("input", "running_mean", "running_var", "weight", "bias", "training", "momentum", "eps"), 1,
                   _batch_norm),
}
