"""A layer norm of a cat whose constant pieces are rows (probe4): ViT /
DeiT / FT-Transformer prepend a learned CLS token,
`torch.cat([self.cls.expand(B, -1, -1), x], 1)`, then nn.LayerNorm. On
the int8 grid the cat has one scale, set by x's range; the CLS values
(timm's init: about 0.02) are a few steps of it, and the norm magnifies
their rounding (24 output steps where the other rows are 2).

LayerNorm normalizes each row alone (over its trailing dims): when the
cat joins along an earlier dim, LN(cat(pieces)) = cat(LN(piece) for each
piece). A piece computed from the parameters alone (a constant,
capture_computed_weights.fixed_weight) has its norm computed here in
float, as torch does, and the cat joins that constant to the varying
pieces' norms: the CLS row is exact up to the output's own rounding. The
cat itself stays only where something else reads it."""
from __future__ import annotations

import torch
import torch.fx
import torch.nn.functional as F

from .capture_computed_weights import fixed_weight


def _cat_of(x):
    """(pieces, dim) of x = torch.cat(pieces, dim), else None."""
    if not isinstance(x, torch.fx.Proxy) or x.node.op != "call_function" or x.node.target is not torch.cat:
        return None
    args, kwargs = x.node.args, x.node.kwargs
    pieces = args[0] if args else kwargs.get("tensors")
    dim = args[1] if len(args) > 1 else kwargs.get("dim", 0)
    if not isinstance(pieces, (list, tuple)) or not isinstance(dim, int) \
            or not all(isinstance(p, torch.fx.Node) for p in pieces):
        return None
    return list(pieces), dim


def _norm_of(tracer, kind, target, args, kwargs):
    """(input, normalized dims count, fn(value) -> its norm in float) of a
    layer norm call, else None."""
    if kind == "call_module" and isinstance(target, str):
        try:
            m = tracer.root.get_submodule(target)
        except AttributeError:
            return None
        if type(m) is not torch.nn.LayerNorm or len(args) != 1 or kwargs:
            return None
        weight, bias = m._parameters.get("weight"), m._parameters.get("bias")   # fx hands proxies for m.weight
        return args[0], len(m.normalized_shape), \
            lambda v: F.layer_norm(v, list(m.normalized_shape), weight, bias, m.eps)
    if kind == "call_function" and target is F.layer_norm and len(args) >= 2:
        shape = args[1]
        shape = [shape] if isinstance(shape, int) else shape
        rest = dict(zip(("weight", "bias", "eps"), args[2:]))
        rest.update(kwargs)
        if not isinstance(shape, (list, tuple, torch.Size)):
            return None
        for name, v in rest.items():       # a parameter (get_attr) as its value; a computed one: not here
            if isinstance(v, torch.fx.Proxy):
                rest[name] = tracer._constant(v) if hasattr(tracer, "_constant") else None
                if rest[name] is None:
                    return None
        return args[0], len(shape), lambda v: F.layer_norm(v, list(shape), **rest)
    return None


def _constant_piece(tracer, p):
    """p's value when it is a constant: a parameter or tensor constant
    itself (`torch.cat([self.cls, x], 1)`), or computed from them alone."""
    if p.node.op == "get_attr":
        value = tracer._constant(p) if hasattr(tracer, "_constant") else None
        if isinstance(value, torch.nn.Parameter) or (isinstance(value, torch.Tensor) and
                                                     str(p.node.target).split(".")[-1].startswith("_tensor_constant")):
            return value.detach().clone() if value.is_floating_point() else None
        return None
    return fixed_weight(tracer, p)


def constant_rows_norm(tracer, kind: str, target, args, kwargs):
    """The traced cat(LN(piece)...) for a layer norm of a cat with a
    constant piece along a dim it does not normalize, else None."""
    if getattr(tracer, "_evaluating", False) or getattr(tracer, "_values", None) is None:
        return None
    found = _norm_of(tracer, kind, target, args, kwargs)
    if found is None:
        return None
    x, k, norm = found
    cat = _cat_of(x)
    if cat is None:
        return None
    pieces, dim = cat
    rank = len(tracer.value(x.node).shape) if tracer.known(x.node) else None
    if rank is None or not -rank <= dim < rank or dim % rank >= rank - k or len(pieces) < 2:
        return None
    proxies = [tracer.proxy(p) for p in pieces]
    constants = [_constant_piece(tracer, p) for p in proxies]
    if all(c is None for c in constants) or all(c is not None for c in constants):
        return None
    parts = []
    for p, c in zip(proxies, constants):
        if c is None:
            parts.append(tracer.create_proxy(kind, target, (p,) + tuple(args[1:]), kwargs))
        else:
            with torch.no_grad():
                parts.append(norm(c).detach().clone())
    x.node.meta["ptec_decided"] = True      # the cat: dropped after tracing when nothing else reads it
    return torch.cat(parts, dim)
