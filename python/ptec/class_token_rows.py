"""A class token's row before a transformer layer (issue #15): the token
cat, and the position embedding added to it, in fp32; the attention
context of the layer reading it on its own calibrated grid.

ViT-style models prepend a learned class token to the embedded tokens,
`torch.cat([cls.expand(B, -1, -1), embed(x)], 1) + pos`, and read that
token's row after the encoder. The cls and pos values are small (their
init: about 0.02); on the cat's one int8 grid (the embedded tokens' range,
a few units) the class token's row sits on a few codes. Where fp32 steps
read that value (the residual add ptec.fp32_residuals made fp32, a layer
norm) the rounding reached the layer norm of a row of small deviation,
which magnified it: `test_class_token_precision.py`, 17.2 output steps
(worst of 4 seeds, post-norm), 24 (norm_first). So the cat and the adds
of a constant after it (the position embedding) run in fp32 there: the
parameters stay float (only the cat's constant piece and the added
constant, which are small), the embedded tokens are dequantized once, and
the int8 readers (q, k, v projections of a post-norm layer) read a
quantize of the fp32 value on the grid they had.

The class token's attention context (softmax @ v, its row a near-uniform
average of v's rows) was requantized on v's grid (quantize's convex-
combination rule, which keeps sharper attention than calibration saw from
clipping), four times coarser than the context's observed range here; the
output projection of that row and the residual add fed the same layer
norm. The contexts of attention reading such a cat (or its layer norm,
norm_first) through its v projection take their own observed range
(CONTEXT_GRID; quantize), also for a class token of zeros (exact on any
grid, so its cat stays int8) and where no fp32 step reads the cat (a
layer norm of the cat is the cat of the pieces' norms:
capture_constant_rows).
A piece counts as constant when it is computed from constants alone
through data moves (expanded to a batch of 2, the token is a cat of its
copies)."""
from __future__ import annotations

from typing import Callable

import numpy as np
import torch

from .ir import Graph, Node, eval_node, origin

REASON = ("a class token's row (a small constant piece of a cat of tokens, a few codes of its int8 grid) "
          "read by fp32 steps (a residual add, a layer norm): the cat and a constant added to it "
          "(position embeddings) computed in fp32")
CONTEXT_GRID = "own_context_grid"     # attrs key: softmax @ v on its observed range, not v's (quantize)
NARROW = 0.25       # a constant piece whose span is under this fraction of the cat's: a few codes of it
_MOVES = ("reshape", "permute", "slice")


def _source(g: Graph, name: str) -> Node:
    """The node name is a data move of (reshape, permute, slice), through moves."""
    n = g.node(name)
    while n.op in _MOVES and n.inputs:
        n = g.node(n.inputs[0])
    return n


def _constant_value(g: Graph, name: str):
    """The value of name when it is computed from constants alone through
    data moves (the class token expanded to a batch of 2 is a cat of its
    copies), else None."""
    n = g.node(name)
    if n.op == "constant":
        return np.asarray(n.attrs["value"], np.float64)
    if n.op not in _MOVES + ("cat", "identity") or not n.inputs:
        return None
    xs = [_constant_value(g, i) for i in n.inputs]
    if any(x is None for x in xs):
        return None
    return eval_node(n, [torch.as_tensor(x) for x in xs]).numpy()


def _small_constant_piece(g: Graph, cat: Node, observer):
    """None: no constant piece of cat is small on its grid; False: only
    zeros (exact on every grid); True: a small nonzero one."""
    lo, hi = observer.range(cat.name)
    found = None
    for i in cat.inputs:
        v = _constant_value(g, i)
        if v is None:
            continue
        if v.size and float(np.ptp(v)) < NARROW * (hi - lo):
            found = found or bool(np.any(v != 0))
    return found


def _with_constants_added(g: Graph, n: Node) -> list:
    """n, and the adds of a constant that alone read it, in turn (+ pos)."""
    chain = [n]
    while True:
        users = g.users(chain[-1].name)
        if len(users) != 1 or chain[-1].name in g.outputs:
            return chain
        a = users[0]
        other = [i for i in a.inputs if i != chain[-1].name]
        if a.op != "add" or len(a.inputs) != 2 or a.attrs.get("act") or a.attrs.get("fp32") \
                or len(other) != 1 or g.node(other[0]).op != "constant":
            return chain
        chain.append(a)


def class_token_rows_in_fp32(g: Graph, observer, log: Callable[[str], None], int8_io: bool,
                             int8_layernorm: bool, a16) -> None:
    if int8_io or a16:
        return
    for n in list(g.nodes):
        if n.op != "cat" or n.attrs.get("fp32") or n.shape is None or len(n.shape) < 2 \
                or n.attrs["dim"] % len(n.shape) == len(n.shape) - 1 \
                or all(_constant_value(g, i) is not None for i in n.inputs):
            continue
        small = _small_constant_piece(g, n, observer)
        if small is None:
            continue
        chain = _with_constants_added(g, n)
        last = chain[-1]
        readers = g.users(last.name)
        if last.name in g.outputs:
            continue
        float_read = any(r.attrs.get("fp32") or (r.op == "layer_norm" and not int8_layernorm) for r in readers)
        if float_read and (small or len(chain) > 1):     # (a row of zeros, nothing added: exact on any grid)
            for m in chain:
                m.attrs["fp32"] = REASON
            log(f"{origin(n)}: {REASON}")
        # the projections reading it (post-norm), or reading its layer norm (norm_first)
        projections = {r.name for r in readers if r.op == "linear"} | {
            u.name for r in readers if r.op == "layer_norm" for u in g.users(r.name) if u.op == "linear"}
        for m in g.nodes:           # the attention context of those projections' v
            if m.op == "matmul" and len(m.inputs) == 2 and _source(g, m.inputs[0]).op == "softmax" \
                    and _source(g, m.inputs[1]).name in projections:
                m.attrs[CONTEXT_GRID] = True
