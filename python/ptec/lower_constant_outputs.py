"""A model output that is an integer or bool constant (`torch.tensor(x.shape)`,
`torch.arange(n)`, an int64 buffer returned as it is, `torch.full(...,
dtype=torch.long)`, `torch.ones(3, dtype=torch.bool)`, `zeros_like(x,
dtype=torch.int32)`): capture keeps such a constant's dtype in its value,
and the program returns it in that dtype, as torch does, its exact values
(probe 9: it came back as float32, whose bytes a caller reading int64 would
misread). Other readers of the constant still take it as lower_node makes
it (a float32 or int8 constant, or an integer operand of lowering_int)."""
from __future__ import annotations

from typing import Optional

import numpy as np

from .lowered import Act
from .pte.schema import ScalarType

# a constant's numpy dtype -> (its program dtype, its IOInfo dtype)
CONSTANT_OUTPUTS = {np.dtype(np.int64): (ScalarType.LONG, "int64"), np.dtype(np.int32): (ScalarType.INT, "int32"),
                    np.dtype(np.int16): (ScalarType.SHORT, "int16"), np.dtype(np.int8): (ScalarType.CHAR, "int8"),
                    np.dtype(np.uint8): (ScalarType.BYTE, "uint8"), np.dtype(np.bool_): (ScalarType.BOOL, "bool")}


def constant_output(ctx, name: str) -> Optional[tuple]:
    """(Act, IOInfo dtype) of output `name` when it is an integer or bool
    constant (through identity nodes), else None."""
    node = ctx.g.node(name)
    while node.op == "identity":
        node = ctx.g.node(node.inputs[0])
    if node.op != "constant":
        return None
    value = np.asarray(node.attrs["value"])
    found = CONSTANT_OUTPUTS.get(value.dtype)
    if found is None:
        return None
    st, dtype = found
    # sizes given: the builder's contiguous copy of a 0-d array is 1-D
    return Act(ctx.b.constant(value, st, sizes=value.shape), list(value.shape), st), dtype
