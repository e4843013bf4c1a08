"""Reference numerics of ptec::flat_index.out and ptec::bag_positions.out
(numpy, written from torch's indexing and nn.EmbeddingBag definitions, not
from the C kernels).

flat_index: the index tensors broadcast together (numpy's rule, which is
torch's for index tensors), negatives wrapped once as torch wraps them,
then np.ravel_multi_index over the indexed dims' sizes. An index outside
[-size, size) raises ValueError, as torch raises IndexError.

bag_positions: torch's bags from offsets (torch's checks: the first
offset 0, none decreasing, none past the ids; ValueError otherwise), each
bag's positions in the ids, then `length` for the rest of its row."""
from __future__ import annotations

from typing import Sequence

import numpy as np


def flat_index(indices: Sequence[np.ndarray], sizes: Sequence[int], out_shape) -> np.ndarray:
    arrays = np.broadcast_arrays(*[np.asarray(i, np.int64) for i in indices])
    wrapped = []
    for a, size in zip(arrays, sizes):
        if a.size and (a.min() < -size or a.max() >= size):
            raise ValueError(f"flat_index: an index is outside its dim of size {size}")
        wrapped.append(np.where(a < 0, a + size, a))
    flat = np.ravel_multi_index(tuple(wrapped), tuple(int(s) for s in sizes)) if arrays[0].size else arrays[0]
    return np.asarray(flat, np.int64).reshape(out_shape)


def bags(offsets: np.ndarray, length: int, include_last_offset: bool):
    """[(start, end)] of each bag, torch's checks made."""
    o = [int(v) for v in np.asarray(offsets).reshape(-1)]
    if not o or o[0] != 0:
        raise ValueError("bag_positions: offsets[0] must be 0")
    if any(b < a for a, b in zip(o, o[1:])):
        raise ValueError("bag_positions: offsets must not decrease")
    if o[-1] > length:
        raise ValueError(f"bag_positions: an offset is past the {length} ids")
    ends = o[1:] if include_last_offset else o[1:] + [length]
    return list(zip(o, ends))


def bag_positions(offsets: np.ndarray, length: int, include_last_offset: bool) -> np.ndarray:
    spans = bags(offsets, length, include_last_offset)
    out = np.full((len(spans), length), length, np.int64)
    for b, (start, end) in enumerate(spans):
        out[b, :end - start] = np.arange(start, end)
    return out
