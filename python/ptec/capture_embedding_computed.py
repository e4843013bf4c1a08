"""F.embedding(ids, weight) with the table computed in the program (issue
15; a constant table is nn.Embedding's, capture_indices): weight a float
value [V, D], each output row one of its rows, copied on its int8 grid.

- constant int64 ids: every id known at compile time, so the rows are
  one-row slices of the table joined and viewed as ids' shape + [D]
  (copies of bytes: exact). An id outside 0..V-1 (torch raises) is
  refused in one line; negative ids too, as torch.
- ids computed in the program (an argmax, x.long(), integer arithmetic:
  capture_indices.int64_ids), of rank 1 or 2: aten::embedding.out on the
  table's int8 bytes (capture_tensor_index.computed_rows_nodes), each id
  checked at run time.

padding_idx, scale_grad_by_freq and sparse change only the gradient, so
the forward is the same rows. max_norm renormalizes the table in place
before the lookup, rows chosen by ids: with a table computed per call it
is refused in one line.
"""
from __future__ import annotations

from typing import List, Optional

import numpy as np
import torch
import torch.nn.functional as F

from .capture_calls import _meta_shape
from .ir import Node, UnsupportedOperator

_NAMES = ("input", "weight", "padding_idx", "max_norm", "norm_type", "scale_grad_by_freq", "sparse")


def _refuse(fn, why: str):
    from .capture import _source            # capture imports this module's importer
    raise UnsupportedOperator(f"{_source(fn, {})}: {why}")


def computed_table_embedding_nodes(fn, ins, by_name) -> Optional[List[Node]]:
    """The nodes of F.embedding with a computed table, None for another call."""
    if fn.op != "call_function" or fn.target is not F.embedding or len(fn.args) > len(_NAMES):
        return None
    bound = dict(zip(_NAMES, fn.args))
    bound.update(fn.kwargs)
    ids, table = bound.get("input"), bound.get("weight")
    table_node = by_name.get(getattr(table, "name", None))
    ids_node = by_name.get(getattr(ids, "name", None))
    if table_node is None or table_node.op == "constant" or ids_node is None:
        return None
    shape, ids_shape, out = _meta_shape(table), _meta_shape(ids), _meta_shape(fn)
    if shape is None or len(shape) != 2 or ids_shape is None or out is None:
        return None
    if bound.get("max_norm") is not None:
        _refuse(fn, "max_norm renormalizes the table's looked-up rows in place; with a table computed in the "
                    "program ptec runs it without max_norm")
    if ids_node.op == "constant":
        values = np.asarray(ids_node.attrs["value"])
        if values.dtype.kind not in "iu":
            return None
        if values.size and (values.min() < 0 or values.max() >= shape[0]):
            _refuse(fn, f"an id outside 0..{shape[0] - 1} (torch raises)")
        name = fn.name
        if values.size == 0:
            return None
        rows = [Node(f"{name}__row{k}", "slice", [table.name], dict(dim=0, start=int(v), end=int(v) + 1))
                for k, v in enumerate(values.reshape(-1))]
        joined = rows + ([Node(f"{name}__rows", "cat", [r.name for r in rows], dict(dim=0))] if len(rows) > 1 else [])
        return joined + [Node(name, "reshape", [joined[-1].name], dict(target_shape=list(out)))]
    from .capture_indices import int64_ids
    from .capture_tensor_index import computed_rows_nodes
    if not int64_ids(ids_node):
        return None
    if not 1 <= len(ids_shape) <= 2:
        _refuse(fn, f"ids of rank {len(ids_shape)} computed in the program: ptec looks up rank 1 or 2")
    return computed_rows_nodes(fn.name, table.name, list(shape), 0, ids.name, ids_shape, list(out))
