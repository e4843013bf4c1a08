"""torch.isin(elements, test_elements) (issue 15), `invert`, `assume_unique`.

Constant test_elements (a tensor made in forward, a buffer, a number):
x == v for each distinct value v (capture_bool's `compare` with a number,
which gives torch's float32 equality on the dequantized values exactly),
joined by `logical` or (invert: not). Values torch never finds equal (NaN)
take no part.

test_elements computed in the program (`torch.isin(x, x[0, 0])`, two
computed tensors of any shapes; elements a constant tensor, held as an
fp32 constant), or elements a number: torch's own
definition, `(elements == test.reshape(-1)[j]).any(j)`, as one broadcast
comparison. The test values are viewed as [M, 1, ..., 1] against elements
viewed as [1, *shape], compared `eq` (two tensors: exact float32 equality of
the dequantized values, lowering_bool), and reduced over the M axis as
capture_reductions' any (a max of the bools as 0/1, compared with 0.5;
invert: compared < 0.5, so not any). So the answer is torch's isin of the
values ptec holds, exactly; an int8 value is its grid's rounding of the
model's, so two values torch finds unequal can be equal once rounded (and
the reverse, on two grids): where the model's values lie on their grids
(whole numbers on a whole-number grid, slices of one value, indices) the
answer is torch's. The [M, *shape] intermediate is refused in one line
above MAX_PAIRS comparisons.

An int64 index value of the program (an argmax) is compared as its float32
copy (index_to_float), exact for such small whole numbers, as torch
compares int64 with int64 or promotes it to float32 against a float32.
Other forms (other dtypes, bools) return None and stay refused by name."""
from __future__ import annotations

from typing import List, Optional

import numpy as np
import torch

from .capture_calls import _meta_shape, refuse_call
from .capture_indices import is_index
from .capture_rewrites import _constant_of, _Steps
from .ir import Node

# the broadcast comparison holds numel(elements) * numel(test) bools (and
# their int8 0/1 copy): 2 bytes a pair, at most 512 KiB of scratch
MAX_PAIRS = 1 << 18


def _values(v, by_name) -> Optional[np.ndarray]:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return np.array([v], np.float64)
    c = _constant_of(v, by_name)
    return None if c is None or c.dtype == np.bool_ else c.astype(np.float64).reshape(-1)


def _dtype(v) -> Optional[torch.dtype]:
    return getattr(v.meta.get("tensor_meta"), "dtype", None) if isinstance(v, torch.fx.Node) else None


def isin_nodes(fn, ins, by_name) -> Optional[List[Node]]:
    if fn.target is not torch.isin or set(fn.kwargs) - {"test_elements", "assume_unique", "invert", "elements"} \
            or len(fn.args) > 2:
        return None
    args = dict(zip(("elements", "test_elements"), fn.args), **fn.kwargs)
    x, values = args.get("elements"), _values(args.get("test_elements"), by_name)
    if values is None or not isinstance(x, torch.fx.Node):
        return _computed_isin(fn, args, by_name)
    if by_name.get(x.name) is None:
        return None
    dtype = _dtype(x)
    index = is_index(by_name.get(x.name))
    if dtype != torch.float32 and not index:
        return None
    # torch compares in the promoted type: a float32 x with float32 values
    values = np.unique(values.astype(np.float32) if dtype == torch.float32 else values)
    values = values[~np.isnan(values)]
    if values.size == 0:
        return None
    s = _Steps(fn.name)
    src = s("index_to_float", [x.name]) if index else x.name
    found = [s("compare", [src], kind="eq", scalar=float(v)) for v in values]
    while len(found) > 1:
        found = [s("logical", found[i:i + 2], kind="or") if i + 1 < len(found) else found[i]
                 for i in range(0, len(found), 2)]
    if args.get("invert"):
        s("logical", found, kind="not")
    return s.done()


def _operand(v, by_name) -> Optional[str]:
    """"float" or "index" for a float32 or int64-index value of the
    program, else None."""
    node = by_name.get(v.name) if isinstance(v, torch.fx.Node) else None
    if node is None or _meta_shape(v) is None:
        return None
    if is_index(node):
        return "index"
    return "float" if _dtype(v) == torch.float32 else None


def _constant_kind(c: np.ndarray) -> Optional[str]:
    """Constant elements ptec compares as float32 exactly as torch compares
    them: float32 values, or whole numbers float32 holds exactly (an int64
    constant against int64 or float32 test values)."""
    if c.dtype == np.float32:
        return "float"
    if c.dtype.kind in "iu" and (np.abs(c.astype(np.float64)) < 2.0 ** 24).all():
        return "index"
    return None


def _viewed(s: _Steps, v, kind: str, shape) -> str:
    """v viewed as `shape`, as float32 (an index: its int64 view, then its
    exact float32 copy)."""
    if kind == "index":
        return s("index_to_float", [s("int_math", [v.name], kind="view", dtype="int64", shape=list(shape))])
    return s("reshape", [v.name], target_shape=list(shape))


def _computed_isin(fn, args, by_name) -> Optional[List[Node]]:
    """Test elements computed in the program, or elements a number: one
    broadcast `eq` of [M, 1, ...] against [1, *shape], any over M."""
    from .capture_reductions import _reduce           # (it imports capture_rewrites, as this module does)
    x, t = args.get("elements"), args.get("test_elements")
    t_kind = _operand(t, by_name)
    if t_kind is None:
        return None
    m = int(np.prod(_meta_shape(t)))
    s = _Steps(fn.name)
    if isinstance(x, (int, float)) and not isinstance(x, (bool, np.bool_)):
        # a number as elements: torch's 0-d answer, the test values compared with it
        if m == 0:
            return None
        # torch compares in float32 (a float number, or float32 test values; the
        # float32 copy of an index is exact) or in int64 (an int with indices)
        x = float(np.float32(x))
        hit = s("compare", [_viewed(s, t, t_kind, [1, m])], kind="eq", scalar=float(x))
        shape, axis, out = [1, m], 1, []
    else:
        c = _constant_of(x, by_name)
        x_kind = _constant_kind(c) if c is not None else _operand(x, by_name)
        shape = _meta_shape(x)
        if x_kind is None or shape is None or m == 0 or 0 in shape:
            return None
        n = int(np.prod(shape))
        if n * m > MAX_PAIRS:
            refuse_call(fn, f"isin of {n} elements against {m} values computed in the program compares "
                            f"{n * m} pairs, more than ptec's {MAX_PAIRS}")
        # constant elements: their own fp32 constant node (compared in float32, unrounded)
        left = s.const(c.astype(np.float32).reshape([1] + list(shape))) if c is not None \
            else _viewed(s, x, x_kind, [1] + list(shape))
        hit = s("compare", [left, _viewed(s, t, t_kind, [m] + [1] * len(shape))], kind="eq")
        shape, axis, out = [m] + list(shape), 0, list(shape)
    found = _reduce(s, s("bool_to", [hit], dtype="float32"), shape, [axis], "max")
    found = s("reshape", [found], target_shape=out)
    s("compare", [found], kind="lt" if args.get("invert") else "gt", scalar=0.5)
    return s.done()
