"""A layer's output divided or multiplied by one number (issue 15):
`softmax(fc(x) / T)`, a softmax temperature, `0.5 * conv(x)`.

The division was its own int8 step (a table of 256 entries, requantizing
onto a grid of its own) and, having no 16-bit kernel, it stayed int8
between a `--a16` linear and a `--a16` softmax: the 16-bit chain gained
nothing (9.3 output steps where the same function with 1/T in the weights
is 5.1). The number goes into the layer instead, as batch-norm folding
does: weight and bias times c (divided by T), computed in float64 and
rounded to float32, so the layer computes x @ (W / T) + b / T, torch's
(x @ W + b) / T to float32 rounding, and calibrates on that range. Then
the layer's int8 or int16 requantization carries the scale for free: one
kernel call fewer, and --a16 stays 16-bit through it.

Only where nothing else reads the layer's output (else it would change for
that reader), the layer has no fused activation (a clamp's bounds do not
scale with it; prepare fuses clamps after this fold, so clamp(fc(x) / T)
still fuses), no grid of its own (attrs weight_scale: the whole-code
weights of exact sums), and the number is finite and not 0 (x / 0 is
inf or NaN in torch)."""
from __future__ import annotations

from typing import Optional

import numpy as np

from .ir import Graph, Node

LAYERS = ("linear", "conv2d", "conv_transpose2d")


def _number(g: Graph, name: str) -> Optional[float]:
    """The one finite, nonzero number a constant operand holds, else None."""
    c = g.node(name)
    if c.op != "constant" or "value" not in c.attrs:
        return None
    v = np.asarray(c.attrs["value"])
    if v.size != 1 or v.dtype.kind not in "fiu" or v.ndim > 0 and list(v.shape) != [1] * v.ndim:
        return None
    x = float(v.reshape(()))
    return x if np.isfinite(x) and x != 0.0 else None


def _factor(g: Graph, n: Node):
    """(layer, factor) when n is layer(x) / c, layer(x) * c or c * layer(x)
    with a number c that folds into the layer, else None."""
    if n.op not in ("div", "mul") or len(n.inputs) != 2 or len(set(n.inputs)) != 2 or set(n.attrs) - {"source"}:
        return None     # (a mark on n, as an fp32 step's or a fused activation: n stays as it is)
    for at in (0, 1) if n.op == "mul" else (0,):
        layer, c = g.node(n.inputs[at]), _number(g, n.inputs[1 - at])
        if c is None or layer.op not in LAYERS or layer.shape != n.shape:
            continue
        a = layer.attrs
        if a.get("act") or a.get("fp32") or a.get("weight_scale") is not None or a.get("weight") is None \
                or len(g.users(layer.name)) != 1 or layer.name in g.outputs:
            continue
        f = 1.0 / c if n.op == "div" else c
        if np.isfinite(f) and f != 0.0:
            return layer, f
    return None


def fold_constant_scales(g: Graph) -> int:
    """Fold each layer(x) / c and layer(x) * c into the layer (the module
    doc); returns how many were folded."""
    folded = 0
    for n in list(g.nodes):
        found = _factor(g, n)
        if found is None:
            continue
        layer, f = found
        a = layer.attrs
        a["weight"] = (np.asarray(a["weight"], np.float64) * f).astype(np.float32)
        if a.get("bias") is not None:
            a["bias"] = (np.asarray(a["bias"], np.float64) * f).astype(np.float32)
        const = [i for i in n.inputs if i != layer.name][0]
        g.replace_uses(n.name, layer.name)
        g.remove(n.name)
        if not g.users(const) and const not in g.outputs:
            g.remove(const)
        folded += 1
    return folded
