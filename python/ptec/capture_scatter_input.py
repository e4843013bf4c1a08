"""x.scatter(dim, index, value) and x.scatter(dim, index, src) by an int64
index that is not an argsort / topk / argmax (capture_scatter_computed):
a program input (`logits.scatter(1, labels, 0.0)`, a label's position
zeroed) or a value computed from one.

The positions are the rows of eye(n) the index picks (an embedding lookup,
as capture_scatter_computed.summed_scatter_nodes makes it: its kernel fails
the run on an index outside 0..n-1, where torch raises), one-hot [rows, k,
n] with the written dim moved last. A position is written where the
one-hot's mean over the k writes is above 0, and the result is
where(written, picked, self):

* a number value: picked is that number; an index that repeats a position
  writes the same number there, which torch's result is too.
* a src tensor with one write per row (the index's size along dim is 1):
  picked is src times the one-hot (an int8 batch matmul of a 0/1 operand).
  More writes per row are refused: two of them may name one position,
  where torch leaves which src value lands unspecified.
"""
from __future__ import annotations

from typing import List, Optional, Union

import numpy as np
import torch

from .capture_calls import _meta_shape
from .capture_scatter_computed import MAX_WRITES
from .ir import Node


def input_scatter_nodes(name: str, self_name: str, shape, dim, idx: torch.fx.Node, src: Optional[str], src_shape,
                        value, by_name) -> Union[List[Node], str]:
    """The nodes of the write, or the reason (a str) it is not run. value:
    the number of scatter(dim, index, value) (src None)."""
    from .capture_indices import embedding_nodes
    rank, index_shape = len(shape), _meta_shape(idx)
    meta = idx.meta.get("tensor_meta")
    if getattr(meta, "dtype", None) != torch.int64 or by_name.get(idx.name) is None or index_shape is None:
        return "ptec runs it by an int64 index tensor"
    if not isinstance(dim, int) or isinstance(dim, bool) or not -rank <= dim < rank:
        return f"dim {dim!r} is not a dim of a rank-{rank} tensor"
    d = dim % rank
    others = [i for i in range(rank) if i != d]
    if len(index_shape) != rank or [int(index_shape[i]) for i in others] != [int(shape[i]) for i in others]:
        return "ptec runs it with an index of self's shape off the written dim"
    n, k = int(shape[d]), int(index_shape[d])
    if src is not None and (src_shape is None or list(src_shape) != list(index_shape)):
        return "ptec runs it with a src of the index's shape"
    if src is not None and k > 1:
        return (f"{k} writes per row from a src tensor: two may name one position, where torch leaves which "
                "value lands unspecified; ptec runs one write per row, or scatter(dim, index, value)")
    if k > MAX_WRITES:
        return f"ptec runs at most {MAX_WRITES} writes per row"
    lead = int(np.prod([int(shape[i]) for i in others])) if rank > 1 else 1
    table = torch.nn.Embedding.from_pretrained(torch.eye(n, dtype=torch.float32))
    nodes: List[Node] = []

    def step(op, inputs, **attrs) -> str:
        nodes.append(Node(f"{name}__input{len(nodes)}", op, list(inputs), attrs))
        return nodes[-1].name
    rows = embedding_nodes(f"{name}__onehot", table, [idx.name], by_name, [int(v) for v in index_shape])
    if rows is None:
        return "ptec looks up only int64 indices it computes or takes as an input"
    nodes.extend(rows)
    onehot = rows[-1].name                                       # index's shape + [n]
    order = others + [d]
    if d != rank - 1:
        onehot = step("permute", [onehot], dims=others + [d, rank])
    onehot = step("reshape", [onehot], target_shape=[lead, k, n])

    def back(v):
        """[lead, ...] of the moved layout -> self's shape."""
        v = step("reshape", [v], target_shape=[int(shape[i]) for i in order])
        if order != list(range(rank)):
            v = step("permute", [v], dims=[order.index(i) for i in range(rank)])
        return v
    written = step("compare", [back(step("mean", [onehot], dim=[1], keepdim=False))], kind="gt", scalar=0.0)
    if src is None:
        picked = step("constant", [], value=np.full([int(v) for v in shape], float(value), np.float32))
    else:
        moved = src if d == rank - 1 else step("permute", [src], dims=order)
        picked = back(step("matmul", [step("reshape", [moved], target_shape=[lead, 1, k]), onehot]))
    step("where", [written, picked, self_name])
    nodes[-1].name = name
    return nodes
