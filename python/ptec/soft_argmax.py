"""Soft-argmax in fp32 (a prepare pass, issue 15).

`p = softmax(h * beta, d); coord = (p * grid).sum(d)` (grid a constant:
torch.linspace(-1, 1, n), or a keypoint's x and y grids, each a weighted
sum of the same p) is a probability vector's expectation. In int8 the
softmax's output sits on its fixed 1/256 grid: a row of n ~ 32 to 80
values of about 1 / n each kept 3 to 8 codes, the rounding of every p_i
(up to 1/512) weighted by the grid and summed over n terms, against an
output grid that is the narrow range of the coordinates (1.4 to 28 output
steps from torch over beta 1..20 and the forms tried). The product p * grid was
already an fp32 step (its broadcast over the last dim is no int8 mul's) and
the sum after it an fp32 linear, so what mattered was p's int8 grid.

Here, when the softmax's values reach its readers only through steps
that change them by constants (views, means and exact_sums' sums of ones,
products by a constant, `p @ coords` or a linear of a constant of up to
COORDS rows) and at least one of them weighs p by a grid that varies, all
of those steps, the softmax, and its input's scale by one number (beta, or
a division by a temperature: its only reader) are marked fp32: the
expectation is computed from the logits in fp32 and quantized once onto
the coordinate's grid. When the logits are a float program input's view,
that view is fp32 too and the steps read the input's exact value (a
heatmap input: 1.42 to 18.29 output steps -> 0.0 to 0.50 over beta 1..20).
Behind an int8 layer what is left is that layer's rounding, times beta in
the logits.

A softmax whose values (not a sum of them) are read by anything else
(attention's p @ v, p returned) keeps its int8 kernel, and a program with
no soft-argmax is byte for byte the program it was."""
from __future__ import annotations

from typing import List, Optional

import numpy as np

from .ir import Graph

FP32_REASON = ("a soft-argmax (a softmax's expectation over a constant grid), computed in fp32: on the "
               "softmax's int8 1/256 grid every probability's rounding was weighted and summed")

MOVES = ("reshape", "permute")
COORDS = 4              # a weighted sum of p by a constant of up to this many rows: coordinates, not a layer


def _constant(g: Graph, name: str) -> Optional[np.ndarray]:
    c = g.node(name)
    if c.op != "constant" or c.attrs.get("dtype"):
        return None
    value = np.asarray(c.attrs.get("value"))
    return value if value.dtype.kind == "f" and np.isfinite(value).all() else None


def _linear_step(g: Graph, n, region) -> bool:
    """n reads one value of the region and changes it by constants only: a
    move, a mean, a product by a constant, an exact_sums linear."""
    inside = [i for i in n.inputs if i in region]
    if len(inside) != 1 or n.attrs.get("act") or n.attrs.get("fp32"):
        return False
    if n.op in MOVES:
        return True
    if n.op == "mean":
        return set(n.attrs) <= {"dim", "keepdim", "source"}
    if n.op == "linear":                # a sum, or a few weighted sums (p's x, y by a weight of 2 rows)
        w = n.attrs.get("weight")
        return bool(n.attrs.get("exact_sum")) or (isinstance(w, np.ndarray) and w.ndim == 2
                                                  and w.shape[0] <= COORDS and n.inputs[0] in region)
    if n.op == "matmul":                # p @ coords, coords a constant [n, k] of a few columns
        c = _constant(g, n.inputs[1]) if len(n.inputs) == 2 and n.inputs[0] in region else None
        return c is not None and c.ndim == 2 and c.shape[1] <= COORDS
    return n.op == "mul" and len(n.inputs) == 2 and all(i in region or _constant(g, i) is not None for i in n.inputs)


def _expectation(g: Graph, sm) -> Optional[List[str]]:
    """The steps from softmax sm to its expectations (module doc), sm
    excluded, in graph order, else None."""
    region = {sm.name: False}           # node -> whether a sum lies between sm and it
    grid = False
    for n in g.nodes:                   # graph order: a node's inputs come first
        if n.name == sm.name or not any(i in region for i in n.inputs):
            continue
        if not _linear_step(g, n, region):
            if any(i in region and not region[i] for i in n.inputs):
                return None             # p itself, or a product not summed, read by another step
            continue
        region[n.name] = n.op in ("mean", "linear", "matmul") or region[[i for i in n.inputs if i in region][0]]
        if n.op in ("mul", "matmul"):
            c = _constant(g, [i for i in n.inputs if i not in region][0])
            grid = grid or (c.size > 1 and np.ptp(c) > 0)
        elif n.op == "linear" and not n.attrs.get("exact_sum"):
            grid = True
    if not grid or any(k in g.outputs and not summed for k, summed in region.items()):
        return None
    return [k for k in region if k != sm.name]


def _scaled(g: Graph, n) -> bool:
    """Whether n is h * c, c * h or h / c (c one number) read only by the softmax."""
    if n.op not in ("mul", "div") or len(n.inputs) != 2 or n.attrs.get("act") or n.name in g.outputs \
            or len(g.users(n.name)) != 1:
        return False
    numbers = [i for i in (n.inputs if n.op == "mul" else n.inputs[1:])
               if _constant(g, i) is not None and _constant(g, i).size == 1]
    tensors = [i for i in n.inputs if g.node(i).op != "constant"]
    return len(numbers) == 1 and len(tensors) == 1 and (n.op == "mul" or tensors[0] == n.inputs[0])


def _logits(g: Graph, sm) -> List[str]:
    """The softmax's input's scale by beta (one rounding fewer), and when
    the logits are a program input's value moved and scaled, the moves too
    (the fp32 steps then read the input's exact float value)."""
    chain, n = [], g.node(sm.inputs[0])
    while (n.op in MOVES and len(g.users(n.name)) == 1 and n.name not in g.outputs) or _scaled(g, n):
        chain.append(n.name)
        n = g.node([i for i in n.inputs if g.node(i).op != "constant"][0])
    if n.op == "input" and not n.attrs.get("dtype") and not n.attrs.get("in_dtype"):
        return chain
    scales = [k for k, name in enumerate(chain) if g.node(name).op not in MOVES]
    return chain[:scales[-1] + 1] if scales else []     # moves before the scale stay on the int8 producer's


def soft_argmax_in_fp32(g: Graph) -> List[str]:
    """Marks each soft-argmax's steps fp32 (module doc). Returns the softmaxes marked."""
    marked = []
    for sm in [n for n in g.nodes if n.op == "softmax" and not n.attrs.get("fp32")]:
        steps = _expectation(g, sm)
        if steps is None:
            continue
        steps += _logits(g, sm)
        for k in [sm.name] + steps:
            g.node(k).attrs.setdefault("fp32", FP32_REASON)
        marked.append(sm.name)
    return marked
