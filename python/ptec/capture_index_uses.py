"""Uses of an index computed in the program (issue 15), as ops ptec runs:

- torch.take_along_dim(x, idx, dim) / x.take_along_dim(idx, dim) with idx
  an int64 index value (argmax with keepdim, argsort, topk's indices:
  capture_indices.is_index) of x's rank: torch.gather(x, dim, idx) where
  idx has x's sizes off dim (a size-1 dim of x is copied out to idx's, as
  torch broadcasts it). Without dim (the flattened tensors) it stays refused.
- F.one_hot(ids, C) / torch.nn.functional.one_hot of an argmax / argsort
  position over n <= C elements: (ids[..., None] == arange(C)) as int64,
  the ids viewed as a column in int64, then compared as float (exact for
  these small integers). Other ids (an int64 input, x.long(): they may
  fall outside 0..C-1, where torch raises) pick rows of eye(C) by an
  embedding lookup, whose kernel fails the run on an id outside the table
  (checked_one_hot_nodes). num_classes=-1 (C is the ids' max + 1, known
  only at run time) is refused in one line.
"""
from __future__ import annotations

import operator
from typing import List, Optional

import numpy as np
import torch
import torch.nn.functional as F

from .capture_calls import call_is, refuse_call, _meta_shape, _scalar_arg
from .capture_indices import is_index
from .ir import Node

_TAKE = (torch.take_along_dim, "take_along_dim")
_ONE_HOT = (F.one_hot, torch._C._nn.one_hot) if hasattr(torch._C._nn, "one_hot") else (F.one_hot,)


def take_along_dim_nodes(fn, by_name) -> Optional[List[Node]]:
    if not call_is(fn, _TAKE) or len(fn.args) < 2 or set(fn.kwargs) - {"dim", "indices"}:
        return None
    x, idx, dim = fn.args[0], _scalar_arg(fn, 1, "indices"), _scalar_arg(fn, 2, "dim")
    if not isinstance(x, torch.fx.Node) or not isinstance(idx, torch.fx.Node) \
            or not is_index(by_name.get(idx.name)) or by_name.get(x.name) is None:
        return None
    shape, index_shape = _meta_shape(x), _meta_shape(idx)
    if shape is None or index_shape is None or dim is None or not isinstance(dim, int) or isinstance(dim, bool) \
            or len(shape) != len(index_shape) or not -len(shape) <= dim < len(shape):
        return None
    dim %= len(shape)
    nodes, cur = [], x.name
    for d, (n, k) in enumerate(zip(shape, index_shape)):
        if d == dim or n == k:
            continue
        if n != 1:
            return None           # idx broadcast over x: an int64 copy ptec has no node for
        nodes.append(Node(f"{fn.name}__along{d}", "cat", [cur] * k, dict(dim=d)))
        cur = nodes[-1].name
    return nodes + [Node(fn.name, "gather", [cur, idx.name], dict(dim=dim))]


def positions(idx: torch.fx.Node, node: Node) -> Optional[int]:
    """How many positions an argmax / sort_indices node's values range over
    (its input's size along dim), or None for another index."""
    if node.op not in ("argmax", "sort_indices") or node.attrs.get("dim") is None:
        return None
    call = idx.args[0] if idx.target is operator.getitem else idx       # x.max(2)[1], x.sort(2)[1]
    src = call.args[0] if isinstance(call, torch.fx.Node) and call.args else None
    shape = _meta_shape(src) if isinstance(src, torch.fx.Node) else None
    return None if not shape else int(shape[node.attrs["dim"]])


def one_hot_nodes(fn, by_name) -> Optional[List[Node]]:
    if not call_is(fn, _ONE_HOT) or not fn.args or set(fn.kwargs) - {"num_classes"} or len(fn.args) > 2:
        return None
    ids, classes = fn.args[0], _scalar_arg(fn, 1, "num_classes", -1)
    node = by_name.get(getattr(ids, "name", None))
    if not isinstance(ids, torch.fx.Node) or not is_index(node) or _meta_shape(ids) is None:
        return None
    if not isinstance(classes, int) or isinstance(classes, bool) or classes < 0:
        refuse_call(fn, "num_classes=-1 makes the output's size the ids' max + 1, known only at run time: "
                    "give num_classes")
    n = positions(ids, node)
    name = fn.name
    if n is None or n > classes:
        return checked_one_hot_nodes(fn, ids, classes, by_name)
    # the ids viewed as a column in int64 (an int8 view would round them), then as float
    return [Node(f"{name}__column", "int_math", [ids.name], dict(dtype="int64", kind="view",
                                                                 shape=_meta_shape(ids) + [1])),
            Node(f"{name}__float", "index_to_float", [f"{name}__column"]),
            Node(f"{name}__classes", "constant", [], dict(value=np.arange(classes, dtype=np.float32))),
            Node(f"{name}__is", "compare", [f"{name}__float", f"{name}__classes"], dict(kind="eq")),
            Node(name, "bool_to", [f"{name}__is"], dict(dtype="int64"))]


def checked_one_hot_nodes(fn, ids, classes: int, by_name) -> List[Node]:
    """one_hot of ids that may fall outside 0..C-1 (an int64 input, x.long()):
    the rows of eye(C) the ids pick (an embedding lookup, whose kernel fails
    the run on an id outside the table, where torch raises), compared > 0.5
    (exact on the rows' 0 / 1) and returned as int64."""
    from .capture_indices import embedding_nodes
    table = torch.nn.Embedding.from_pretrained(torch.eye(classes, dtype=torch.float32))
    rows = embedding_nodes(f"{fn.name}__rows", table, [ids.name], by_name, _meta_shape(ids))
    if rows is None:
        refuse_call(fn, f"its ids may fall outside 0..{classes - 1}, where torch raises, and ptec looks up only "
                    "int64 ids it computes or takes as an input: clamp them with ids.clamp(0, "
                    f"{classes - 1}) first")
    return rows + [Node(f"{fn.name}__is", "compare", [rows[-1].name], dict(kind="gt", scalar=0.5)),
                   Node(fn.name, "bool_to", [f"{fn.name}__is"], dict(dtype="int64"))]


def index_use_nodes(fn, ins, by_name) -> Optional[List[Node]]:
    """The nodes of take_along_dim / one_hot of a computed index, or None."""
    for make in (take_along_dim_nodes, one_hot_nodes):
        nodes = make(fn, by_name)
        if nodes is not None:
            return nodes
    return None
