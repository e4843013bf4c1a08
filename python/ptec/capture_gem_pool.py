"""GeM (generalized-mean) pooling as an LP pool (probe4): image retrieval
and Kaggle backbones pool with `x.clamp(min=eps).pow(p)`, a window's or
the plane's mean (`F.avg_pool2d(t, k)`, `F.adaptive_avg_pool2d(t, 1)`,
`t.mean((-2, -1))`), then `.pow(1 / p)`, p a number or a learned
parameter. Traced op by op, x^p lands on an int8 grid, where the small
values of a window are 0 before the root (10 to 87 output steps).

mean(x^p)^(1/p) = (K mean(x^p))^(1/p) / K^(1/p) for the window's K
elements, and the left side is torch's F.lp_pool2d(x, p, k) (its
sign(t) relu(|t|) is t): so the outer pow is traced as that call divided
by the constant K^(1/p), which capture lowers as nn.LPPool2d, in fp32
(capture_fp32_norms.lp_pool_fp32_nodes). The exponents must be known
while tracing (numbers, parameters, values of the parameters alone) and
the outer one 1 / p; a mean over the last two dims becomes a pool of the
whole plane, viewed as torch's result."""
from __future__ import annotations

import operator

import torch
import torch.fx
import torch.nn.functional as F

from .capture_computed_weights import fixed_weight

_POWS = (torch.pow, operator.pow, "pow")


def _is(node, kind, targets) -> bool:
    if node.op != kind:
        return False
    try:
        return node.target in targets
    except TypeError:
        return False


def _number(tracer, a):
    """a as a float known while tracing (a number, a parameter, a value of
    the parameters alone, one element), else None."""
    if isinstance(a, torch.fx.Node):
        a = tracer.proxy(a)
    if isinstance(a, (int, float)) and not isinstance(a, bool):
        return float(a)
    if not isinstance(a, torch.fx.Proxy):
        return None
    value = tracer._constant(a) if a.node.op == "get_attr" and hasattr(tracer, "_constant") else fixed_weight(tracer, a)
    if isinstance(value, torch.Tensor) and value.numel() == 1 and value.is_floating_point():
        return float(value.detach().reshape(()))
    return None


def _pow_args(node):
    """(base, exponent) of a pow node, else None."""
    if not (_is(node, "call_function", _POWS) or _is(node, "call_method", _POWS)) or len(node.args) != 2 \
            or node.kwargs:
        return None
    return node.args


def _window(tracer, pool: torch.fx.Node, shape):
    """(kernel, stride, viewed shape or None) of a mean pool over windows
    of the last two dims of a [N, C, H, W] value, else None."""
    h, w = int(shape[-2]), int(shape[-1])
    args, kwargs = pool.args, pool.kwargs
    if pool.op == "call_function" and pool.target is F.avg_pool2d:
        names = ("input", "kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override")
        got = dict(zip(names, args))
        got.update(kwargs)
        k = got.get("kernel_size")
        k = [k, k] if isinstance(k, int) else list(k) if isinstance(k, (tuple, list)) else None
        s = got.get("stride") or k
        s = [s, s] if isinstance(s, int) else list(s) if isinstance(s, (tuple, list)) else None
        pad = got.get("padding", 0)
        if k is None or s is None or pad not in (0, (0, 0), [0, 0]) or got.get("ceil_mode", False) \
                or got.get("divisor_override") is not None or set(got) - set(names):
            return None
        return k, s, None
    if pool.op == "call_function" and pool.target is F.adaptive_avg_pool2d:
        out = args[1] if len(args) > 1 else kwargs.get("output_size")
        if out not in (1, (1, 1), [1, 1]):
            return None
        return [h, w], [h, w], None
    if _is(pool, "call_method", ("mean",)) or _is(pool, "call_function", (torch.mean,)):
        dim = args[1] if len(args) > 1 else kwargs.get("dim")
        keepdim = args[2] if len(args) > 2 else kwargs.get("keepdim", False)
        if not isinstance(dim, (tuple, list)) or sorted(d % 4 for d in dim) != [2, 3] or len(dim) != 2 \
                or not isinstance(keepdim, bool) or set(kwargs) - {"dim", "keepdim"}:
            return None
        return [h, w], [h, w], None if keepdim else [int(shape[0]), int(shape[1])]
    return None


def gem_pool(tracer, kind: str, target, args, kwargs):
    """The traced F.lp_pool2d(x, p, k, s) / K^(1/p) for `pool(x^p)^(1/p)`,
    else None."""
    if getattr(tracer, "_evaluating", False) or getattr(tracer, "_values", None) is None or kwargs \
            or len(args) != 2 or not isinstance(args[0], torch.fx.Proxy):
        return None
    try:
        if target not in _POWS:
            return None
    except TypeError:
        return None
    pool = args[0].node
    if len(pool.args) < 1 or not isinstance(pool.args[0], torch.fx.Node):
        return None
    inner = _pow_args(pool.args[0])
    if inner is None or not isinstance(inner[0], torch.fx.Node) or not tracer.known(inner[0]):
        return None
    x = inner[0]
    shape = getattr(tracer.value(x), "shape", None)
    if shape is None or len(shape) != 4 or tracer.value(x).dtype != torch.float32:
        return None
    found = _window(tracer, pool, shape)
    p, q = _number(tracer, inner[1]), _number(tracer, args[1])
    if found is None or p is None or q is None or p == 0 or abs(p * q - 1.0) > 1e-6:
        return None
    kernel, stride, view = found
    taps = float(kernel[0] * kernel[1])
    x_proxy = tracer.proxy(x)
    y = tracer.create_proxy("call_function", F.lp_pool2d, (x_proxy, p, tuple(kernel), tuple(stride)), {})
    y = y / taps ** (1.0 / p)
    for n in (pool, pool.args[0]):     # the int8 chain: dropped after tracing when nothing else reads it
        n.meta["ptec_decided"] = True
    return y.reshape(view) if view is not None else y
