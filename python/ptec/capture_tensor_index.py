"""Indexing by a constant tensor (issue 15): `x[:, self.index]` with a
registered buffer, or `x[..., torch.tensor([2, 0, 1])]` made in forward
from no input, is index_select along that dim, which ptec runs as slices
of the int8 bytes joined by a cat. Every other tensor index (2-D, several
tensors, a bool mask, an index computed from the input, a tensor beside an
int or a narrowing slice) is one unsupported node whose refusal says which
form it is, evaluated in float so capture reaches the refusal."""
from __future__ import annotations

import operator
from typing import List, Optional

import numpy as np
import torch

from .ir import Node

ONLY = "x[..., idx] with one 1-D integer index tensor that is a constant and `:` in every other place runs"


def select_nodes(name: str, src: str, dim: int, idx: List[int]) -> List[Node]:
    """The entries idx (in range, >= 0) of dim `dim` of src: each run of
    consecutive indices one slice, the runs joined along dim; the last
    node is named `name`."""
    runs = [[idx[0], idx[0] + 1]]
    for i in idx[1:]:
        if i == runs[-1][1]:
            runs[-1][1] += 1
        else:
            runs.append([i, i + 1])
    if len(runs) == 1:
        return [Node(name, "slice", [src], dict(dim=dim, start=runs[0][0], end=runs[0][1]))]
    parts = [Node(f"{name}_run{k}", "slice", [src], dict(dim=dim, start=a, end=b)) for k, (a, b) in enumerate(runs)]
    return parts + [Node(name, "cat", [p.name for p in parts], dict(dim=dim))]


def _refused(fn: torch.fx.Node, why: str) -> Node:
    """An unsupported getitem whose inputs are x and every tensor in its
    index (in the order the fx node holds them), evaluated as torch does."""
    order = []
    torch.fx.node.map_arg(fn.args, order.append)
    names = [t.name for t in order]

    def run(*xs):
        value = dict(zip(names, xs))
        return operator.getitem(*torch.fx.node.map_arg(fn.args, lambda a: value[a.name]))
    return Node(fn.name, "unsupported", names, dict(fn=run, what="getitem", why=f"{why}; {ONLY}"))


def tensor_index_nodes(fn: torch.fx.Node, by_name, source: str, error) -> Optional[List[Node]]:
    """x[...] whose index holds a tensor: index_select nodes for the form
    that runs, one refused node for the rest; None when no tensor is in
    the index (basic indexing, handled elsewhere). An index out of range
    raises `error` naming the call by `source`."""
    if fn.target is not operator.getitem or len(fn.args) != 2 or not isinstance(fn.args[0], torch.fx.Node):
        return None
    idx = fn.args[1] if isinstance(fn.args[1], (tuple, list)) else (fn.args[1],)
    tensors = [i for i in idx if isinstance(i, torch.fx.Node)]
    if not tensors:
        return None
    meta = fn.args[0].meta.get("tensor_meta")
    shape = [int(s) for s in meta.shape] if meta is not None and hasattr(meta, "shape") else None
    consts = [by_name.get(t.name) for t in tensors]
    if any(getattr(t.meta.get("tensor_meta"), "dtype", None) == torch.bool and (c is None or c.op != "constant")
           for t, c in zip(tensors, consts)):
        # x[x > 0]: the comparison runs (capture_bool), the selection by it cannot
        return [_refused(fn, "a bool mask computed in the program: the result's shape depends on the values, "
                             "which no static program has (torch.where(mask, x, 0) keeps the shape and runs)")]
    if any(c is None or c.op != "constant" for c in consts):
        return [_refused(fn, "an index computed in the program (a gather ptec has no kernel for)")]
    if len(tensors) > 1:
        return [_refused(fn, "several index tensors")]
    value = np.asarray(consts[0].attrs["value"])
    if value.dtype in (np.bool_, np.uint8):          # torch reads a uint8 index as a mask too
        return [_refused(fn, "a bool mask")]
    if value.ndim != 1 or not np.issubdtype(value.dtype, np.integer):
        return [_refused(fn, f"a {value.ndim}-D {value.dtype} index tensor")]
    if shape is None or any(i is not Ellipsis and i is not tensors[0] and i != slice(None) for i in idx):
        return [_refused(fn, "an int, None or narrowing slice beside the index tensor")]
    if Ellipsis in idx:              # `...` stands for as many `:` as x has dims left
        e = idx.index(Ellipsis)
        idx = tuple(idx[:e]) + (slice(None),) * (len(shape) - len(idx) + 1) + tuple(idx[e + 1:])
    dim = [i is tensors[0] for i in idx].index(True)
    if len(idx) > len(shape) or value.size == 0:
        return [_refused(fn, "an empty index or one past x's dims")]
    size = shape[dim]
    bad = [int(i) for i in value if not -size <= int(i) < size]
    if bad:
        # torch fails on it too: the model's own error, said of the call
        raise error(f"{source}: index {bad[0]} is out of range for dim {dim} of size {size} "
                    "(the model fails in torch too)")
    return select_nodes(fn.name, fn.args[0].name, dim, [int(i) % size for i in value])
