"""The logits of a sharp soft-argmax computed in fp32 too (issue 15):
`(softmax(beta * conv(x).flatten(2), -1) * grid).sum(-1)` with beta from
BETA up (keypoint heads: beta 10 to 100).

ptec.soft_argmax runs the scale by beta, the softmax and the expectation
in fp32, from the logits' producer as the program holds it: behind an int8
layer (a conv's heatmap) that is its int8 value, rounded to half its step
s, and beta multiplies that rounding in the logits: beta s / 2 moves every
probability by that factor, and the expectation with them (an 8 x 8
heatmap of a Conv2d(3, 2, 3): 4.5 to 6.5 output steps of torch's spread at
beta 10, 8.5 to 19 at 30, 10 to 29 at 100, seeds 0..2). Here, when the
scale is at least BETA, the producer's steps from the program's float
inputs are copied in fp32 (capture_sign's chains: each step with an fp32
kernel, MAX_STEPS, the program's MAX_WEIGHTS counting the fp32 twins made
so far) and the scale reads the copy: the whole soft-argmax is torch's
function of the float input within fp32 rounding, then the output's grid.
The int8 producer stays for its other readers, or goes. A producer that
cannot be copied (a step without an fp32 kernel, a batch norm not folded
yet, past the budget) is read as before.

Under BETA the producer's rounding moves the expectation by about a step
or two (beta 1: 1.4 to 2.4), and the conv stays on its int8 kernel."""
from __future__ import annotations

from typing import List

from .ir import Graph

BETA = 4.0              # from this scale of the logits up their producer is copied in fp32
REASON = ("the logits of a sharp soft-argmax (softmax(beta * h), beta >= 4), computed in fp32 from the float "
          "inputs: beta multiplies the int8 rounding of h in every probability")


def _beta(g: Graph, chain: List[str]) -> float:
    """The product of the scales by one number on the logits chain."""
    from .soft_argmax import _constant
    beta = 1.0
    for name in chain:
        n = g.node(name)
        if n.op not in ("mul", "div"):
            continue
        c = [i for i in n.inputs if g.node(i).op == "constant"]
        value = abs(float(_constant(g, c[0]).reshape(())))
        beta = beta * value if n.op == "mul" else (beta / value if value else beta)
    return beta


def logits_from_inputs(g: Graph, chain: List[str]) -> None:
    """When chain (the softmax's input's fp32 steps, softmax side first)
    scales by at least BETA and reads an int8 producer that capture_sign
    can copy, the last step reads that copy instead (module doc)."""
    from .capture_sign import MAX_STEPS, MAX_WEIGHTS, MOVE_OPS, _chain, _weights, copied_weights, copy_steps, \
        drop_unread, past_budget_note
    if not chain or _beta(g, chain) < BETA:
        return
    last = g.node(chain[-1])
    producer = [i for i in last.inputs if g.node(i).op != "constant"]
    if len(producer) != 1 or g.node(producer[0]).op == "input" or g.node(producer[0]).attrs.get("fp32"):
        return
    steps = _chain(g, producer[0])
    if not steps or all(s.op in MOVE_OPS for s in steps):
        return
    spent = copied_weights(g)
    if sum(s.op not in MOVE_OPS for s in steps) > MAX_STEPS or spent + _weights(steps) > MAX_WEIGHTS:
        past_budget_note(g, last, steps, spent)
        return
    copies, originals = {}, set()
    copy_steps(g, steps, copies, originals, REASON)
    last.inputs = [copies.get(i, i) for i in last.inputs]
    drop_unread(g, originals)
