"""An embedding looked up by ids the program fixes (issue 15): positions
`self.wpe(torch.arange(T))`, a decoder's start token
`emb(torch.zeros(B, dtype=torch.long))`, a slice of an arange buffer. The
ids are a constant, so the rows are too: the lookup is the table's rows,
taken now, one constant node (quantized like any other constant). torch
has already raised for an id outside the table while the forward was
traced."""
from __future__ import annotations

from typing import List, Optional

import numpy as np
import torch

from .capture_indices import lookup_table
from .ir import Node


def constant_lookup_nodes(name: str, m: torch.nn.Module, ins: List[str], by_name) -> Optional[List[Node]]:
    """[the constant rows] for nn.Embedding m reading constant integer ids;
    None for ids the program computes."""
    src = by_name.get(ins[0]) if ins else None
    if src is None or src.op != "constant":
        return None
    ids = np.asarray(src.attrs["value"])
    if ids.dtype.kind not in "iu":
        return None
    table = np.asarray(lookup_table(m), dtype=np.float32)
    if ids.size and (ids.min() < 0 or ids.max() >= table.shape[0]):
        return None                          # torch raised already; stays the call, refused by name
    return [Node(name, "constant", [], dict(value=np.ascontiguousarray(table[ids.astype(np.int64)])))]
