"""Float dtype casts in a forward (issue 15): `.float()` / `.to(torch.float32)`
of a float value is the value itself; `.half()` / `.to(torch.float16)` and
`.bfloat16()` / `.to(torch.bfloat16)` round it to that precision.

ptec computes in int8 and fp32, so the graph carries every float value as
float32: a cast to half or bfloat16 is the rounding it makes, one
`elementwise` node (ir.ELEMENTWISE "to_half" / "to_bfloat16": a LUT of the
rounded value on int8, like any function of one tensor), and the layers
after it compute as they do on any float value (torch computes them in
half, rounding each result: differences far below an int8 step). A model
output whose traced dtype is float16 or bfloat16 is marked
attrs["out_dtype"], and the program returns it as Half (ScalarType 5) or
BFloat16 (15), converted from fp32 by _to_dim_order_copy (round to nearest
even). A float64 output of float math (`x.double().exp()`: the chain
computed in float32, capture_plumbing) is marked "float64" the same way and
returned as Double (7), the fp32 value exactly (an integer's `.double()` is
capture_int_casts' exact cast)."""
from __future__ import annotations

from typing import List, Optional

import torch

from .ir import Node

ROUNDING = {torch.float16: "to_half", torch.bfloat16: "to_bfloat16"}
METHODS = {"float": torch.float32, "half": torch.float16, "bfloat16": torch.bfloat16}
OUT_DTYPES = {torch.float16: "float16", torch.bfloat16: "bfloat16", torch.float64: "float64"}


def _float_dtype(fn: torch.fx.Node) -> Optional[torch.dtype]:
    """The float dtype a call casts its input to (x.half(), x.to(torch.float16),
    x.to(dtype=torch.bfloat16), x.type(torch.float32)), else None."""
    if fn.op != "call_method" or not fn.args or not isinstance(fn.args[0], torch.fx.Node):
        return None
    if fn.target in METHODS and len(fn.args) == 1 and not fn.kwargs:
        return METHODS[fn.target]
    if fn.target in ("to", "type") and set(fn.kwargs) <= {"dtype"}:
        rest = list(fn.args[1:]) + list(fn.kwargs.values())
        if len(rest) == 1 and rest[0] in (torch.float32, *ROUNDING):
            return rest[0]
    return None


def float_cast_node(fn: torch.fx.Node, ins: List[str], by_name) -> Optional[Node]:
    """The node of a float cast of a float value; None for anything else
    (an index's `.float()` is capture_indices')."""
    dtype = _float_dtype(fn)
    src = by_name.get(ins[0]) if ins else None
    if dtype is None or src is None or (src.op == "input" and src.attrs.get("dtype")):
        return None
    if dtype is torch.float32 and src.op == "bool_to" and src.attrs.get("dtype") != "float32":
        # (x > 0).long().float(), F.one_hot(i, C).float(): the bool itself cast to float (the
        # integer value is no float value to pass through)
        return Node(fn.name, "bool_to", list(src.inputs), dict(dtype="float32"))
    if dtype is torch.float32:
        return Node(fn.name, "identity", ins[:1])
    return Node(fn.name, "elementwise", ins[:1], dict(fn=ROUNDING[dtype]))


def output_dtype(fn: torch.fx.Node) -> Optional[str]:
    """"float16" / "bfloat16" / "float64" for a model output traced in that dtype, else None."""
    meta = fn.meta.get("tensor_meta") if isinstance(fn, torch.fx.Node) else None
    return OUT_DTYPES.get(getattr(meta, "dtype", None))
