"""Calls a forward makes that are torch's formula of ops ptec runs, or whose
result is known while tracing (issue 15): each a stand-in the fx tracer
runs instead of the call (capture_modules' FUNCTIONAL_STAND_INS):

* torch.dist(a, b, p): the p-norm of a - b (broadcast) over every element,
  as torch: p = 2 sqrt of the sum of squares, p = 1 the sum of |d|, inf /
  -inf the max / min of |d|, 0 the count of nonzero d, else
  (sum |d|^p)^(1/p);
* torch.result_type(a, b): a dtype, not a tensor; torch's promotion of
  the operands' dtypes and dimensionality (a 0-d tensor or a number
  promotes only across categories), computed on the tracer's shadow
  values, so `x.to(torch.result_type(x, 2.0))` traces as a cast to
  a known dtype;
* F.rrelu(x, lower, upper, training=True): torch's random slope per
  element: x where x >= 0, else x times a slope drawn uniform in
  [lower, upper) on the device each call (torch.rand_like, capture_random),
  as nn.RReLU in training; eval stays the module's leaky ReLU.

A call these do not cover (dist with a tensor p) stays the call, refused by
name."""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F


def _dist(input, other, p=2.0):
    if not isinstance(p, (int, float)) or isinstance(p, bool):
        return None
    d = (input - other).reshape(-1)
    p = float(p)
    if p == 2.0:
        return torch.sqrt((d * d).sum())
    a = torch.abs(d)
    if p == 1.0:
        return a.sum()
    if p == math.inf:
        return a.amax()
    if p == -math.inf:
        return a.amin()
    if p == 0.0:
        return (d != 0).float().sum()
    return (a ** p).sum() ** (1.0 / p)


def _operand(v):
    """What result_type reads of an operand: a traced one's value while
    tracing (capture_tracer's shadow value), a number or constant as itself;
    None where the value is not known."""
    if isinstance(v, torch.fx.Proxy):
        tracer = v.tracer
        if not (hasattr(tracer, "known") and tracer.known(v.node)):
            return None
        v = tracer.value(v.node)
    return v if isinstance(v, (torch.Tensor, bool, int, float, complex)) else None


def _result_type(tensor, other):
    a, b = _operand(tensor), _operand(other)
    if a is None or b is None:
        return None
    # the dtype and dimensionality are all torch reads: empty stand-ins of them
    a, b = [torch.empty((0,) if v.dim() else (), dtype=v.dtype) if isinstance(v, torch.Tensor) else v for v in (a, b)]
    return torch.result_type(a, b)


def _rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    if not training or inplace:
        return None                      # eval: capture_calls' nn.RReLU (a leaky ReLU of the middle slope)
    slope = torch.rand_like(input) * (float(upper) - float(lower)) + float(lower)
    return torch.where(input >= 0, input, input * slope)


STAND_INS = {
    torch.dist: (("input", "other", "p"), 2, _dist, True),
    torch.result_type: (("tensor", "other"), 0, _result_type, True),
    F.rrelu: (("input", "lower", "upper", "training", "inplace"), 1, _rrelu),
}
