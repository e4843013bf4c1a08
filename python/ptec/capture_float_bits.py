"""torch.nextafter and torch.frexp, bit-level functions of float32 values
(issue 15), in fp32 on ptec-only portable kernels (src/kernels/portable/
op_float_bits.c, integer operations on the float32 encodings).

- torch.nextafter(x, y) / x.nextafter(y) of two float tensors: one
  `binary_math` node, fn "nextafter" (capture_binary_math's TARGETS),
  aten::nextafter.out, broadcast as torch;
- torch.frexp(x) / x.frexp() of a float32 x: its elements ([0] or
  .mantissa, [1] or .exponent, `m, e = torch.frexp(x)`) are a
  `frexp_mantissa` node (float32) and a `frexp_exponent` node (int32,
  carried as float32 in the float graph like every index:
  capture_indices), both lowered to one aten::frexp.Tensor_out call (its two
  outs). The pair itself (returned or used whole) is no tensor: refused in
  one line saying which elements run.

Their results are one float32 step (nextafter) or an exact power-of-two
split (frexp) of their input, which an int8 grid cannot hold: the next
float after a grid value differs from it far below the grid's step. So the
element-wise arithmetic that reads them (add, sub, mul, div, binary_math,
minimum, maximum) runs in fp32 too (attrs["fp32"]: mark_bit_level_readers),
and `torch.nextafter(x, y) - x` is the float32 spacing itself, exactly; a
program output of them is the fp32 value, and the exponent an int32
output. Layers further on quantize as usual on their own calibrated grids.
"""
from __future__ import annotations

from typing import List

import torch
import torch.fx

from .capture_calls import _meta_shape
from .ir import Node

FREXP_TARGETS = (torch.frexp, "frexp")
FREXP_OPS = ("frexp_mantissa", "frexp_exponent")
# element index or field -> node op
FREXP_ELEMENTS = {0: "frexp_mantissa", "mantissa": "frexp_mantissa", 1: "frexp_exponent", "exponent": "frexp_exponent"}
WHOLE_WHY = ("torch.frexp's pair is no tensor: take its mantissa ([0], .mantissa) and exponent ([1], .exponent), "
             "which ptec runs")
READER_OPS = ("add", "sub", "mul", "div", "binary_math", "minimum", "maximum")
READER_FP32 = ("reads a bit-level fp32 result (torch.nextafter, torch.frexp's mantissa) that an int8 grid "
               "cannot hold: computed in fp32")


def _is_frexp(fn) -> bool:
    try:
        return fn.op in ("call_function", "call_method") and fn.target in FREXP_TARGETS
    except TypeError:          # an unhashable target is no frexp
        return False


def frexp_elements(fn: torch.fx.Node, ins: List[str]):
    """For torch.frexp(x) / x.frexp() of a float32 value (no out=): the
    maker (getitem fx node, index) -> the element's node (None for another
    index); else None (the call stays refused by name)."""
    if not _is_frexp(fn) or fn.kwargs or len(fn.args) != 1 or len(ins) != 1 \
            or not isinstance(fn.args[0], torch.fx.Node):
        return None
    meta = fn.args[0].meta.get("tensor_meta")
    if meta is None or getattr(meta, "dtype", None) != torch.float32 or _meta_shape(fn.args[0]) is None:
        return None

    def element(item: torch.fx.Node, index):
        try:
            op = FREXP_ELEMENTS.get(index)
        except TypeError:       # an unhashable index (a slice of the pair)
            return None
        return None if op is None else [Node(item.name, op, list(ins))]
    return element


def _bit_level(n: Node) -> bool:
    return (n.op == "binary_math" and n.attrs.get("fn") == "nextafter") or n.op == "frexp_mantissa"


def mark_bit_level_readers(nodes: List[Node]) -> None:
    """Element-wise arithmetic reading a nextafter result or a frexp
    mantissa runs in fp32 (attrs["fp32"]; see the module doc)."""
    bit_level = {n.name for n in nodes if _bit_level(n)}
    if not bit_level:
        return
    for n in nodes:
        if n.op in READER_OPS and bit_level.intersection(n.inputs):
            n.attrs.setdefault("fp32", READER_FP32)


def eval_frexp(op: str, x: torch.Tensor) -> torch.Tensor:
    """The float graph's value of a frexp node: the mantissa, or the
    exponent carried as float32."""
    mantissa, exponent = torch.frexp(x)
    return mantissa if op == "frexp_mantissa" else exponent.to(torch.float32)
