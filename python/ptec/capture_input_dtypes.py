"""Model inputs of integer and bool dtypes (probe item 9): a uint8 image
(`img.float() / 255`), int8 / int16 / int32 samples, a bool mask.

The program takes such an input in the example's dtype (ExecuTorch's
ScalarType Byte, Char, Short, Int, Long, Bool), as torch's forward takes
it, and the graph evaluates it in that dtype: an integer input is an
integer value of the program (capture_indices.int_dtype: its `.float()`
is index_to_float, _to_dim_order_copy into float32; computed on as a
number without `.float()` it is refused naming the call), a bool input
a bool value (capture_bool: masks for masked_fill / where / logical ops).
Calibration samples must have the example's dtype (calibration.py).

A float16 / bfloat16 example is refused in one line: ptec's kernels convert
no half input into float32 (convert it outside with .float()). A float64
example is read as float32, as before (the program takes float32)."""
from __future__ import annotations

from typing import Optional

import torch

# the dtypes a program input keeps, by their name in the graph (attrs dtype) and in IOInfo
KEPT = {torch.int64: "int64", torch.int32: "int32", torch.int16: "int16", torch.int8: "int8",
        torch.uint8: "uint8", torch.bool: "bool"}
BY_NAME = {v: k for k, v in KEPT.items()}


def kept_dtype(x) -> Optional[str]:
    """The graph's name of x's dtype when the program takes it as it is, else None (float32)."""
    return KEPT.get(torch.as_tensor(x).dtype)


def as_captured(example_inputs, error) -> list:
    """The examples capture traces: integer and bool ones in their dtype, the
    rest float32; a float16 / bfloat16 one raises
    error (CaptureError) in one line."""
    out = []
    for k, x in enumerate(example_inputs):
        t = torch.as_tensor(x)
        if t.dtype in KEPT:
            out.append(t)
            continue
        if t.dtype in (torch.float16, torch.bfloat16):
            name = str(t.dtype).replace("torch.", "")
            raise error(f"example input {k} is {name}: ptec programs take float32, integer (uint8, int8, "
                        f"int16, int32, int64) and bool inputs, and compute no {name} input (convert it "
                        "with .float() before the model)")
        out.append(torch.as_tensor(x, dtype=torch.float32))
    return out


def graph_dtype(attrs) -> torch.dtype:
    """The torch dtype of a graph input node (by its attrs): float32 unless kept."""
    return BY_NAME.get(attrs.get("dtype"), torch.float32)
