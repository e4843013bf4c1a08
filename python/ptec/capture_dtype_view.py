"""x.view(dtype) as another dtype (issue 15): `x.view(torch.int32)` of a
float value, `i.view(torch.float32)` of an int32 one, `x.view(torch.uint8)`.

torch reinterprets the value's bytes. ptec holds a float value as int8
codes on its own grid unless a step needs fp32, so the view is such a
step: one `view_dtype` node (attrs src, dtype: torch's names; fp32 the
reason) lowered on ptec::view_dtype.out (ptec only), which copies the
value's bytes into a tensor of the new dtype. Its input is the value in
its real dtype: a float value in fp32 (a float program input exactly as
given, NaN payloads, -0.0 and denormals included; a computed one made in
fp32 with its producers back to the inputs and constants, so its bits are
torch's: mark_viewed_producers; exp, log, sin, ... and neg run on
op_float_unary_math.c's kernels (ir.FLOAT_MATH); a producer ptec runs only
on an int8 grid, a convolution or sigmoid say, is refused in one line), an int value (capture_indices.int_dtype, a narrow one
of capture_int_casts) as its integers. The result is an int value of the
program (int64 / int32: integer arithmetic, comparisons, `.float()`, an
output; int16 / uint8 / int8: capture_narrow_ints' int64 copies) or an
fp32 float value.

Shapes are torch 1.13's: the same element size keeps the shape; a
smaller one multiplies the last size by the ratio, a larger one divides
it. Torch's own errors (a 0-d value, a last size that is not a multiple
of the ratio, a last dim of stride other than 1) are refused in one line
quoting torch (torch's rule run on the traced sizes and strides). Refused in one line: a view into or from float64 (ptec carries a
float64 value as float32, so a double's bytes are not there), bool (a
byte other than 0 / 1 is no bool value) or float16 / bfloat16 (ptec has
no half values), and a float value the program does not hold as float32
bytes of its own."""
from __future__ import annotations

from typing import List, Optional

import torch
import torch.fx

from .ir import Node, UnsupportedOperator, float_math_name, written

FP32_REASON = "a view as another dtype reinterprets the value's float32 bytes (fp32, ptec::view_dtype.out)"
# the dtypes a view reads or makes, by the graph's name
DTYPES = {torch.float32: "float32", torch.int64: "int64", torch.int32: "int32", torch.int16: "int16",
          torch.int8: "int8", torch.uint8: "uint8"}
BY_NAME = {v: k for k, v in DTYPES.items()}
INTS = ("int64", "int32", "int16", "int8", "uint8")


def _target_dtype(fn: torch.fx.Node):
    """The dtype of x.view(dtype) / x.view(dtype=dtype), else None (a view to a shape)."""
    if fn.op != "call_method" or fn.target != "view" or not fn.args or not isinstance(fn.args[0], torch.fx.Node):
        return None
    if len(fn.args) == 2 and not fn.kwargs and isinstance(fn.args[1], torch.dtype):
        return fn.args[1]
    if len(fn.args) == 1 and set(fn.kwargs) == {"dtype"} and isinstance(fn.kwargs["dtype"], torch.dtype):
        return fn.kwargs["dtype"]
    return None


def _held(node: Optional[Node], traced) -> Optional[str]:
    """The dtype in which the program holds the viewed value: an int value's
    own, "float32" for a float value, None when it holds no such bytes."""
    from .capture_indices import int_dtype
    from .capture_int_casts import narrow_dtype
    held = narrow_dtype(node) or int_dtype(node)
    if held is not None:
        return held if held in INTS and BY_NAME[held] == traced else None
    return "float32" if traced == torch.float32 else None


def dtype_view_nodes(fn: torch.fx.Node, ins, by_name) -> Optional[List[Node]]:
    """The view_dtype node of x.view(dtype) as another dtype, a refusal in
    one line, or None (not such a view)."""
    dst = _target_dtype(fn)
    if dst is None:
        return None
    x = fn.args[0]
    src = getattr(x.meta.get("tensor_meta"), "dtype", None)
    if src is None or dst == src or src.is_complex:
        return None                        # its own dtype: the value itself (capture's reshape); a complex
                                           # value's float view: capture_complex's pairs
    from .capture_calls import refuse_call
    for t in (src, dst):
        if t not in DTYPES:
            name = str(t).replace("torch.", "")
            why = {torch.float64: "ptec carries a float64 value as float32, so a double's bytes are not there",
                   torch.bool: "a byte other than 0 or 1 is no bool value"}.get(
                t, "ptec holds no value of that dtype")
            refuse_call(fn, f"a view from {str(src).replace('torch.', '')} as {str(dst).replace('torch.', '')} "
                            f"reinterprets bytes, and of {name}: {why}; for a conversion of the values, write "
                            ".to(dtype)")
    meta = x.meta.get("tensor_meta")
    try:
        # torch's own rule on the traced sizes and strides (capture may trace x contiguous where the model's
        # x is not: x.t().view(torch.uint8))
        torch.empty_strided(tuple(meta.shape), tuple(meta.stride), dtype=src).view(dst)
    except RuntimeError as e:
        refuse_call(fn, f"torch refuses it: {str(e).splitlines()[0]}")
    held = _held(by_name.get(ins[0]), src)
    if held is None:
        refuse_call(fn, f"a view as {DTYPES[dst]} reinterprets the value's bytes, and ptec does not hold this "
                        f"{DTYPES[src]} value in its own dtype; for a conversion of the values, write .to(dtype)")
    shape = getattr(fn.meta.get("tensor_meta"), "shape", None)
    attrs = dict(src=held, dtype=DTYPES[dst], fp32=FP32_REASON)
    if shape is not None:
        attrs["target_shape"] = [int(d) for d in shape]
    return [Node(fn.name, "view_dtype", [ins[0]], attrs)]


def eval_view_dtype(a: dict, x: torch.Tensor) -> torch.Tensor:
    """The view in the float graph: x in its held dtype (an int value
    carried as float32 is whole), torch's view, an int result carried as
    float32 as every index value."""
    src, dst = BY_NAME[a["src"]], BY_NAME[a["dtype"]]
    y = x.to(src).contiguous().view(dst)
    return y.float() if a["dtype"] in INTS else y


# ops whose float32 result the walk of mark_viewed_producers runs in fp32 (their portable kernels), and
# where it stops: the program's inputs and constants (their bytes as given), an integer's float (exact)
_FP32_CHAIN = ("add", "sub", "mul", "div", "binary_math", "clamp", "reshape", "permute", "identity")
_STOPS = ("input", "constant")
CHAIN_FP32 = ("its value is viewed as another dtype (x.view(dtype)): the float32 bits are torch's only when "
              "the producers run in fp32")


def mark_viewed_producers(nodes: List[Node]) -> None:
    """The float value a view_dtype reads is made in fp32 (attrs["fp32"]),
    and so is each producer back to the program's inputs and constants:
    an int8 grid's dequantized value has other bits than torch's float32
    result. A producer ptec does not run in fp32 here is refused in one
    line naming it."""
    by_name = {n.name: n for n in nodes}
    todo = [by_name.get(n.inputs[0]) for n in nodes if n.op == "view_dtype" and n.attrs.get("src") == "float32"]
    seen = set()
    while todo:
        n = todo.pop()
        if n is None or n.name in seen or n.op in _STOPS or n.op == "index_to_float" \
                or n.op == "view_dtype":      # an int's float view: its bytes as they are
            continue
        seen.add(n.name)
        if n.op not in _FP32_CHAIN and float_math_name(n) is None:     # exp, log, sin, ...: float32 kernels
            raise UnsupportedOperator(f"operator not supported: {written(n)}: a view as another dtype reinterprets "
                                      f"float32 bits, and this value is computed by {n.op}, which ptec runs on an "
                                      "int8 grid (other bits than torch's); for a conversion of the values, write "
                                      ".to(dtype)")
        n.attrs.setdefault("fp32", CHAIN_FP32)
        todo.extend(by_name.get(i) for i in n.inputs)
