"""torch.sign / torch.sgn / Tensor.sign / Tensor.sgn of a program's own
float32 input, by two comparisons (probe 8):

    sign(x) = sign(float(x > 0) - float(x < 0))

two `compare` nodes against 0 (each a bool; a comparison of a program's
float input reads the float value itself, `aten::gt.Scalar_out`: exact),
each `bool_to` float32, their difference (-1, 0 or 1 within a step of its
grid) and the usual one-input `sign` of it, so the result is the same
whole-valued `sign` node its readers and the quantizer already know
(whole-number grids for comparisons and ids). The table alone read the
input's int8 code: a float input within half an input step of 0 gave 0
where torch gives +-1 (soft_margin_loss(x, y.sign()): 56 output steps off).

Not where the sign reaches a `.view(dtype)` (capture_dtype_view runs its
producers on float32 kernels, `aten::sign.out` of the input's value, which
is exact already). A program input or a selection / view of one
(`x[..., :3]`, `x[:, 2:].sgn()`, `x.flip(1).t()`: _input_view), whose
int8 codes gave 0 the same way (116 output steps): the view's steps run
in fp32 for the comparisons (exact_operands below). A value computed in
int8 has its codes compared by the table itself (the same answer), and
one computed in fp32 runs `aten::sign.out` on its float value. Complex and integer inputs are not
taken here (capture_complex / capture_int_math).

The sign of a difference, `torch.sign(a - b)` (`(a - b).sign()`,
`torch.sub(a, b)`, a number on either side) of float32 values: the
difference computed in int8 rounds onto its own grid, whose step is set by
the differences calibration saw, so a difference within half that step of
0 became 0 where torch gives +-1 (issue 15 probe: 155 output steps, two
inputs 1e-3 apart; 106 for two linear layers' near outputs). It is the
same two comparisons of the operands themselves, `(a > b) - (a < b)`: of
program inputs their float values (exact), of int8 values the two
dequantized values or their codes on a shared grid (torch's answer for the
program's values); the subtraction stays for its other readers.

Those int8 values are rounded: two selections of an input 1e-3 apart
(`sign(x[:, 0] - x[:, 1])`) had equal codes, two linear layers' outputs
1e-3 apart (`sign(self.fc1(x) - self.fc2(x))`) each its own rounding,
larger than their difference (104 and 204 output steps, issue 15). So
after capture, exact_operands gives the comparisons of a sign fp32
operands: the steps computing each operand from the program's float
inputs are copied, marked fp32 (the portable kernels: a few slices and
views, or a short chain of layers), and the comparisons read the copies,
torch's values up to fp32 rounding; the int8 steps stay for their other
readers (or go, read by nothing). Bounded: at most MAX_STEPS computing
steps for one sign and MAX_WEIGHTS weights for the program (their fp32
copies cost flash and time), each step one with an fp32 kernel here; else the operands
compare as the program holds them, as before. The weight budget is the
program's, shared by its signs in graph order (first come, first served:
a sign whose chains would take it past MAX_WEIGHTS keeps its int8
operands), so many signs cannot each copy 16 KB of fp32 weights.

Under int8_io the program's inputs arrive as int8 codes: a sign whose
operands are only selections or views of an input (`sign(x[:, :4])`)
would compare the same codes in fp32 (the same answer, 5,208 -> 5,592 B
of program for nothing), so it is left as it was. Operands computed by
layers (`sign(fc1(x) - fc2(x))`) still gain: the copies read the int8
input's value but skip each layer's output rounding (NearLayers under
int8_io, seeds 0..2: 204 output steps -> 0.90 to 0.97).

The sign of one computed value, `torch.sign(self.fc(x))` (the int8 table
read its codes: a value within half its step of 0 gave 0 or flipped,
127.5 output steps), becomes the same two comparisons with 0 when its
chain fits that budget (_single_signs), and a comparison of a layer's
output with a number, `(self.fc(x) > 0).float()` (255 output steps), has
its operand copied the same way (_single_compares); torch.heaviside of one
computed value likewise (capture_step_functions).

MAX_STEPS is 16 (8 until session 24): the weights, each copied in fp32,
are the cost MAX_WEIGHTS bounds; the steps bound only the time of the
weightless ones, and the sign of an 8-layer MLP's output with ReLUs
between (15 steps, 512 weights) was 127.5 output steps off at 8. Past
either bound the sign or comparison stays on int8 grids and the compile
log says so once per call (past_budget_note)."""
from __future__ import annotations

import copy
import operator
from typing import List, Optional

import numpy as np
import torch

from .capture_steep_gates import GATE, GATE_FP32, number_steps_only, steep_gates
from .capture_step_functions import single_heavisides
from .ir import Node, origin

_TARGETS = (torch.sign, torch.sgn, "sign", "sgn")
_SUBS = (operator.sub, torch.sub, "sub")

# attrs key of the comparisons a sign became: exact_operands runs their operands' steps in fp32
OPERANDS = "sign_operands"
OPERANDS_FP32 = ("an operand of a sign's comparison, computed in fp32 from the program's float inputs: "
                 "an int8 grid makes values closer than its step equal, or orders them otherwise (issue 15)")
# x[...] and the view methods: a selection or view of a program input (_input_view)
_VIEW_METHODS = ("view", "reshape", "narrow", "select", "squeeze", "unsqueeze", "flatten", "permute",
                 "transpose", "t", "contiguous", "clone", "expand", "flip", "movedim", "unflatten")
_VIEW_FUNCTIONS = (operator.getitem, torch.narrow, torch.select, torch.squeeze, torch.unsqueeze, torch.flatten,
                   torch.reshape, torch.permute, torch.transpose, torch.t, torch.flip, torch.movedim, torch.clone)
# IR steps that only select or move elements (exact in fp32 as in int8)
MOVE_OPS = {"reshape", "identity", "slice", "permute", "transpose", "expand", "select", "squeeze", "unsqueeze",
            "flip", "roll", "repeat", "narrow", "contiguous", "clone", "view"}
# IR steps with a portable fp32 kernel that an operand's chain may hold (one fp32 copy of each)
COMPUTING_OPS = {"linear", "conv2d", "add", "sub", "mul", "div", "clamp", "sigmoid", "tanh", "cat", "mean"}
MAX_STEPS = 16              # computing steps in one sign's operand chains (the weights bound the cost)
MAX_WEIGHTS = 4096          # weights all the copied layers hold, per program (16 KB more of fp32 constants)


def _reaches_dtype_view(fn: torch.fx.Node) -> bool:
    """Whether a reader of fn, or of its readers, is x.view(dtype)."""
    from .capture_dtype_view import _target_dtype
    seen, todo = set(), list(fn.users)
    while todo:
        u = todo.pop()
        if u in seen:
            continue
        seen.add(u)
        if u.op == "call_method" and u.target == "view" and _target_dtype(u) is not None:
            return True
        todo.extend(u.users)
    return False


def _is_sign_call(fn: torch.fx.Node) -> bool:
    """fn is torch.sign / sgn (or the method) of one tensor, no keywords."""
    if fn.op not in ("call_function", "call_method") or fn.kwargs or len(fn.args) != 1:
        return False
    try:
        return fn.target in _TARGETS
    except TypeError:       # an unhashable target
        return False


def _input_view(x: torch.fx.Node) -> bool:
    """x is a float32 program input, or a selection / view of one
    (`x[:, 0]`, `x[..., :3]`, `x.flip(1)`, `x.t()`): float32 at each step,
    through basic indexing and view methods only."""
    while True:
        if not _float32(x):
            return False
        if x.op == "placeholder":
            return True
        try:
            view = (x.op == "call_function" and x.target in _VIEW_FUNCTIONS) or \
                (x.op == "call_method" and x.target in _VIEW_METHODS)
        except TypeError:
            return False
        if not view or not x.args or not isinstance(x.args[0], torch.fx.Node):
            return False
        rest = list(x.args[1:]) + list(x.kwargs.values())
        if any(isinstance(a, torch.fx.Node) or (isinstance(a, (tuple, list)) and any(isinstance(i, torch.fx.Node)
                                                                                   for i in a)) for a in rest):
            return False            # an index or size read from the data: not a plain selection
        x = x.args[0]


def sign_nodes(fn: torch.fx.Node, ins: List[str]) -> Optional[List[Node]]:
    """The comparison form of a float32 program input's sign, else None."""
    if not _is_sign_call(fn):
        return None
    x = fn.args[0]
    if not isinstance(x, torch.fx.Node) or not _input_view(x) or _reaches_dtype_view(fn):
        return None
    n = fn.name
    return [Node(f"{n}__pos", "compare", [ins[0]], dict(kind="gt", scalar=0.0, **{OPERANDS: True})),
            Node(f"{n}__neg", "compare", [ins[0]], dict(kind="lt", scalar=0.0, **{OPERANDS: True})),
            Node(f"{n}__posf", "bool_to", [f"{n}__pos"], dict(dtype="float32")),
            Node(f"{n}__negf", "bool_to", [f"{n}__neg"], dict(dtype="float32")),
            Node(f"{n}__diff", "sub", [f"{n}__posf", f"{n}__negf"]),
            Node(n, "elementwise", [f"{n}__diff"], dict(fn="sign"))]


def _float32(a) -> bool:
    meta = a.meta.get("tensor_meta") if isinstance(a, torch.fx.Node) else None
    return getattr(meta, "dtype", None) == torch.float32


def difference_sign_nodes(fn: torch.fx.Node) -> Optional[List[Node]]:
    """sign(a - b) of float32 values as (a > b) - (a < b) (module doc), else None."""
    if not _is_sign_call(fn):
        return None
    d = fn.args[0]
    if not isinstance(d, torch.fx.Node) or d.op not in ("call_function", "call_method") or d.kwargs \
            or len(d.args) != 2 or not _float32(d) or _reaches_dtype_view(fn):
        return None
    try:
        if d.target not in _SUBS:
            return None
    except TypeError:
        return None
    a, b = d.args
    nodes = [x for x in (a, b) if isinstance(x, torch.fx.Node)]
    numbers = [x for x in (a, b) if isinstance(x, (int, float)) and not isinstance(x, bool)]
    if len(nodes) + len(numbers) != 2 or not nodes or not all(_float32(x) for x in nodes):
        return None
    n = fn.name
    if len(nodes) == 2:
        pos = Node(f"{n}__pos", "compare", [a.name, b.name], dict(kind="gt"))
        neg = Node(f"{n}__neg", "compare", [a.name, b.name], dict(kind="lt"))
    elif isinstance(a, torch.fx.Node):          # a - c: a > c, a < c
        pos = Node(f"{n}__pos", "compare", [a.name], dict(kind="gt", scalar=float(b)))
        neg = Node(f"{n}__neg", "compare", [a.name], dict(kind="lt", scalar=float(b)))
    else:                                       # c - b: b < c, b > c
        pos = Node(f"{n}__pos", "compare", [b.name], dict(kind="lt", scalar=float(a)))
        neg = Node(f"{n}__neg", "compare", [b.name], dict(kind="gt", scalar=float(a)))
    pos.attrs[OPERANDS] = neg.attrs[OPERANDS] = True        # their operands fp32 where they can be (exact_operands)
    return [pos, neg,
            Node(f"{n}__posf", "bool_to", [f"{n}__pos"], dict(dtype="float32")),
            Node(f"{n}__negf", "bool_to", [f"{n}__neg"], dict(dtype="float32")),
            Node(f"{n}__diff", "sub", [f"{n}__posf", f"{n}__negf"]),
            Node(n, "elementwise", [f"{n}__diff"], dict(fn="sign"))]


def _chain(g, name: str, more=()):
    """The steps computing `name` from the program's float inputs and
    constants, in graph order, when each has an fp32 kernel (MOVE_OPS,
    COMPUTING_OPS, an elementwise function's float32 kernel, the ops
    `more` a comparison's OPERANDS names); else None. Empty for an input
    or a constant itself."""
    from .ir import float_math_name
    seen, todo = set(), [name]
    while todo:
        n = g.node(todo.pop())
        if n.name in seen or n.op == "constant":
            continue
        if n.op == "input":
            if n.attrs.get("dtype"):        # an integer / bool input
                return None
            continue
        if n.attrs.get("dtype") or n.attrs.get("integer") or not (
                n.op in MOVE_OPS or n.op in COMPUTING_OPS or n.op in more or float_math_name(n) is not None):
            return None
        seen.add(n.name)
        todo.extend(n.inputs)
    return [n for n in g.nodes if n.name in seen]


def _weights(steps) -> int:
    return sum(int(np.size(n.attrs["weight"])) for n in steps if n.attrs.get("weight") is not None)


def _within_budget(steps, n=None, g=None) -> bool:
    """At most MAX_STEPS computing steps holding at most MAX_WEIGHTS weights
    (one chain's bound; exact_operands also counts the program's weights);
    past it, a note on node n (past_budget_note)."""
    ok = sum(s.op not in MOVE_OPS for s in steps) <= MAX_STEPS and _weights(steps) <= MAX_WEIGHTS
    if not ok and n is not None:
        past_budget_note(g, n, steps)
    return ok


def past_budget_note(g, n, steps, spent: int = 0) -> None:
    """The compile log's word on a sign / comparison left on int8 grids
    because its operand's fp32 copy is past the budget (module doc); once
    per call (a sign's two comparisons say it once)."""
    count, weights = sum(s.op not in MOVE_OPS for s in steps), _weights(steps)
    held = f" ({spent:,} already copied for other signs)" if spent else ""
    note = (f"{origin(n)}: compared on int8 grids (a value within half its step of the threshold may give the "
            f"other answer): the fp32 copy of its operand would take {count} steps and {weights:,} weights{held}, "
            f"past the budget of {MAX_STEPS} steps and {MAX_WEIGHTS:,} weights a program")
    if g is not None and any(note in (m.attrs.get("note") or "") for m in g.nodes):
        return
    n.attrs["note"] = f"{n.attrs['note']}; {note}" if n.attrs.get("note") else note


def copyable_operand(g, n):
    """The computed float operand of a one-input table n whose chain this
    module can copy in fp32 within its budget, else None (a float input, a
    constant, a value already fp32 or integer, a chain of moves only)."""
    if len(n.inputs) != 1 or n.attrs.get("fp32") or n.attrs.get("dtype"):
        return None
    x = g.node(n.inputs[0])
    if x.op in ("input", "constant") or x.attrs.get("fp32"):
        return None
    chain = _chain(g, x.name)
    if not chain or all(s.op in MOVE_OPS for s in chain) or not _within_budget(chain, n, g):
        return None
    return x

def _single_signs(g) -> None:
    """The sign of one computed float value, `torch.sign(self.fc(x))`, an
    int8 table of the value's codes until now (a value within half its
    step of 0 read 0, or the other side's sign), as the comparison form
    sign_nodes gives an input's: x > 0 and x < 0 with OPERANDS, so
    exact_operands computes x in fp32 for them. Only where that copy can
    be made (_chain, _within_budget): else the table stays, as before. A
    value already fp32 (aten::sign.out on it) or integer is left."""
    for n in [n for n in g.nodes if n.op == "elementwise" and n.attrs.get("fn") == "sign"]:
        x = copyable_operand(g, n)
        if x is None:
            continue
        name, at = n.name, g.nodes.index(n)
        made = [Node(f"{name}__pos", "compare", [x.name], dict(kind="gt", scalar=0.0, **{OPERANDS: True})),
                Node(f"{name}__neg", "compare", [x.name], dict(kind="lt", scalar=0.0, **{OPERANDS: True})),
                Node(f"{name}__posf", "bool_to", [f"{name}__pos"], dict(dtype="float32")),
                Node(f"{name}__negf", "bool_to", [f"{name}__neg"], dict(dtype="float32")),
                Node(f"{name}__diff", "sub", [f"{name}__posf", f"{name}__negf"])]
        for m in made:
            m.attrs["source"] = n.attrs.get("source")
            m.written = n.written
        g.nodes[at:at] = made
        n.inputs = [f"{name}__diff"]


def _single_compares(g) -> None:
    """A comparison of a layer's output with a number,
    `(self.fc(x) > 0).float()`: the same int8 rounding (a value within half
    its step of the number on the wrong side, or equal to it), so the same
    fp32 copy of its short chain where it can be made (OPERANDS, read by
    exact_operands) and the chain holds a layer with weights (linear,
    conv2d); else as before (element-wise steps of the inputs compare on
    their int8 grids, as the int8-only programs of test_bool keep)."""
    for n in [n for n in g.nodes if n.op == "compare" and len(n.inputs) == 1 and "scalar" in n.attrs]:
        x = g.node(n.inputs[0])
        if n.attrs.get(OPERANDS) or x.op in ("input", "constant") or x.attrs.get("fp32"):
            continue
        chain = _chain(g, x.name)
        if chain and any(s.attrs.get("weight") is not None for s in chain) and _within_budget(chain, n, g):
            n.attrs[OPERANDS] = True


def exact_operands(g, int8_io: bool = False) -> None:
    """The operands of a sign's comparisons (attrs OPERANDS) computed in
    fp32 from the program's float inputs (module doc): a copy of each one's
    steps (_chain) marked fp32, which the comparisons read; the int8 steps
    stay for their other readers and go when they have none. An operand
    whose chain is too long or has a step without an fp32 kernel is
    compared as the program holds it, as before. The weights copied are
    counted per program (module doc); under int8_io a sign of an input's
    selections only is left as it was."""
    single_heavisides(g)             # heaviside(fc(x), v): the same comparisons (capture_step_functions)
    steep_gates(g)                   # clamp(fc(x) * 1e6, 0, 1): gate and operand in fp32 (capture_steep_gates)
    _single_signs(g)
    _single_compares(g)
    copies = {}                      # original step -> its fp32 copy
    originals = set()
    spent = 0                        # weights copied so far, all signs (MAX_WEIGHTS is the program's)
    for c in [n for n in g.nodes if (n.op == "compare" and n.attrs.get(OPERANDS)) or n.attrs.get(GATE)]:
        gate = c.attrs.pop(GATE, None)
        # OPERANDS True, or the ops beside COMPUTING_OPS its chains may hold (capture_pool_peaks' max pool)
        more = c.attrs.get(OPERANDS) if isinstance(c.attrs.get(OPERANDS), tuple) else ()
        chains = [_chain(g, i, more) for i in c.inputs]
        if any(ch is None for ch in chains) or not any(chains):
            continue
        names = {s.name for ch in chains for s in ch}          # (a step both operands share once)
        steps = [n for n in g.nodes if n.name in names]
        if int8_io and (all(n.op in MOVE_OPS for n in steps) or (gate and number_steps_only(g, steps))):
            continue                 # the int8 input's codes moved: nothing more exact to compare
        new = _weights([n for n in steps if n.name not in copies])
        if sum(n.op not in MOVE_OPS for n in steps) > MAX_STEPS or spent + new > MAX_WEIGHTS:
            past_budget_note(g, c, steps, spent)
            continue
        spent += new
        copy_steps(g, steps, copies, originals, OPERANDS_FP32)
        c.inputs = [copies.get(i, i) for i in c.inputs]
        if gate:
            c.attrs["fp32"] = GATE_FP32     # the gate itself on its fp32 operand (capture_steep_gates)
    drop_unread(g, originals)


def copy_steps(g, steps, copies, originals, reason: str) -> None:
    """An fp32 twin (`<name>__fp32`, attrs["fp32"] = reason) of each of
    steps after it, reading the twins of its inputs; copies maps each
    step to its twin (a twin already in the graph is read again), originals
    gets the steps copied."""
    for step in steps:
        if step.name in copies:
            continue
        name = f"{step.name}__fp32"
        if name not in {n.name for n in g.nodes}:
            twin = Node(name, step.op, [copies.get(i, i) for i in step.inputs],
                        copy.deepcopy(step.attrs), step.shape, None, step.written)
            twin.attrs["fp32"] = reason
            g.nodes.insert(g.nodes.index(step) + 1, twin)
        copies[step.name] = name
        originals.add(step.name)


def copied_weights(g) -> int:
    """The weights of the program's fp32 twins so far (MAX_WEIGHTS is the program's)."""
    return _weights([n for n in g.nodes if n.name.endswith("__fp32") and n.attrs.get("fp32")])


def drop_unread(g, originals) -> None:
    """Removes the int8 steps of originals no longer read (and their own constants)."""
    while True:
        unread = [k for k in originals if k not in g.outputs and not g.users(k)]
        if not unread:
            return
        for k in unread:
            originals.update(i for i in g.node(k).inputs if g.node(i).op == "constant")    # its own constants
            g.remove(k)
            originals.discard(k)
