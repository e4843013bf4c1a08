"""Python lists in an index (issue 15): `x[:, [0, 2]]`, `x[..., [1, 3, 5]]`,
`x[[0, 0, 1]]`, `x[:, [True, False, True, True]]`, `x[:, [[0, 1], [2, 3]]]`.
torch.fx keeps the list in the getitem; torch makes it the tensor
torch.tensor(list) would (ints: int64 positions, bools: a mask, nested
lists: an index of their shape), so capture does the same and gathers as
for a constant index tensor (capture_tensor_index: the int8 bytes moved).

A list that is the whole index (`x[[0, 0, 1]]`) is one index tensor, as in
torch; a list holding anything but numbers and lists of them (a slice, a
tensor computed in forward) is left alone, and the getitem stays refused
by name."""
from __future__ import annotations

import operator
from typing import List, Optional

import torch

from .capture_tensor_index import constant_index_nodes
from .ir import Node


def _numbers(v) -> bool:
    """A (nested) list of ints and bools only."""
    if isinstance(v, (list, tuple)):
        return all(_numbers(i) for i in v)
    return isinstance(v, (int, bool))


def list_index_nodes(fn: torch.fx.Node, by_name, source: str, error) -> Optional[List[Node]]:
    """The gather nodes of x[...] whose index holds a Python list (and
    ints, slices, None, `...` beside it), else None."""
    if fn.target is not operator.getitem or len(fn.args) != 2 or not isinstance(fn.args[0], torch.fx.Node):
        return None
    raw = fn.args[1]
    whole = isinstance(raw, list)
    idx = (raw,) if whole else tuple(raw) if isinstance(raw, tuple) else (raw,)
    lists = {k: i for k, i in enumerate(idx) if isinstance(i, list)}
    if not lists or not all(_numbers(i) for i in lists.values()) \
            or any(isinstance(i, torch.fx.Node) for i in idx):
        return None
    values = {k: torch.tensor(v).numpy() for k, v in lists.items()}      # torch's own reading of the list
    meta = fn.args[0].meta.get("tensor_meta")
    shape = [int(s) for s in meta.shape] if meta is not None and hasattr(meta, "shape") else None
    return constant_index_nodes(fn, shape, idx, values, source, error)
