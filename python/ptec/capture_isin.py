"""torch.isin(x, values) with constant values (issue 15), `invert=True`
too: x == v for each distinct value v (capture_bool's `compare` with a
number, which gives torch's float32 equality on the dequantized values
exactly), joined by `logical` or (invert: not). Values torch never finds
equal (NaN) take no part. An int64 index value of the program (an argmax)
is compared as its float32 copy (index_to_float), exact for such small
whole numbers, as torch compares it. Other forms (computed values, a
number as x) return None and stay refused by name."""
from __future__ import annotations

from typing import List, Optional

import numpy as np
import torch

from .capture_indices import is_index
from .capture_rewrites import _constant_of, _Steps
from .ir import Node


def _values(v, by_name) -> Optional[np.ndarray]:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return np.array([v], np.float64)
    c = _constant_of(v, by_name)
    return None if c is None or c.dtype == np.bool_ else c.astype(np.float64).reshape(-1)


def isin_nodes(fn, ins, by_name) -> Optional[List[Node]]:
    if fn.target is not torch.isin or set(fn.kwargs) - {"test_elements", "assume_unique", "invert", "elements"} \
            or len(fn.args) > 2:
        return None
    args = dict(zip(("elements", "test_elements"), fn.args), **fn.kwargs)
    x, values = args.get("elements"), _values(args.get("test_elements"), by_name)
    if not isinstance(x, torch.fx.Node) or by_name.get(x.name) is None or values is None:
        return None
    dtype = getattr(x.meta.get("tensor_meta"), "dtype", None)
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
