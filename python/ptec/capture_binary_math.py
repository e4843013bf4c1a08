"""torch's float functions of two tensors (issue 15): `x ** y`,
torch.pow(x, y), torch.atan2, torch.hypot, torch.fmod / torch.remainder /
`%` of two tensors, torch.copysign and torch.nextafter (capture_float_bits), each one `binary_math` node (attrs
fn: the ir.BINARY_MATH name). A LUT takes one input, so no int8 lowering
exists for them: they run in fp32 on portable kernels, the int8 values
around them dequantized before and quantized after, and compile reports
each as an fp32 layer. A Python number operand is not this path
(capture_calls' LUTs take `x ** c`, `c ** x`, `x % c`)."""
from __future__ import annotations

import operator
from typing import List, Optional

import torch

from .ir import Node

TARGETS = {
    operator.pow: "pow", torch.pow: "pow", "pow": "pow",
    torch.atan2: "atan2", "atan2": "atan2",
    torch.hypot: "hypot", "hypot": "hypot",
    torch.fmod: "fmod", "fmod": "fmod",
    operator.mod: "remainder", torch.remainder: "remainder", "remainder": "remainder",
    torch.copysign: "copysign", "copysign": "copysign",
    # the next float32 after x towards y: a bit-level result (capture_float_bits)
    torch.nextafter: "nextafter", "nextafter": "nextafter",
}
for _alias, _name in (("arctan2", "atan2"),):
    if hasattr(torch, _alias):
        TARGETS[getattr(torch, _alias)] = _name
        TARGETS[_alias] = _name


def binary_math_node(fn: torch.fx.Node, ins: List[str]) -> Optional[Node]:
    """The binary_math node of a call of two tensors, or None (another call,
    a number operand, keyword arguments such as out=)."""
    try:
        name = TARGETS.get(fn.target)
    except TypeError:            # an unhashable target is none of these
        return None
    if name is None or len(fn.args) != 2 or fn.kwargs \
            or not all(isinstance(a, torch.fx.Node) for a in fn.args) or len(ins) != 2:
        return None
    return Node(fn.name, "binary_math", list(ins), dict(fn=name))
