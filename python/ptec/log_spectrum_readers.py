"""A spectrum (or the steps before a magnitude) that other steps read too:
`S = rfft(frames); return log(S.abs() + 1e-3), S.real`, or a denoiser's
`S * sigmoid(lin(log(S.abs() + 1e-3)))`. magnitude_logs runs the chain from
the float input to the log in fp32 only when each step of it is read by the
chain alone, so a second reader of the spectrum turned it off: the log read
the magnitude on its int8 grid (55-105 output steps off; the denoiser's
irfft 7-11).

Here each step of the chain that another step reads (or that the program
returns), and each chain step before it, gets an fp32 copy (`<name>__fp32`)
that the chain reads; the step itself stays as it was for its other
readers, which get what they had before (as capture_sign.exact_operands
keeps an fp32 copy of a compared operand beside its int8 steps). The other
steps of the chain, read by it alone, are switched to fp32 in place. A
slice or view that nothing reads (`S.imag` computed and dropped) does not
count as a reader: it is removed. input_compression does the same for the
steps of a filterbank's log chain (`y = fb(x); cat([log(|y| + eps), y])`)."""
from __future__ import annotations

import copy
from typing import Dict, List, Set

from .ir import Graph, Node

VIEWS = ("slice", "identity", "reshape", "permute", "select")


def dead(g: Graph, n: Node) -> bool:
    """A view that nothing reads and the program does not return."""
    return n.op in VIEWS and n.name not in g.outputs and not g.users(n.name)


def shared(g: Graph, seen: Set[str], chain: Set[str]) -> Set[str]:
    """The steps among `seen` that a step outside `chain` reads or that the program returns."""
    return {name for name in seen if name in g.outputs or any(u.name not in chain for u in g.users(name))}


def split_shared(g: Graph, steps: List[Node], chain: Set[str], copies: Dict[str, str]) -> List[Node]:
    """The chain's upstream `steps` (graph order) with an fp32 copy of each
    step other steps read and of each step before one (module doc): the
    chain's steps (copies and unshared steps) to mark fp32. The readers in
    `chain` (the magnitude, lead steps) read the copies; `copies` (original
    -> copy) is shared across chains so a step is copied once."""
    names = {n.name for n in steps}
    for n in steps:                           # a chain's dead views go (they would read the fp32 steps)
        for u in g.users(n.name):
            if u.name not in chain and dead(g, u):
                g.remove(u.name)
    keep = shared(g, names, chain | names)
    stack = list(keep)
    while stack:                              # and every chain step before a shared one
        for i in g.node(stack.pop()).inputs:
            if i in names and i not in keep:
                keep.add(i)
                stack.append(i)
    out = []
    for n in steps:
        if n.name in keep:
            if n.name not in copies:
                twin = Node(f"{n.name}__fp32", n.op, [copies.get(i, i) for i in n.inputs],
                            copy.deepcopy(n.attrs), n.shape, None, n.written)
                g.nodes.insert(g.nodes.index(n) + 1, twin)
                copies[n.name] = twin.name
            out.append(g.node(copies[n.name]))
        else:
            n.inputs = [copies.get(i, i) for i in n.inputs]
            out.append(n)
    for name in chain - names:                # the magnitude and the steps after it
        r = g.node(name)
        r.inputs = [copies.get(i, i) if i in names else i for i in r.inputs]
    return out
