"""torch.scatter / scatter_add along the last dim by an index computed in
the program (issue 15): an argsort / topk's positions or an argmax with
keepdim (capture_indices), whose values lie in 0..n-1 with n the positions
they range over, so every write lands in self.

Rows r = every position of the other dims: with idx [r, k] and src [r, k],
out[r, p] = sum over j of src[r, j] * (idx[r, j] == p): the one-hot of the
index (its int64 values viewed [r, k, 1], as float, compared with the
constant arange(n): bool [r, k, n], as float 0/1) times src viewed
[r, 1, k], an int8 batch matmul whose 0/1 operand is exact on its grid.
scatter_add adds it to self. A plain scatter keeps self where nothing is
written (the one-hot's mean over j is above 0 where something is); its
index is an argsort / topk / argmax itself made over the written dim,
whose positions in a row are distinct (torch leaves repeated writes
unspecified: one made over another dim is refused unless it writes once per
row); reduce='multiply' is self times that where something is written.
Along another dim than the last: the written dim moved last (a permute of
the index, as float, and of src), the same form, the result permuted back.
"""
from __future__ import annotations

from typing import List, Optional

import numpy as np
import torch

from .capture_calls import _meta_shape
from .capture_index_uses import positions
from .ir import Node

# the most writes per row: the mean of k 0/1 values must stay above 0 on an int8 grid
MAX_WRITES = 64


def computed_scatter_nodes(name: str, self_name: str, shape, dim, idx: torch.fx.Node, src: str, src_shape,
                           reduce: Optional[str], by_name, value=None) -> Optional[str]:
    """The nodes of the write, or the reason (a str) it is not run; value:
    the number of scatter(dim, index, value) (src None), written as a
    constant src of the index's shape (x.scatter_(-1, x.argmax(-1, True), 1.0):
    the one-hot of the argmax)."""
    node = by_name.get(idx.name)
    rank, index_shape = len(shape), _meta_shape(idx)
    filled = src is None and value is not None and index_shape is not None
    if filled:
        src_shape = list(index_shape)
    if not isinstance(dim, int) or isinstance(dim, bool) or not -rank <= dim < rank:
        return f"dim {dim!r} is not a dim of a rank-{rank} tensor"
    if node is None or node.op not in ("argmax", "sort_indices") or index_shape is None:
        return "ptec runs a scatter by a computed index when the index is an argsort / topk / argmax itself"
    d = dim % rank
    if len(index_shape) != rank:
        return "ptec runs a scatter by a computed index with index, src and self of one shape off the written dim"
    made = node.attrs.get("dim")
    if reduce != "sum" and int(index_shape[d]) > 1 and (not isinstance(made, int) or made % rank != d):
        # an argsort's positions are distinct along its own dim only: along another, one position can be
        # written twice, where torch leaves which value lands unspecified
        return (f"its positions are distinct along the dim the {'argmax' if node.op == 'argmax' else 'argsort'} "
                f"ran over ({made}), not along the written dim {d}: one position may be written twice "
                "(torch leaves which value lands unspecified)")
    n, k = int(shape[d]), int(index_shape[d])
    bound = positions(idx, node)
    if bound is None or bound > n:
        return f"its index ranges over more positions than self's dim {d} ({n}), where torch raises"
    others = [i for i in range(rank) if i != d]
    if [int(index_shape[i]) for i in others] != [int(shape[i]) for i in others] or src_shape is None \
            or list(src_shape) != list(index_shape):
        return "ptec runs a scatter by a computed index with index, src and self of one shape off the written dim"
    if k > MAX_WRITES:
        return f"ptec runs at most {MAX_WRITES} computed writes per row"
    rows = int(np.prod([int(shape[i]) for i in others])) if rank > 1 else 1
    nodes: List[Node] = []

    def step(op, inputs, **attrs) -> str:
        nodes.append(Node(f"{name}__computed{len(nodes)}", op, list(inputs), attrs))
        return nodes[-1].name

    # along another dim than the last: the written dim moved last (index and src permuted, as
    # summed_scatter_nodes does), the last-dim form, and the result permuted back
    order = others + [d]
    moved = [int(index_shape[i]) for i in order]
    if filled:
        src = step("constant", [], value=np.full(moved, float(value), np.float32))
    elif order != list(range(rank)):
        src = step("permute", [src], dims=order)
    if order != list(range(rank)):
        column = step("permute", [step("index_to_float", [step("int_math", [idx.name], dtype="int64", kind="view",
                                                                 shape=[int(v) for v in index_shape])])], dims=order)
        column = step("reshape", [column], target_shape=[rows, k, 1])
    else:
        column = step("index_to_float", [step("int_math", [idx.name], dtype="int64", kind="view", shape=[rows, k, 1])])
    classes = step("constant", [], value=np.arange(n, dtype=np.float32))
    hit = step("compare", [column, classes], kind="eq")          # [rows, k, n]
    onehot = step("bool_to", [hit], dtype="float32")
    picked = step("matmul", [step("reshape", [src], target_shape=[rows, 1, k]), onehot])    # [rows, 1, n]

    def back(value):
        """[rows, ...] of the moved layout -> self's shape."""
        if order == list(range(rank)):
            return step("reshape", [value], target_shape=list(shape))
        value = step("reshape", [value], target_shape=[int(shape[i]) for i in order])
        return step("permute", [value], dims=[order.index(i) for i in range(rank)])
    picked = back(picked)
    if reduce == "sum":
        step("add", [self_name, picked])
    else:
        share = step("mean", [step("reshape", [onehot], target_shape=[rows, k, n])], dim=[1], keepdim=False)
        written = step("compare", [back(share)], kind="gt", scalar=0.0)
        if reduce == "prod":
            # reduce='multiply': self times src where written (the positions are distinct), else times 1;
            # before, this form was the plain write's where and lost self's factor
            ones = step("constant", [], value=np.ones([int(v) for v in shape], np.float32))
            step("mul", [self_name, step("where", [written, picked, ones])])
        else:
            step("where", [written, picked, self_name])
    nodes[-1].name = name
    return nodes


def summed_scatter_nodes(name: str, kind: str, self_name: str, shape, dim, idx: torch.fx.Node, src: Optional[str],
                         src_shape, alpha: float, by_name):
    """scatter_add / index_add (along any dim) by any
    int64 index the program has: an input (a GNN's edge_index), a piece of
    one (`edge_index[1]`) or one it computes. A sum needs no distinct
    positions: out = self + one_hot(index)^T-weighted src, the one-hot the
    rows of eye(n) the index picks (an embedding lookup, whose kernel fails
    the run on an index outside 0..n-1, where torch raises; exact 0 / 1 on
    its grid), times src by an int8 matmul. The nodes, or the reason (a str)
    it is not run."""
    from .capture_indices import embedding_nodes
    rank, index_shape = len(shape), _meta_shape(idx)
    meta = idx.meta.get("tensor_meta")
    if getattr(meta, "dtype", None) not in (torch.int64, torch.int32) or by_name.get(idx.name) is None \
            or index_shape is None or src is None or src_shape is None:
        return "ptec runs it by an int64 index tensor and a src tensor"
    if not isinstance(dim, int) or isinstance(dim, bool) or not -rank <= dim < rank:
        return f"dim {dim!r} is not a dim of a rank-{rank} tensor"
    n = int(shape[dim])
    table = torch.nn.Embedding.from_pretrained(torch.eye(n, dtype=torch.float32))
    nodes: List[Node] = []

    def step(op, inputs, **attrs) -> str:
        nodes.append(Node(f"{name}__summed{len(nodes)}", op, list(inputs), attrs))
        return nodes[-1].name
    d = dim % rank
    # the written dim is moved to where the dim-0 (last-dim) form has it, by a permute, and back after:
    # each other dim's elements are then rows the one sum treats alike
    others = [i for i in range(rank) if i != d]
    if kind == "index_add":
        e = int(index_shape[0]) if len(index_shape) == 1 else -1
        want = [int(v) for v in shape]
        if e >= 0:
            want[d] = e
        if e < 0 or [int(v) for v in src_shape] != want:
            return "ptec runs it with a 1-D index and src of self's shape with index's length along dim"
        rest = int(np.prod([int(shape[i]) for i in others])) if rank > 1 else 1
        rows = embedding_nodes(f"{name}__onehot", table, [idx.name], by_name, [e])     # [e, n]
        if rows is None:
            return "ptec looks up only int64 indices it computes or takes as an input"
        nodes.extend(rows)
        by_dst = step("permute", [rows[-1].name], dims=[1, 0])                          # [n, e]
        first = src if d == 0 else step("permute", [src], dims=[d] + others)
        picked = step("matmul", [by_dst, step("reshape", [first], target_shape=[e, rest])])    # [n, rest]
        order = [d] + others
    else:
        if list(index_shape) != list(src_shape) or [int(index_shape[i]) for i in others] != \
                [int(shape[i]) for i in others]:
            return "ptec runs it with index and src of one shape, self's off the written dim"
        k = int(index_shape[d])
        lead = int(np.prod([int(shape[i]) for i in others])) if rank > 1 else 1
        rows = embedding_nodes(f"{name}__onehot", table, [idx.name], by_name, list(index_shape))   # index + [n]
        if rows is None:
            return "ptec looks up only int64 indices it computes or takes as an input"
        nodes.extend(rows)
        onehot = rows[-1].name
        if d != rank - 1:
            onehot = step("permute", [onehot], dims=others + [d, rank])
            src = step("permute", [src], dims=others + [d])
        onehot = step("reshape", [onehot], target_shape=[lead, k, n])
        picked = step("matmul", [step("reshape", [src], target_shape=[lead, 1, k]), onehot])   # [lead, 1, n]
        order = others + [d]
    if order != list(range(rank)):
        picked = step("reshape", [picked], target_shape=[int(shape[i]) for i in order])
        picked = step("permute", [picked], dims=[order.index(i) for i in range(rank)])
    picked = step("reshape", [picked], target_shape=[int(d) for d in shape])
    if alpha != 1.0:
        picked = step("mul", [picked, step("constant", [], value=np.asarray(alpha, np.float32))])
    step("add", [self_name, picked])
    nodes[-1].name = name
    # the sum's int8 grid is the calibrated one: an index repeating a position more often than calibration
    # saw (a node of higher degree) saturates it, silently at run time, so the compile log says so
    nodes[-1].attrs["note"] = (f"warning: {name} ({kind} by an index the program takes or computes): its sums "
                               "take the range calibration saw; calibrate with the degrees (repeats of an index) "
                               "the model meets, as more repeats than that saturate the sum")
    return nodes


def computed_copy_nodes(name: str, self_name: str, shape, dim, idx: torch.fx.Node, src: Optional[str], src_shape,
                        by_name):
    """index_copy(dim, index, source) / index_put((index,), values) by a
    1-D index computed in the program: out[..., index[j], ...] = src[...,
    j, ...]. The index must be an argsort / topk / argmax of a 1-D value
    (its positions distinct: torch leaves a position written twice
    unspecified). The one-hot [k, n] of the index (as in
    computed_scatter_nodes) is shared by every row of the other dims: src
    with dim moved first, viewed [k, rest], times its transpose by one 2-D
    int8 matmul, then moved back; self kept where the one-hot's mean over j
    is 0 (a [n] mask viewed along dim). The nodes, or the reason (a str)."""
    node = by_name.get(idx.name)
    rank, index_shape = len(shape), _meta_shape(idx)
    if not isinstance(dim, int) or isinstance(dim, bool) or not -rank <= dim < rank:
        return f"dim {dim!r} is not a dim of a rank-{rank} tensor"
    if node is None or node.op not in ("argmax", "sort_indices") or index_shape is None or len(index_shape) != 1:
        return ("ptec runs it by a computed index when the index is an argsort / topk / argmax of a 1-D value "
                "itself (its positions distinct: torch leaves a position written twice unspecified)")
    d = dim % rank
    n, k = int(shape[d]), int(index_shape[0])
    bound = positions(idx, node)
    if bound is None or bound > n:
        return f"its index ranges over more positions than self's dim {d} ({n}), where torch raises"
    want = [int(v) for v in shape]
    want[d] = k
    if src_shape is None or [int(v) for v in src_shape] != want:
        return "ptec runs it with a source of self's shape with the index's length along dim"
    if k > MAX_WRITES:
        return f"ptec runs at most {MAX_WRITES} computed writes"
    others = [i for i in range(rank) if i != d]
    rest = int(np.prod([int(shape[i]) for i in others])) if rank > 1 else 1
    nodes: List[Node] = []

    def step(op, inputs, **attrs) -> str:
        nodes.append(Node(f"{name}__copied{len(nodes)}", op, list(inputs), attrs))
        return nodes[-1].name

    column = step("index_to_float", [step("int_math", [idx.name], dtype="int64", kind="view", shape=[k, 1])])
    classes = step("constant", [], value=np.arange(n, dtype=np.float32))
    onehot = step("bool_to", [step("compare", [column, classes], kind="eq")], dtype="float32")       # [k, n]
    first = src if d == 0 else step("permute", [src], dims=[d] + others)
    picked = step("matmul", [step("permute", [onehot], dims=[1, 0]),
                             step("reshape", [first], target_shape=[k, rest])])                       # [n, rest]
    order = [d] + others
    picked = step("reshape", [picked], target_shape=[int(shape[i]) for i in order])
    if order != list(range(rank)):
        picked = step("permute", [picked], dims=[order.index(i) for i in range(rank)])
    # over dim 1 of [1, k, n], the form the int8 mean takes (computed_scatter_nodes' own)
    share = step("mean", [step("reshape", [onehot], target_shape=[1, k, n])], dim=[1], keepdim=False)   # [1, n]
    along = [1] * rank
    along[d] = n
    written = step("compare", [step("reshape", [share], target_shape=along)], kind="gt", scalar=0.0)
    step("where", [written, picked, self_name])
    nodes[-1].name = name
    return nodes
