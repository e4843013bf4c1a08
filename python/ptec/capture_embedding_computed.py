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

F.embedding_bag with a computed table: [B, L] ids computed as above (no
offsets, per_sample_weights or padding_idx), each bag's rows then reduced
over dim 1: mean, sum (the mean times L), max. Constant ids, with offsets
and the rest, are capture_bag_of_values' (a constant matrix of the bags),
which rewrite_nodes asks first.

padding_idx, scale_grad_by_freq and sparse change only the gradient, so
the forward is the same rows. max_norm renormalizes the table in place
before the lookup, rows chosen by ids: with a table computed per call it
is refused in one line.
"""
from __future__ import annotations

from typing import List, Optional

import numpy as np
import torch.nn.functional as F

from .capture_calls import refuse_call, _meta_shape
from .ir import Node

_NAMES = ("input", "weight", "padding_idx", "max_norm", "norm_type", "scale_grad_by_freq", "sparse")
_BAG_NAMES = ("input", "weight", "offsets", "max_norm", "norm_type", "scale_grad_by_freq", "mode", "sparse",
              "per_sample_weights", "include_last_offset", "padding_idx")
BAG_MODES = ("sum", "mean", "max")


def computed_table_embedding_nodes(fn, ins, by_name) -> Optional[List[Node]]:
    """The nodes of F.embedding / embedding_bag with a computed table, None
    for another call."""
    if fn.op == "call_function" and fn.target is F.embedding_bag:
        return _bag_nodes(fn, by_name)
    if fn.op != "call_function" or fn.target is not F.embedding or len(fn.args) > len(_NAMES):
        return None
    bound = dict(zip(_NAMES, fn.args))
    bound.update(fn.kwargs)
    return _rows_nodes(fn, fn.name, bound, by_name, _meta_shape(fn))


def _bag_nodes(fn, by_name) -> Optional[List[Node]]:
    """F.embedding_bag of [B, L] ids without offsets: the rows [B, L, D]
    (_rows_nodes), then each bag's sum (mean times L), mean or max over dim 1."""
    from .capture_calls import _reduce_max_nodes
    if len(fn.args) > len(_BAG_NAMES):
        return None
    bound = dict(zip(_BAG_NAMES, fn.args))
    bound.update(fn.kwargs)
    table, ids = bound.get("weight"), bound.get("input")
    table_node = by_name.get(getattr(table, "name", None))
    if table_node is None or table_node.op == "constant":
        return None
    ids_shape, shape, mode = _meta_shape(ids), _meta_shape(table), bound.get("mode", "mean")
    if ids_shape is None or shape is None or len(shape) != 2:
        return None
    if len(ids_shape) != 2 or bound.get("offsets") is not None or bound.get("per_sample_weights") is not None \
            or bound.get("padding_idx") is not None or bound.get("include_last_offset") or mode not in BAG_MODES:
        refuse_call(fn, "with a table computed in the program ptec runs [B, L] ids without offsets, "
                    "per_sample_weights or padding_idx, mode sum, mean or max")
    b, length = int(ids_shape[0]), int(ids_shape[1])
    if length == 0:
        return None
    name = fn.name
    rows = _rows_nodes(fn, f"{name}__rows", bound, by_name, [b, length, int(shape[1])])
    if rows is None:
        return None
    if mode == "max":
        return rows + _reduce_max_nodes(name, rows[-1].name, [b, length, int(shape[1])], [1], False, False)
    if mode == "mean":
        return rows + [Node(name, "mean", [rows[-1].name], dict(dim=[1], keepdim=False))]
    return rows + [Node(f"{name}__mean", "mean", [rows[-1].name], dict(dim=[1], keepdim=False)),
                   Node(f"{name}__length", "constant", [], dict(value=np.array(float(length), np.float32))),
                   Node(name, "mul", [f"{name}__mean", f"{name}__length"])]


def _rows_nodes(fn, name: str, bound, by_name, out) -> Optional[List[Node]]:
    """The rows of the computed table bound["weight"] at bound["input"],
    viewed as `out`; the last node named `name`."""
    ids, table = bound.get("input"), bound.get("weight")
    table_node = by_name.get(getattr(table, "name", None))
    ids_node = by_name.get(getattr(ids, "name", None))
    if table_node is None or table_node.op == "constant" or ids_node is None:
        return None
    shape, ids_shape = _meta_shape(table), _meta_shape(ids)
    if shape is None or len(shape) != 2 or ids_shape is None or out is None:
        return None
    if bound.get("max_norm") is not None:
        refuse_call(fn, "max_norm renormalizes the table's looked-up rows in place; with a table computed in the "
                    "program ptec runs it without max_norm")
    if ids_node.op == "constant":
        values = np.asarray(ids_node.attrs["value"])
        if values.dtype.kind not in "iu":
            return None
        if values.size and (values.min() < 0 or values.max() >= shape[0]):
            refuse_call(fn, f"an id outside 0..{shape[0] - 1} (torch raises)")
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
        refuse_call(fn, f"ids of rank {len(ids_shape)} computed in the program: ptec looks up rank 1 or 2")
    return computed_rows_nodes(name, table.name, list(shape), 0, ids.name, ids_shape, list(out))
