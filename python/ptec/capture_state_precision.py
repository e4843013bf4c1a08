"""A float buffer state whose next value is computed from its last one
(issue 15): each execute's int8 rounding of it is read by the next, so the
error adds up over a stream, where torch's float state carries none.

Probes streamed 30 executes: a GRU cell's kept h (`self.h.copy_(
self.cell(x, self.h))`) on its calibrated int8 grid drifted 7 to 27 output
steps from torch; a float counter (`self.t += 1.0`) saturated at the top of
its calibrated grid and was off by its whole growth after that (the grid
of the counts calibration saw cannot hold a later one).

The loop is the steps on a path from the state to the value written into
it (capture_buffer_state: the `state` node and its `state_write`). When it
holds arithmetic (not only moves of bytes: a ring buffer's slices and cat
copy codes, exactly, and stay int8), the loop runs in fp32 (attrs "fp32",
the portable kernels) and the state is a float32 tensor (attrs
"fp32_state"): no rounding is carried from one execute to the next, a
count stays whole up to 2^24, a running mean or a GRU's h keeps torch's
float value up to fp32 rounding. Readers outside the loop read it
quantized on the grid calibration saw, as before; the steps computing the
loop's other operands from the input (a GRU's input projection) keep
their int8 grids.

A --stateful recurrent layer's state (an nn.GRU's h, an unrolled nn.LSTM's
h and c: capture_modules.Recurrent's state nodes, no buffer of the model)
is taken the same way: its loop is the layer's hidden steps over the
traced sequence (the hidden projection, the gates, the mix into h), which
run in fp32 with h (and c) float32 states; the input projection of the
whole sequence and the layer's output sequence keep their int8 grids.
Kept as int8 on [-1, 1], a GRU's h carried its rounding from execute to
execute: on streams of 24 executes of fresh inputs (inputs no calibration
sample held) a 1- or 2-layer GRU's outputs were 2.9 to 11.1 output steps
from torch float, 1.7 to 2.6 in fp32 (test_stateful_precision). Such a
program is calibrated on its samples as one stream (layer_states;
quantize.calibrate), so its other grids (the outputs, the next layer's
input) hold the values a carried state gives. An nn.LSTM kept as the
ptec::quantized_lstm kernel has no state nodes: its int16 cell state and
int8 h stay the kernel's.

A loop may run through more than one state: `n = self.b + 1; self.b =
self.a; self.a = n` counts through two buffers, each written from the
other. No single state's write is computed from itself there, and both
stayed int8: the count saturated at calibration's range (10.0 where
torch gives 50.0 after 100 executes). The states each feeding another's
write are a graph; each of its cycles (a strongly connected component)
is one loop: its states fp32, the steps on a path from one of them to a
write of another fp32, the accumulator rule applied to the cycle as a
whole. A cycle that only moves values (a swap, a ring of buffers; a
copy `self.b = self.a` is a mul by ones: capture_buffer_state) is exact
on one int8 grid and stays int8.

A loop through torch.where (`self.s = torch.where(x > 0, self.s * 0.95 +
0.05 * x, self.s)`, the state in one branch or both) runs in fp32 too: the
where picks float32 elements (`aten::where.self_out` copies elements of
any one dtype; lowering_bool.fp32_where). It stayed int8 before, its
rounding carried (a fresh 32-execute stream: 2.05 to 4.48 output steps
from torch -> 0.24 to 1.20, test_sign_where_precision.py). A where on a
constant condition only moves values (_moves)."""
from __future__ import annotations

from typing import Dict, List, Set

import numpy as np

from .capture_buffer_state import STATE

# steps that only move or copy codes: a loop of these alone is exact on one int8 grid
MOVES = {"reshape", "identity", "slice", "cat", "permute", "transpose", "expand", "select", "squeeze",
         "unsqueeze", "flip", "roll", "slice_update", "slice_scatter", "index_put", "repeat", "narrow",
         "contiguous", "clone", "view", "gather", "copy"}

FP32_STATE = ("a buffer state's loop (its next value computed from its last) runs in fp32: an int8 "
              "rounding carried from execute to execute adds up over a stream")


def _moves(g, n) -> bool:
    """Whether n only moves codes: a move op, a where on a constant
    condition, a matmul by a constant 0/1 matrix with at most one 1 per
    output (a slice write's scatter: capture_item_assignment)."""
    if n.op in MOVES:
        return True
    consts = [np.asarray(g.node(i).attrs["value"]) for i in n.inputs if g.node(i).op == "constant"]
    if n.op == "where":
        return len(consts) >= 1 and g.node(n.inputs[0]).op == "constant"
    if n.op == "matmul" and len(consts) == 1 and g.node(n.inputs[1]).op == "constant":
        m = consts[0]
        return m.ndim == 2 and bool(np.isin(m, (0, 1)).all()) and int((m != 0).sum(0).max(initial=0)) <= 1
    return False


def _after(g, state: str) -> List[str]:
    """The nodes computed from state, in graph order (its writes not)."""
    after: Set[str] = set()
    todo = [state]
    while todo:
        for u in g.users(todo.pop()):
            if u.name not in after and u.op != "state_write":
                after.add(u.name)
                todo.append(u.name)
    return [n.name for n in g.nodes if n.name in after]


def _accumulates(g, state: str, loop: List[str]) -> bool:
    """Whether the loop is one add / sub of the state (through moves) and
    a value not computed from it: `self.t += 1.0`, `self.t = self.t + dt`,
    `self.total += x`: a count or a sum, which grows without a bound."""
    steps = [k for k in loop if not _moves(g, g.node(k))]
    if len(steps) != 1 or g.node(steps[0]).op not in ("add", "sub"):
        return False
    n = g.node(steps[0])
    from_state = [i for i in n.inputs if i == state or i in loop]
    return len(from_state) == 1 and (n.op == "add" or n.inputs[0] in from_state)


def _loop(g, state: str, value: str) -> List[str]:
    """Nodes on a path from state to value (value included, state not)."""
    after = set(_after(g, state))
    before: Set[str] = set()
    todo = [value]
    while todo:
        n = g.node(todo.pop())
        if n.name in before:
            continue
        before.add(n.name)
        todo.extend(i for i in n.inputs if i != state)
    return [n.name for n in g.nodes if n.name in after and n.name in before]


def _ancestors(g, value: str) -> Set[str]:
    """The nodes value is computed from (value included)."""
    seen: Set[str] = set()
    todo = [value]
    while todo:
        k = todo.pop()
        if k not in seen:
            seen.add(k)
            todo.extend(g.node(k).inputs)
    return seen


def _cycles(g, written: Dict[str, str]) -> List[List[str]]:
    """The strongly connected components of more than one state in the
    graph `s feeds t` (t's written value is computed from s), each in
    graph order: the loops through several states (module doc)."""
    feeds = {t: [s for s in written if s in _ancestors(g, v)] for t, v in written.items()}
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    found: List[List[str]] = []

    def visit(t: str) -> None:      # Tarjan's algorithm (edges taken backwards: the same components)
        index[t] = low[t] = len(index)
        stack.append(t)
        for s in feeds[t]:
            if s not in index:
                visit(s)
                low[t] = min(low[t], low[s])
            elif s in stack:
                low[t] = min(low[t], index[s])
        if low[t] == index[t]:
            part = []
            while True:
                part.append(stack.pop())
                if part[-1] == t:
                    break
            if len(part) > 1:
                found.append([n.name for n in g.nodes if n.name in part])

    for t in written:
        if t not in index:
            visit(t)
    return found


def _cycle_loops(g, written: Dict[str, str], marked: Dict[str, List[str]]) -> None:
    """Marks each cycle of states that computes (module doc) as one loop;
    adds its states to marked."""
    for cycle in _cycles(g, written):
        loop = [n.name for n in g.nodes if any(n.name in _loop(g, s, written[t]) for s in cycle for t in cycle)]
        if all(_moves(g, g.node(k)) or _times_one(g, g.node(k)) for k in loop):
            continue
        steps = [k for k in loop if not _times_one(g, g.node(k))]     # a copy between the cycle's states moves
        if _cycle_accumulates(g, cycle, steps):
            # a count through the cycle: its readers compute on its fp32 value (as one state's)
            loop = loop + [k for s in cycle for k in _after(g, s) if k not in loop]
            loop = [n.name for n in g.nodes if n.name in loop]
        for s in cycle:
            g.node(s).attrs["fp32_state"] = True
            marked[s] = loop
        for k in loop:
            g.node(k).attrs.setdefault("fp32", FP32_STATE)


def _cycle_accumulates(g, cycle: List[str], steps: List[str]) -> bool:
    """_accumulates of a cycle of states: one add / sub of a value
    carried around it and one not computed from it."""
    computing = [k for k in steps if not _moves(g, g.node(k))]
    if len(computing) != 1 or g.node(computing[0]).op not in ("add", "sub"):
        return False
    n = g.node(computing[0])
    from_cycle = [i for i in n.inputs if i in cycle or i in steps]
    return len(from_cycle) == 1 and (n.op == "add" or n.inputs[0] in from_cycle)


def layer_states(g) -> Dict[str, str]:
    """{state: the value written into it} of the --stateful recurrent
    layers (state nodes of no buffer of the model: module doc)."""
    return {w.inputs[0]: w.inputs[1] for w in g.nodes if w.op == "state_write" and not w.attrs.get(STATE)}


def fp32_state_loops(g) -> Dict[str, List[str]]:
    """Marks each float buffer state, and each --stateful layer's state,
    whose loop computes (module doc): the state attrs fp32_state, the
    loop's nodes attrs fp32. Returns {state: loop nodes} of those marked."""
    marked: Dict[str, List[str]] = {}
    written = {}
    writes = [n for n in g.nodes if n.op == "state_write"]     # a buffer's (STATE) or a --stateful layer's
    for w in writes:
        if not g.node(w.inputs[0]).attrs.get("dtype"):
            written[w.inputs[0]] = w.inputs[1]
    _cycle_loops(g, written, marked)
    for w in writes:
        state, value = w.inputs
        s = g.node(state)
        if s.attrs.get("dtype"):        # an integer / bool buffer: exact already (capture_integer_states)
            continue
        if state in marked:             # on a cycle through other states, marked as one loop
            continue
        loop = _loop(g, state, value)
        if not loop or all(_moves(g, g.node(k)) for k in loop):
            continue
        s.attrs["fp32_state"] = True
        if _accumulates(g, state, loop):
            # a sum that grows without a bound (a count): no calibrated grid holds its later
            # values, so everything reading it, to the outputs, computes on its fp32 value
            loop = loop + [k for k in _after(g, state) if k not in loop]
        for k in loop:
            g.node(k).attrs.setdefault("fp32", FP32_STATE)
        marked[state] = loop
    for loop in marked.values():
        for k in _input_terms(g, loop):
            g.node(k).attrs.setdefault("fp32", FP32_INPUT_TERM)
    return marked


FP32_INPUT_TERM = ("a float input's term of a buffer state's fp32 loop (`0.1 * x`), computed in fp32 from the "
                   "input's exact value: on its int8 grid its rounding was carried and multiplied by the loop's gain")
# steps between a float input and the loop that change it by constants only (a layer keeps its int8 grid)
TERM_STEPS = ("reshape", "permute", "add", "sub", "mul", "div", "neg")


def _input_terms(g, loop: List[str]) -> List[str]:
    """The steps computing a loop node's operand from a float program input
    by constants only (`0.1 * x`, `(x - 0.5) / 2`, x viewed), ending at the
    input: marked fp32 they read its exact value, where the operand's int8
    grid (and the input's before it) rounded every execute's term, and the
    loop carried it (`a = 0.95 b + 0.1 x` through two buffers: 1.20 to
    3.48 output steps over seeds 0..7). A step another reader shares stays
    as it is."""
    found: List[str] = []
    for k in loop:
        for i in g.node(k).inputs:
            chain, n = [], g.node(i)
            while i not in loop and n.op in TERM_STEPS and not n.attrs.get("fp32") and not n.attrs.get("act") \
                    and len(g.users(n.name)) == 1 and n.name not in g.outputs:
                computed = [j for j in n.inputs if g.node(j).op != "constant"]
                if len(computed) != 1:
                    break
                chain.append(n.name)
                n = g.node(computed[0])
            if chain and n.op == "input" and not n.attrs.get("dtype") and not n.attrs.get("in_dtype"):
                found += [c for c in chain if c not in found]
    return found


def replays(g, written: Dict[str, str]) -> bool:
    """Whether calibration plays its samples a second time, each state
    carried on from the first pass (quantize.calibrate): when every value
    written to a state only moves the states' values and the inputs' (a
    ring buffer of past frames, the last input kept), and there is one. Such a buffer fills over its first executes:
    one pass sees the initial zeros in most windows and as few full ones as
    samples past its depth (12 samples, 10 frames: 3), and none straddling
    the last sample and the first; the readers' grids (the conv over it)
    were that narrow, and a stream of those same frames in their next
    windows saturated them (26.4 output steps, issue 15). The second pass
    sees a full window at every sample. A loop that computes (a count, a
    GRU's h, `self.a, self.b = self.b, self.a + x` through two states) is
    not replayed: its values past the stream are no sample's."""
    return bool(written) and all(_moves(g, g.node(k)) or _times_one(g, g.node(k)) for v in written.values()
                                 for s in written for k in _loop(g, s, v))


def _times_one(g, n) -> bool:
    """A mul by a constant all ones: the copy of a state's old value where
    its memory is shared (`self.x2 = self.x1`, capture_buffer_state)."""
    return n.op == "mul" and any(g.node(i).op == "constant" and bool((np.asarray(g.node(i).attrs["value"]) == 1).all())
                                 for i in n.inputs)
