"""x.masked_scatter(mask, src) with a bool mask computed in the program
(issue 15; a constant mask is capture_scatter's): x's set positions, in
row-major order, take src's elements in order (flattened), the others keep
x. The element at set position p is src_flat[k] with k the number of set
positions before p, its rank.

The ranks without count arithmetic: the mask flattened as 0/1, its stable
sort descending gives the positions P [N] of the set elements first, in
order (as capture_selection_mix's compaction), so the j-th set position is
P[j]. The one-hot O[j, p] = (P[j] == p) (P as a column in int64, then as
float, compared with the constant arange: F.one_hot's form) is a
permutation, and src_flat [1, N] x O puts src_flat[j] at P[j]: every
column holds one 1, so the int8 matmul's sum is one product, the source
value on its grid. Where the mask is set that is the result, elsewhere x
(a where). Positions past the count get src values too, which the where
drops; src shorter than x is padded with zeros there (torch raises when
the count exceeds src's size; the program cannot).

N = x.numel() is at most 256: the positions, as float values on an int8
grid, must stay apart. Larger x, or a mask that does not broadcast to x, is
refused in one line.
"""
from __future__ import annotations

from typing import List, Union

import numpy as np
import torch

from .capture_calls import _meta_shape

MAX_POSITIONS = 256


def computed_masked_scatter_nodes(name: str, self_name: str, shape, mask, src: str, src_shape,
                                  by_name) -> Union[List, str]:
    """The nodes, or the reason (a str) the call is not run."""
    from .capture_rewrites import _Steps
    m_shape = _meta_shape(mask) if isinstance(mask, torch.fx.Node) else None
    if m_shape is None or getattr(mask.meta.get("tensor_meta"), "dtype", None) != torch.bool \
            or by_name.get(mask.name) is None:
        return "its mask must be a bool tensor"
    try:
        fits = list(np.broadcast_shapes(tuple(m_shape), tuple(shape))) == list(shape)
    except ValueError:
        fits = False
    if not fits:
        return f"its mask of shape {list(m_shape)} does not broadcast to {list(shape)}"
    n = int(np.prod(shape))
    if n > MAX_POSITIONS:
        return (f"x has {n} elements; with a mask computed in the program ptec runs it on at most "
                f"{MAX_POSITIONS} (the positions must stay apart on an int8 grid)")
    if src_shape is None:
        return "its source must be a tensor"
    s = _Steps(name)
    m = s("bool_to", [mask.name], dtype="float32")
    if list(m_shape) != list(shape):
        kept = [1] * (len(shape) - len(m_shape)) + list(m_shape)
        m = s.widen(s("reshape", [m], target_shape=kept), kept, shape)
    flat = s("reshape", [m], target_shape=[n])
    order = dict(dim=0, descending=True, k=None, pick=None, keepdim=False, rule=None)
    positions = s("sort_indices", [flat], **order)            # the set positions first, in order (stable)
    column = s("int_math", [positions], kind="view", dtype="int64", shape=[n, 1])
    hit = s("compare", [s("index_to_float", [column]), s.const(np.arange(n, dtype=np.float32))], kind="eq")
    onehot = s("bool_to", [hit], dtype="float32")              # [N (j), N (p)]
    count = int(np.prod(src_shape)) if src_shape else 1
    values = s("reshape", [src], target_shape=[1, count])
    if count > n:
        values = s("slice", [values], dim=1, start=0, end=n)
    elif count < n:
        values = s("cat", [values, s.const(np.zeros((1, n - count), np.float32))], dim=1)
    placed = s("reshape", [s("matmul", [values, onehot])], target_shape=list(shape))
    s("where", [s("compare", [m], kind="gt", scalar=0.5), placed, self_name])
    return s.done()
