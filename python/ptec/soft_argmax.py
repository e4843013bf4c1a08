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
products by a constant grid, `p @ coords` or a bias-free linear of up to
COORDS grid rows) and at least one of them weighs p by a grid that varies, all
of those steps, the softmax, and its input's scale by one number (beta, or
a division by a temperature: its only reader) are marked fp32: the
expectation is computed from the logits in fp32 and quantized once onto
the coordinate's grid. When the logits are a float program input's view,
that view is fp32 too and the steps read the input's exact value (a
heatmap input: 1.42 to 18.29 output steps -> 0.0 to 0.50 over beta 1..20).
Behind an int8 layer what is left is that layer's rounding, times beta in
the logits: from beta 4 up, that layer's steps are copied in fp32 for the
logits (ptec.soft_argmax_logits).

The constants must be a coordinate grid (_grid): a linear's rows (no
bias, or a zero one), `p @ coords`' columns, a product's constant, each
evenly spaced over p's positions, along the flattened heatmap (linspace,
arange) or as a 2-D heatmap's x or y grid (linear along one axis, constant
along the other). An ordinary classifier head on a softmax, nn.Linear(10,
3) with a bias, is none: before this check it was taken (its 3 rows were
<= COORDS) and its softmax and linear left the int8 kernels (and an
Ethos-U delegate, 2 -> 1). `(softmax(h) * w).sum(-1)` with an arbitrary
constant w is an expectation too, but of no grid: it stays int8 (5.6 to
9.2 output steps from torch; fp32 gave 1.3 to 1.7, seeds 0..2), so that
"soft-argmax" means what it says and no other head moves off its kernel.

A softmax whose values (not a sum of them) are read by anything else
(attention's p @ v, p returned, a classifier head) keeps its int8 kernel,
and a program with no soft-argmax is byte for byte the program it was."""
from __future__ import annotations

from typing import List, Optional

import numpy as np

from .ir import Graph
from .soft_argmax_logits import logits_from_inputs

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


def _grid(v: np.ndarray) -> bool:
    """v (one weight row, one coords column, a product's constant) is a
    coordinate grid over p's positions: one number (a sum's scale), or an
    evenly spaced grid, value = a + b * i + c * j over the positions'
    (i, j) for some H x W = v.size (W = v.size: linspace / arange along the
    flattened heatmap; else a 2-D heatmap's x grid, constant along i, or
    its y grid, constant along j). A classifier head's rows are not."""
    v = np.asarray(v, dtype=np.float64).reshape(-1)
    span = float(np.ptp(v))
    if span == 0:
        return True
    if v.size < 3:                      # two values are always "evenly spaced"
        return False
    tol = 1e-4 * span                   # fp32 linspace / meshgrid rounding is ~1e-7 of it
    for h in [d for d in range(1, v.size + 1) if v.size % d == 0]:
        m = v.reshape(h, v.size // h)
        dj, di = np.diff(m, axis=1), np.diff(m, axis=0)
        if (dj.size == 0 or np.ptp(dj) <= tol) and (di.size == 0 or np.ptp(di) <= tol):
            return True
    return False


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
        w, b = n.attrs.get("weight"), n.attrs.get("bias")
        return bool(n.attrs.get("exact_sum")) or (
            isinstance(w, np.ndarray) and w.ndim == 2 and w.shape[0] <= COORDS and n.inputs[0] in region
            and (b is None or not np.any(np.asarray(b))) and all(_grid(row) for row in w))
    if n.op == "matmul":                # p @ coords, coords a constant [n, k] of a few columns
        c = _constant(g, n.inputs[1]) if len(n.inputs) == 2 and n.inputs[0] in region else None
        return c is not None and c.ndim == 2 and c.shape[1] <= COORDS and all(_grid(col) for col in c.T)
    if n.op != "mul" or len(n.inputs) != 2 or not all(i in region or _constant(g, i) is not None for i in n.inputs):
        return False
    c = _constant(g, [i for i in n.inputs if i not in region][0])
    c = c.reshape([k for k in c.shape if k != 1]) if c.size > 1 else c.reshape(1)
    return c.size == 1 or all(_grid(row) for row in c.reshape(-1, int(np.prod(c.shape[-2:]))))


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
            grid = grid or bool(np.ptp(n.attrs["weight"], axis=1).max() > 0)
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
        logits = _logits(g, sm)
        steps += logits
        for k in [sm.name] + steps:
            g.node(k).attrs.setdefault("fp32", FP32_REASON)
        logits_from_inputs(g, logits)      # beta >= 4: the logits' int8 producer copied in fp32 (soft_argmax_logits)
        marked.append(sm.name)
    return marked
