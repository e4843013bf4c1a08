"""torch.heaviside of one computed float value, `torch.heaviside(self.fc(x),
v)` with v a number or a one-element tensor (issue 15): capture_elementwise_math
spells it as a 256-entry table of the value's int8 codes, so a value
within half its step of 0 read as 0 (v) or as the other side (measured
128 output steps from torch for v = 0.5, 191 for v = 0.25; an output
grid of [0, 1]). It becomes the comparisons the tensor form already has,

    heaviside(x, v) = where(x == 0, v, float(x > 0))

with capture_sign's OPERANDS on both comparisons, so exact_operands
computes x once more in fp32 from the program's float inputs for them
(the same chains and budget as a sign's: capture_sign._chain,
_within_budget, the program's MAX_WEIGHTS). Where that copy cannot be
made (a step without an fp32 kernel, a chain past the budget, only moves
of an input, an fp32 or integer value, a v that is not finite) the table
stays, as before.

The other step functions of a computed value need nothing here:
`(fc(x) > 0).float()`, `(fc(x) >= 0)`, `fc(x).gt(0).float()`,
`torch.where(fc(x) > 0, 1., 0.)` and `torch.signbit(fc(x))` are one
comparison with a number (capture_sign._single_compares copies its
operand; measured 0 output steps, seeds 0..2). `torch.clamp(fc(x) * 1e6,
0, 1)` is a steep ramp, a step function in effect (a gain of 1e6 on the
value's int8 rounding, 255 output steps): capture_steep_gates computes it
in fp32 with its operand."""
from __future__ import annotations

import math

import numpy as np

from .ir import Node


def _value(n: Node):
    """heaviside's v of an int8 table node (capture_elementwise_math's
    attrs "values"), a finite float, else None."""
    if n.op != "elementwise" or n.attrs.get("fn") != "math" or n.attrs.get("name") != "heaviside":
        return None
    v = n.attrs.get("values")
    try:
        v = float(np.asarray(v, np.float64).reshape(()))
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def single_heavisides(g) -> None:
    """Each heaviside table of a computed float value whose chain
    capture_sign can copy in fp32, as where(x == 0, v, float(x > 0)) with
    both comparisons' operand copied (module doc)."""
    from .capture_sign import OPERANDS, copyable_operand
    for n in [n for n in g.nodes if _value(n) is not None]:
        x = copyable_operand(g, n)
        if x is None:
            continue
        name, at, v = n.name, g.nodes.index(n), _value(n)
        made = [Node(f"{name}__pos", "compare", [x.name], dict(kind="gt", scalar=0.0, **{OPERANDS: True})),
                Node(f"{name}__zero", "compare", [x.name], dict(kind="eq", scalar=0.0, **{OPERANDS: True})),
                Node(f"{name}__posf", "bool_to", [f"{name}__pos"], dict(dtype="float32")),
                Node(f"{name}__v", "constant", [], dict(value=np.asarray(v, np.float32)))]
        for m in made:
            m.attrs["source"] = n.attrs.get("source")
            m.written = n.written
        g.nodes[at:at] = made
        n.op, n.inputs = "where", [f"{name}__zero", f"{name}__v", f"{name}__posf"]
        n.attrs = {k: n.attrs[k] for k in ("source",) if k in n.attrs}
