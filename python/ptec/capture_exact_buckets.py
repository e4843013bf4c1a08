"""torch.bucketize / torch.searchsorted with CONSTANT boundaries of a float
value the program holds exactly (issue 15, probe R3): a program's float32
input, a selection or view of one (`x[:, 1]`, `x.t()`: capture_sign's
_input_view), or a value ptec computes in fp32.

The bucket LUT of capture_elementwise_math reads the value's int8 code, so
an element within half an input step of a boundary could land in the
neighbouring bucket (10 to 17 of 1,536 elements of eight randn(64, 3)
against [-1, -0.3, 0.3, 1], seeds 0..2; bucketize -> Embedding -> Linear
80 to 101 output steps, now 1.4 to 1.5), where `(x > -1).long() + (x > -0.3).long() + ...` was exact: a
comparison of a float input reads its float32 value. Here the index is
those comparisons counted, as torch's binary search decides it:

  right=False (side="left"):  m - #{x <= b_j}   (= #{b_j < x} for a number)
  right=True  (side="right"): m - #{x <  b_j}   (= #{b_j <= x})

(torch's lower / upper bound step on `!(b >= x)` / `!(b > x)`, so a NaN
lands past every boundary, index m, as here). One `compare` of x as it is
against the float32 boundaries laid along a new leading dim ([m, 1, ...];
searchsorted's rows [..., M] as [M, ..., 1] against v [..., K]), broadcast
to [m, *x's shape]: an fp32 value against a float32 constant is
`aten::le.Tensor_out` / `lt` on the two float32 values (lowering_bool's
own: exact, no copy of x). A view of an input carries capture_sign's
OPERANDS, so exact_operands runs the view in fp32 for the compare (under
--int8-io the input's codes, the values the program holds, as the LUT
read). The bools as 0/1 float32, viewed [m, rows] and moved to [rows, m], summed by a linear
layer of weights -1 and bias m (int32 accumulation, an int8 grid [0, m]: a
step below 1 for m <= MAX_BOUNDARIES), rounded onto whole numbers, then
the int64 (out_int32: int32) index.

Values computed in int8 (a layer's output, a LUT's) keep the LUT of their
codes: the same answer on the values the program holds. Boundaries that
are not sorted, hold NaN, or are more than MAX_BOUNDARIES keep the path
they had (refused / the LUT)."""
from __future__ import annotations

from typing import List, Optional

import numpy as np
import torch

from .capture_calls import _meta_shape
from .capture_fp32_buckets import MAX_BOUNDARIES
from .capture_sign import OPERANDS, _input_view
from .ir import Node


def _exactly_held(call, x) -> bool:
    """x is read as its float32 value: a program input (or a selection /
    view of one), or a value whose step runs in fp32."""
    if not isinstance(x, torch.fx.Node):
        return False
    node = call.by_name.get(x.name)
    if node is None or node.op == "constant":
        return False
    return _input_view(x) or bool(node.attrs.get("fp32"))


def exact_bucket_nodes(call, x, boundaries, right, out32) -> Optional[List[Node]]:
    """The compare-and-count steps of bucketize / searchsorted of a float
    value held exactly against constant sorted boundaries (module doc), or
    None (the LUT path then)."""
    if boundaries is None or not _exactly_held(call, x) or not isinstance(right, bool) \
            or not isinstance(out32, bool) or boundaries.dtype.kind != "f" or boundaries.ndim == 0 \
            or np.isnan(boundaries).any() or (np.diff(boundaries, axis=-1) < 0).any():
        return None
    xs, out = _meta_shape(x), call.out_shape
    m = int(boundaries.shape[-1])
    if xs is None or out is None or not 0 < m <= MAX_BOUNDARIES:
        return None
    xs = [int(d) for d in xs]
    # the boundaries lead, broadcast against x as it is (no view of x: the compare reads it itself)
    if boundaries.ndim == 1:
        bv_shape = [m] + [1] * len(xs)
    elif call.name == "searchsorted" and len(xs) == boundaries.ndim and xs[:-1] == list(boundaries.shape[:-1]):
        bv_shape = [m] + list(boundaries.shape[:-1]) + [1]
    else:
        return None
    rows = int(np.prod(xs)) if xs else 1
    if rows == 0:
        return None
    s = call.s
    bv = s.const(np.moveaxis(np.asarray(boundaries, np.float32), -1, 0).reshape(bv_shape))
    # not(b > x) / not(b >= x) counted as m minus (x < b) / (x <= b): torch's binary search, NaN too;
    # [m, *x's shape]; a view of an input computed once more in fp32 for it (capture_sign.exact_operands)
    hit = s("compare", [x.name, bv], kind="lt" if right else "le", **{OPERANDS: _input_view(x)})
    ones = s("bool_to", [hit], dtype="float32")
    flat = s("permute", [s("reshape", [ones], target_shape=[m, rows])], dims=[1, 0])     # [rows, m]
    count = s("linear", [flat], weight=-np.ones((1, m), np.float32), bias=np.array([m], np.float32),
              known_range=[0.0, float(m)])
    whole = s("elementwise", [count], fn="round")         # its grid: whole numbers (quantize)
    shaped = s("reshape", [whole], target_shape=[int(d) for d in out])
    s("to_index", [shaped], dtype="int32" if out32 else "int64")
    return s.done()
