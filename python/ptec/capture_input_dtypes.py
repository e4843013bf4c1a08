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

A float16 / bfloat16 example (`model(x.half())`, bfloat16 samples) is a
program input of that dtype (ScalarType Half / BFloat16): the capture
traces its float32 value (exact: every 16-bit float is a float32), the
graph's input node is marked attrs["in_dtype"] ("float16" / "bfloat16",
the graph computes it as a float32 input), and the lowering converts it
into float32 first thing (_to_dim_order_copy, exact), then quantizes it as
any float input. Calibration samples have the example's dtype (bfloat16
ones as torch tensors or as uint16 bit patterns in numpy).

A model with float16 / bfloat16 weights or buffers (`model.half()`) is
captured as its float32 copy: it computes as `model.float()` on the
float32 value of its input, which a note says (its outputs are float32
values, not torch's float16 results of float16 arithmetic).

A float64 example is read as float32, as before (the program takes
float32)."""
from __future__ import annotations

from typing import Optional

import torch

from .model_copy import model_copy

# the dtypes a program input keeps, by their name in the graph (attrs dtype) and in IOInfo
KEPT = {torch.int64: "int64", torch.int32: "int32", torch.int16: "int16", torch.int8: "int8",
        torch.uint8: "uint8", torch.bool: "bool"}
BY_NAME = {v: k for k, v in KEPT.items()}
# 16-bit float inputs: a program input of that dtype, computed as its float32 value
HALF = {torch.float16: "float16", torch.bfloat16: "bfloat16"}
HALF_BY_NAME = {v: k for k, v in HALF.items()}


def kept_dtype(x) -> Optional[str]:
    """The graph's name of x's dtype when the program takes it as it is, else None (float32)."""
    return KEPT.get(torch.as_tensor(x).dtype)


def half_dtype(x) -> Optional[str]:
    """"float16" / "bfloat16" for such an example input, else None."""
    return HALF.get(torch.as_tensor(x).dtype)


def _add_note(n, note: str) -> None:
    n.attrs["note"] = f"{n.attrs['note']}; {note}" if n.attrs.get("note") else note


def mark_half_inputs(g, example_inputs, weights_note: Optional[str] = None):
    """The graph g with each input whose example is float16 / bfloat16
    marked attrs["in_dtype"], and a note on it; float_copy's note on the
    first input."""
    for k, (name, x) in enumerate(zip(g.inputs, example_inputs)):
        dtype = half_dtype(x)
        if dtype is not None:
            n = g.node(name)
            n.attrs["in_dtype"] = dtype
            _add_note(n, f"note: input {k} is {dtype}: the program takes it as {dtype} and converts it exactly "
                         "into float32 first (_to_dim_order_copy)")
    if weights_note and g.inputs:
        _add_note(g.node(g.inputs[0]), weights_note)
    return g


def float_copy(model):
    """(model, note): a model with float16 / bfloat16 parameters or buffers
    as its float32 copy (those tensors converted exactly, the caller's
    model untouched), else the model itself and None."""
    tensors = list(model.parameters()) + list(model.buffers())
    halves = sorted({HALF[t.dtype] for t in tensors if t.dtype in HALF})
    if not halves:
        return model, None
    twin = model_copy(model)
    twin._apply(lambda t: t.float() if t.dtype in HALF else t)
    return twin, (f"note: the model's {' and '.join(halves)} weights are computed as float32 (ptec compiles "
                  "model.float() on the float32 value of its inputs; its outputs are not torch's "
                  f"{' / '.join(halves)} arithmetic)")


def as_captured(example_inputs, error) -> list:
    """The examples capture traces: integer and bool ones in their dtype, the
    rest float32 (a float16 / bfloat16 one its exact float32 value: its
    input node is marked by mark_half_inputs)."""
    out = []
    for x in example_inputs:
        t = torch.as_tensor(x)
        if t.dtype in KEPT:
            out.append(t)
            continue
        out.append(torch.as_tensor(x, dtype=torch.float32))
    return out


def graph_dtype(attrs) -> torch.dtype:
    """The torch dtype of a graph input node (by its attrs): float32 unless kept."""
    return BY_NAME.get(attrs.get("dtype"), torch.float32)
