"""Casts of int values into int16, uint8, int8 and float64 (issue 15):
`i.short()`, `i.byte()`, `i.char()`, `i.double()`, `i.to(torch.int16)`,
`i.type(torch.uint8)`, of an int64 / int32 value of the program
(capture_indices.int_dtype), and the casts back from them (`s.long()`,
`s.int()`, `s.float()`, `b.short()`, `d.float()`; a float64 one back into
integers, `d.long()`, is refused: the kernel converts no double into an
integer).

Each is an `int_math` node of kind cast whose attrs dtype is the target
("int16", "uint8", "int8", "float64"), lowered as
dim_order_ops::_to_dim_order_copy.out between the integer tensors (the
low bits of the two's complement value, torch's wrap-around: 300 as uint8
is 44, -1 is 255, 40000 as int16 is -25536) or into a float64 tensor
(exact up to 2^53 in magnitude, beyond it the nearest double, as torch's
static_cast). Such a value is a program output of its own dtype (the .pte
ScalarTypes BYTE = 0, CHAR = 1, SHORT = 2, DOUBLE = 7), or is read by
another cast; `.float()` of one is index_to_float (int16 / uint8 / int8 /
float64 into float32: exact, or the nearest float as torch's). A float64
value read by float math (`i.double() * 0.5`) is its float32 copy (ptec
computes every float value in float32: the float64 chain rule of
capture_plumbing; returned from forward, such float math is a Double
output of the float32 value, capture_casts). Other calls on an int16 / uint8 / int8 value
(`i.short() + 1`) are made int64 calls cast back before capture
(capture_narrow_ints; a uint8 mask or condition is read as the booleans
torch reads); one it leaves (a shift by a tensor or outside 0 ... 31) is
refused here in one line naming the call: ptec's integer kernels compute int64 / int32."""
from __future__ import annotations

from typing import List, Optional

import torch

from .ir import Node

NARROW = {torch.int16: "int16", torch.uint8: "uint8", torch.int8: "int8", torch.float64: "float64"}
# every integer dtype a cast node may read or make
_INTS = {torch.int64: "int64", torch.int32: "int32", torch.int16: "int16", torch.uint8: "uint8",
         torch.int8: "int8"}
_CAST_METHODS = ("short", "byte", "char", "double", "long", "int", "float", "to", "type")


def narrow_dtype(node: Optional[Node]) -> Optional[str]:
    """"int16" / "uint8" / "int8" / "float64" for a cast node of that dtype, else None."""
    if node is not None and node.op in ("input", "state") and node.attrs.get("dtype") in ("int16", "uint8", "int8"):
        return node.attrs["dtype"]       # an input or a written buffer of that dtype (capture_input_dtypes)
    if node is not None and node.op == "int_math" and node.attrs.get("kind") == "cast" \
            and node.attrs.get("dtype") in NARROW.values():
        return node.attrs["dtype"]
    if node is not None and node.op == "view_dtype" and node.attrs["dtype"] in ("int16", "uint8", "int8"):
        return node.attrs["dtype"]       # x.view(torch.uint8) (capture_dtype_view)
    if node is not None and node.op == "masked_select" and node.attrs.get("dtype") in ("int16", "uint8", "int8"):
        return node.attrs["dtype"]       # unique's narrow values (capture_unique_narrow)
    return None


def _traced(a) -> Optional[torch.dtype]:
    meta = a.meta.get("tensor_meta") if isinstance(a, torch.fx.Node) else None
    return getattr(meta, "dtype", None)


def int_cast_nodes(fn: torch.fx.Node, by_name) -> Optional[List[Node]]:
    """The cast node of fn, a refusal of a call reading an int16 / uint8 /
    int8 / float64 cast value that is no cast, or None (not this module's)."""
    from .capture_int_math import _refused
    read = [a for a in fn.args if isinstance(a, torch.fx.Node)] + \
        [a for a in fn.kwargs.values() if isinstance(a, torch.fx.Node)]
    narrow = [a for a in read if narrow_dtype(by_name.get(a.name))]
    src = fn.args[0] if fn.args and isinstance(fn.args[0], torch.fx.Node) else None
    from .capture_int_math import _int_of   # a bool's .long() too: (x > 0).byte() reads it (capture_narrow_ints)
    has = (narrow_dtype(by_name.get(src.name)) or _int_of(by_name.get(src.name))) if src is not None else None
    after = _traced(fn)
    cast = fn.op == "call_method" and fn.target in _CAST_METHODS and has is not None and len(read) == 1
    if cast and has == "float64" and after in _INTS:
        return _refused(fn, by_name, "a float64 value back into integers: the conversion of a double into an "
                                     "integer type is not run (cast the integer value itself)")
    if cast and after in _INTS and after not in (torch.int64, torch.int32) or cast and after is torch.float64:
        # (of its own dtype too: the value itself)
        return [Node(fn.name, "int_math", [src.name], dict(kind="cast", dtype=NARROW[after]))]
    if cast and after in (torch.int64, torch.int32, torch.float32) and narrow:
        return None                           # back into int64 / int32 (capture_int_math) or float32 (.float())
    if fn.meta.get("ptec_int64_selection"):
        return None                           # unique's marked selection copies narrow values (capture_unique_narrow)
    from .capture_narrow_ints import shift_refusal
    if narrow and fn.op in ("call_function", "call_method") and shift_refusal(fn):
        return _refused(fn, by_name, shift_refusal(fn))
    if narrow and fn.op in ("call_function", "call_method") \
            and any(narrow_dtype(by_name.get(a.name)) != "float64" for a in narrow):
        kinds = sorted({narrow_dtype(by_name.get(a.name)) for a in narrow})
        return _refused(fn, by_name, f"a call on {' / '.join(kinds)} values: ptec computes integers in int64 / "
                                     f"int32 only (cast with .long() first; an int16 / uint8 / int8 / float64 value "
                                     f"is only a program output or converted)")
    return None


def torch_dtype(dtype: str) -> torch.dtype:
    """The torch dtype of a cast node's or an int value's attrs dtype."""
    return {v: k for k, v in NARROW.items()}.get(dtype) or {v: k for k, v in _INTS.items()}[dtype]


def eval_cast(dtype: str, x: torch.Tensor) -> torch.Tensor:
    """The float graph's value of a cast into dtype: torch's cast of the
    integer (carried as float32), carried as float32 again."""
    return x.to(torch.int64).to(torch_dtype(dtype)).float()
