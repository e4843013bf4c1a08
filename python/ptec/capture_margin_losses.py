"""The margin, embedding and likelihood losses a forward computes to score
its input (issue 15): each a stand-in the fx tracer runs instead of the
call (capture_modules' FUNCTIONAL_STAND_INS, as capture_losses), so the
trace holds torch's formula (ATen's, term by term) in ops ptec lowers:

* F.triplet_margin_loss (p, margin, eps, swap) and
  F.triplet_margin_with_distance_loss: max(margin + d(a, p) - d(a, n), 0),
  d the pairwise distance of the last dim (|a - b + eps|_p) or the model's
  distance_function (traced as its code), swap its min with d(p, n);
* F.margin_ranking_loss: max(-y (x1 - x2) + margin, 0);
* F.cosine_embedding_loss: 1 - cos where y == 1, max(cos - margin, 0)
  where y == -1, cos with ATen's 1e-12 added to each squared magnitude;
* F.hinge_embedding_loss: x where y != -1 plus max(margin - x, 0) where
  y != 1; F.soft_margin_loss: softplus(-y x);
* F.multilabel_soft_margin_loss (weight): softplus(x) - y x (torch's
  -(y logsigmoid(x) + (1 - y) logsigmoid(-x))), weighted, averaged over
  the classes;
* F.poisson_nll_loss: exp(x) - t x (log_input) or x - t log(x + eps),
  full adding Stirling's t log t - t + log(2 pi t) / 2 where t > 1;
* F.gaussian_nll_loss: (log v + (x - t)^2 / v) / 2 with v clamped at eps
  (var of the input's shape or one dim short, as torch), full adding
  log(2 pi) / 2;
* F.multi_margin_loss (p 1 or 2, margin, weight) of class indices: the sum
  over the classes of max(margin - x[y] + x[j], 0)^p less the target's own
  term (max(margin, 0)^p), over C; a constant target's weight folded in
  (a computed one, an argmax: without weight);
* F.multilabel_margin_loss of a constant target: the pairwise
  1 - (x[j] - x[i]) clamped at 0, summed by a constant count of the
  (target j, non-target i) pairs (ATen's loop), over C; of a computed
  int64 target (a program input) the same sum by counts the graph makes
  (_listed: the one-hot class of each position before the row's first -1,
  x[t[k]] a matmul by it, each listed position a term as in ATen's loop);
* reduction "none", "mean" or "sum" each.

A call these do not cover (the legacy size_average / reduce arguments, a
computed target's class weights) stays the call, refused by name. A
computed multilabel target's class >= C (torch raises) lists nothing. torch raises on a
negative constant var; a computed one it can check only at run time, and
ptec clamps it at eps as torch's clamp would."""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from .capture_losses import _REDUCTIONS, _legacy, _reduce

_ATEN_EPSILON = 1e-12      # ATen's cosine_embedding_loss: added to each squared magnitude


def _ok(size_average, reduce, reduction) -> bool:
    return not _legacy(size_average, reduce) and reduction in _REDUCTIONS


def _distance(x1, x2, p, eps):
    """at::pairwise_distance: the p-norm of x1 - x2 + eps over the last dim."""
    from .capture_modules import PairwiseDistance
    return PairwiseDistance(torch.nn.PairwiseDistance(p, eps)).forward(x1, x2)


def _triplet(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-6, swap=False, size_average=None,
             reduce=None, reduction="mean"):
    if not _ok(size_average, reduce, reduction) or p <= 0:
        return None
    d_pos = _distance(anchor, positive, p, eps)
    d_neg = _distance(anchor, negative, p, eps)
    if swap:
        d_neg = torch.minimum(d_neg, _distance(positive, negative, p, eps))
    return _reduce(torch.clamp(margin + d_pos - d_neg, min=0.0), reduction)


def _triplet_with_distance(anchor, positive, negative, distance_function=None, margin=1.0, swap=False,
                           reduction="mean"):
    if reduction not in _REDUCTIONS or not (distance_function is None or callable(distance_function)):
        return None
    if distance_function in (None, F.pairwise_distance, torch.pairwise_distance):
        return _triplet(anchor, positive, negative, margin, 2.0, 1e-6, swap, reduction=reduction)
    # the model's own distance: traced here on the proxies, as any of its code
    d_pos, d_neg = distance_function(anchor, positive), distance_function(anchor, negative)
    if swap:
        d_neg = torch.minimum(d_neg, distance_function(positive, negative))
    return _reduce(torch.clamp(d_pos - d_neg + margin, min=0.0), reduction)


def _margin_ranking(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    if not _ok(size_average, reduce, reduction):
        return None
    return _reduce(torch.clamp(-target * (input1 - input2) + margin, min=0.0), reduction)


def _cosine_embedding(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    if not _ok(size_average, reduce, reduction) or target.dim() > 1 or input1.dim() != target.dim() + 1:
        return None                                  # torch's shapes: [N, D] with [N], or [D] with []
    at = target.dim()
    dot = (input1 * input2).sum(at)
    mags = ((input1 * input1).sum(at) + _ATEN_EPSILON) * ((input2 * input2).sum(at) + _ATEN_EPSILON)
    cos = dot / torch.sqrt(mags)
    zero = torch.zeros_like(cos)
    loss = torch.where(target == 1, 1.0 - cos, zero) + torch.where(target == -1, torch.clamp(cos - margin, min=0.0),
                                                                    zero)
    return _reduce(loss, reduction)


def _hinge_embedding(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    if not _ok(size_average, reduce, reduction):
        return None
    zero = torch.zeros_like(input)
    loss = torch.where(target != 1, torch.clamp(margin - input, min=0.0), zero) + torch.where(target != -1, input,
                                                                                             zero)
    return _reduce(loss, reduction)


def _soft_margin(input, target, size_average=None, reduce=None, reduction="mean"):
    if not _ok(size_average, reduce, reduction):
        return None
    return _reduce(F.softplus(-target * input), reduction)


def _multilabel_soft_margin(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    if not _ok(size_average, reduce, reduction) or input.dim() < 1:
        return None
    # -(t logsigmoid(x) + (1 - t) logsigmoid(-x)) = t softplus(-x) + (1 - t) softplus(x) = softplus(x) - t x
    loss = F.softplus(input) - target * input
    if weight is not None:
        loss = loss * weight
    classes = int(input.shape[-1])
    return _reduce(loss.sum(-1) / classes, reduction)


def _poisson_nll(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                 reduction="mean"):
    if not _ok(size_average, reduce, reduction):
        return None
    if log_input:
        loss = torch.exp(input) - target * input
    else:
        loss = input - target * torch.log(input + eps)
    if full:
        t = torch.clamp(target, min=1.0)              # the masked-off t <= 1 kept finite (log 0)
        stirling = t * torch.log(t) - t + 0.5 * torch.log(2 * math.pi * t)
        loss = loss + torch.where(target > 1, stirling, torch.zeros_like(stirling))
    return _reduce(loss, reduction)


def _gaussian_nll(input, target, var, full=False, eps=1e-6, reduction="mean"):
    if reduction not in _REDUCTIONS:
        return None
    ishape, vshape = tuple(input.shape), tuple(var.shape)
    if vshape != ishape:
        if ishape[:-1] == vshape:
            var = var.unsqueeze(-1)
        elif not (ishape[:-1] == vshape[:-1] and vshape[-1:] == (1,)):
            return None                              # torch raises: var is of incorrect size
    if not isinstance(var, torch.fx.Proxy) and bool((var < 0).any()):
        return None                                  # torch raises: var has negative entries
    var = torch.clamp(var, min=eps)
    d = input - target
    loss = 0.5 * (torch.log(var) + d * d / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def _multi_margin(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None, reduction="mean"):
    if not _ok(size_average, reduce, reduction) or p not in (1, 2) or input.dim() not in (1, 2):
        return None
    if isinstance(weight, torch.fx.Proxy):
        return None
    single = input.dim() == 1
    scores = input.unsqueeze(0) if single else input
    n, classes = int(scores.shape[0]), int(scores.shape[1])
    computed = isinstance(target, torch.fx.Proxy)
    if computed:
        if weight is not None:
            return None                              # a computed target's class weight: not known here
        idx = target.reshape(n, 1)
    else:
        t = target.detach().long().reshape(-1)
        if int(t.numel()) != n or bool(((t < 0) | (t >= classes)).any()):
            return None                              # torch raises: the model's own error
        idx = t.reshape(n, 1)
    at_target = torch.gather(scores, 1, idx)
    z = torch.clamp(margin - at_target + scores, min=0.0)
    h = z if p == 1 else z * z
    # every class's term, less the target's own: max(margin, 0)^p
    loss = (h.sum(1) - max(float(margin), 0.0) ** p) / classes
    if weight is not None:
        loss = loss * weight.detach().float()[t]
    if single:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


def _listed(target, n: int, classes: int):
    """Which class each listed position of a computed int64 target [n,
    classes] names: float 0/1 [n, k, c], 1 where position k comes before
    the row's first -1 (ATen's loop reads the targets up to there) and
    names class c. The -1 marks are counted up to each position by a
    constant triangle (a small whole number, compared with 0.5: a grid
    that saturates it answers the same); the classes compared as int64."""
    t = target.reshape(n, classes)
    stops = (t < 0).float()                           # [n, k]
    upto = torch.triu(torch.ones(classes, classes))   # [k', k]: k' <= k
    before = torch.matmul(stops, upto) < 0.5          # no -1 at or before position k
    names = t.unsqueeze(2) == torch.arange(classes)   # [n, k, c], int64 against int64
    return (names & before.unsqueeze(2)).float()


def _multilabel_margin(input, target, size_average=None, reduce=None, reduction="mean"):
    if not _ok(size_average, reduce, reduction) or input.dim() not in (1, 2):
        return None
    single = input.dim() == 1
    scores = input.unsqueeze(0) if single else input
    n, classes = int(scores.shape[0]), int(scores.shape[1])
    if isinstance(target, torch.fx.Proxy):
        # a computed target (a program input, an argsort): its listed positions one-hot in the graph,
        # ATen's sum over listed j and unlisted i of max(0, 1 - (x[j] - x[i])), over C
        if tuple(target.shape) != ((classes,) if single else (n, classes)):
            return None
        hit = _listed(target, n, classes)                                   # [n, k, c]
        listed = (hit.sum(2) > 0.5).float()                                 # [n, k]: 0/1 (a compare: exact)
        unlisted = (hit.sum(1) < 0.5).float()                               # [n, i]: no position names i
        picked = torch.matmul(hit, scores.unsqueeze(2))                     # [n, k, 1]: x[t[k]] (0 unlisted)
        z = torch.clamp(1.0 - picked + scores.unsqueeze(1), min=0.0)        # [n, k, i]
        loss = (z * (listed.unsqueeze(2) * unlisted.unsqueeze(1))).sum((1, 2)) / classes
        if single:
            loss = loss.reshape(())
        return _reduce(loss, reduction)
    t = target.detach().long().reshape(n, classes) if tuple(target.shape) in ((classes,), (n, classes)) else None
    if t is None:
        return None
    pairs = torch.zeros(n, classes, classes)         # [n, j, i]: how often ATen's loop adds 1 - x[j] + x[i]
    for r in range(n):
        targets = []
        for v in t[r].tolist():
            if v < 0:
                break
            if v >= classes:
                return None                          # torch raises
            targets.append(v)
        for j in targets:
            for i in range(classes):
                if i not in targets:
                    pairs[r, j, i] += 1.0
    z = torch.clamp(1.0 - (scores.unsqueeze(2) - scores.unsqueeze(1)), min=0.0)
    loss = (z * pairs).sum(2).sum(1) / classes
    if single:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


_LOSS = ("size_average", "reduce", "reduction")
# function -> (parameter names, leading tensors, stand-in, constants allowed among the tensors)
STAND_INS = {
    F.triplet_margin_loss: (("anchor", "positive", "negative", "margin", "p", "eps", "swap") + _LOSS, 3, _triplet,
                            True),
    F.triplet_margin_with_distance_loss: (("anchor", "positive", "negative", "distance_function", "margin", "swap",
                                           "reduction"), 3, _triplet_with_distance, True),
    F.margin_ranking_loss: (("input1", "input2", "target", "margin") + _LOSS, 3, _margin_ranking, True),
    F.cosine_embedding_loss: (("input1", "input2", "target", "margin") + _LOSS, 3, _cosine_embedding, True),
    F.hinge_embedding_loss: (("input", "target", "margin") + _LOSS, 2, _hinge_embedding, True),
    F.soft_margin_loss: (("input", "target") + _LOSS, 2, _soft_margin, True),
    F.multilabel_soft_margin_loss: (("input", "target", "weight") + _LOSS, 2, _multilabel_soft_margin, True),
    F.poisson_nll_loss: (("input", "target", "log_input", "full", "size_average", "eps", "reduce", "reduction"), 2,
                         _poisson_nll, True),
    F.gaussian_nll_loss: (("input", "target", "var", "full", "eps", "reduction"), 3, _gaussian_nll, True),
    F.multi_margin_loss: (("input", "target", "p", "margin", "weight") + _LOSS, 2, _multi_margin, True),
    F.multilabel_margin_loss: (("input", "target") + _LOSS, 2, _multilabel_margin, True),
}
