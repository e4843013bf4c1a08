"""torch.ldexp(x, e) / x.ldexp(e) = x * 2**e as a product capture
rewrites (issue 15)."""
from __future__ import annotations

from typing import List, Optional

import numpy as np
import torch

from .ir import Node


def ldexp_nodes(fn, ins, by_name) -> Optional[List[Node]]:
    """torch.ldexp(x, e) / x.ldexp(e) = x * 2**e: with e a constant, x times
    the constant 2**e (one number: a LUT; else a constant of the output's
    shape, an int8 mul); with e a float value of the program, x times
    torch.exp2(e) (a LUT, then an int8 mul)."""
    if fn.target not in (torch.ldexp, "ldexp") or len(fn.args) != 2 or fn.kwargs \
            or not all(isinstance(a, torch.fx.Node) for a in fn.args):
        return None
    x, e = fn.args
    meta = fn.meta.get("tensor_meta")
    out = [int(d) for d in meta.shape] if meta is not None and hasattr(meta, "shape") else None
    x_meta = x.meta.get("tensor_meta")
    if out is None or x_meta is None or list(x_meta.shape) != out or not x_meta.dtype.is_floating_point:
        return None
    name = fn.name
    const = by_name.get(e.name)
    if const is not None and const.op == "constant":
        factor = np.power(2.0, np.asarray(const.attrs["value"], np.float64)).astype(np.float32)
        if factor.size == 1:
            factor = np.asarray(factor.reshape(()))
        else:
            factor = np.broadcast_to(factor, out).copy()
        return [Node(f"{name}__0", "constant", [], dict(value=factor)), Node(name, "mul", [x.name, f"{name}__0"])]
    e_meta = e.meta.get("tensor_meta")
    if e_meta is None or not e_meta.dtype.is_floating_point or list(e_meta.shape) != out:
        return None
    return [Node(f"{name}__0", "elementwise", [e.name], dict(fn="exp2")), Node(name, "mul", [x.name, f"{name}__0"])]
