"""Indexing by constant tensors (issue 15): `x[:, self.index]` with a
registered buffer, `x[..., torch.tensor([[0, 1], [2, 0]])]`, several index
tensors (`x[rows, cols]`), a bool mask, beside ints, slices, None and
`...`, each index made in forward from no input. With every index known
at compile time, the result is a fixed choice of x's entries: ptec finds
which (torch's rules, below), then moves int8 bytes: x viewed as
[lead, M, tail], the chosen rows of M as slices joined by a cat (runs of
consecutive rows one slice), viewed as the output. An index computed from
the input is one unsupported node whose refusal says so, evaluated in
float so capture reaches the refusal.

Torch's rules, which differ from numpy's where an int stands beside a
tensor: ints, slices and None apply first, as basic indexing; a bool mask
stands for the integer positions of its true entries (one index per dim it
covers); the index tensors broadcast together, and the result's dims
from them replace the indexed dims where those are adjacent, else go
first."""
from __future__ import annotations

import operator
from typing import List, Optional

import numpy as np
import torch

from .ir import Node

ONLY = "indices that are constants (buffers, or tensors made in forward from no input) run"


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


class Refusal(Exception):
    """An index form this module does not lower (the message says which)."""


def positions(shape: List[int], idx: tuple, values: dict) -> np.ndarray:
    """The flat positions in x (of `shape`) of x[idx] under torch's rules,
    as an int64 array of the result's shape; `values` maps each index
    tensor's position in idx to its numpy value. An index out of range
    raises IndexError naming it, anything else not indexing raises Refusal."""
    dims_of = [values[k].ndim if k in values and values[k].dtype in (np.bool_, np.uint8) else
               0 if k not in values and (i is None or i is Ellipsis) else 1 for k, i in enumerate(idx)]
    if sum(i is Ellipsis for i in idx) > 1:
        raise Refusal("two `...`")
    if sum(dims_of) > len(shape):
        raise Refusal("more indices than x has dims")
    where = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    basic, tensors, dim, out_dim = [], {}, 0, 0   # tensors: the result dim each index array goes to
    for k, i in enumerate(idx):
        if i is Ellipsis:
            rest = len(shape) - sum(dims_of)
            basic += [slice(None)] * rest
            dim, out_dim = dim + rest, out_dim + rest
        elif k in values:
            v = values[k]
            if v.dtype in (np.bool_, np.uint8):
                # torch reads a uint8 index as a mask too
                if v.ndim == 0:
                    raise Refusal("a 0-d mask")
                if list(v.shape) != list(shape[dim:dim + v.ndim]):
                    raise IndexError(f"a mask of shape {list(v.shape)} for dims of sizes {shape[dim:dim + v.ndim]}")
                for d, arr in enumerate(np.nonzero(v)):
                    tensors[out_dim + d] = arr.astype(np.int64)
                n = v.ndim
            else:
                if not np.issubdtype(v.dtype, np.integer):
                    raise Refusal(f"a {v.dtype} index tensor")
                size = shape[dim]
                bad = v[(v < -size) | (v >= size)]
                if bad.size:
                    raise IndexError(f"index {int(bad.flat[0])} is out of range for dim {dim} of size {size}")
                tensors[out_dim] = v.astype(np.int64) % max(size, 1)
                n = 1
            basic += [slice(None)] * n
            dim, out_dim = dim + n, out_dim + n
        elif i is None:
            basic.append(None)
            out_dim += 1
        elif isinstance(i, slice) and all(v is None or (isinstance(v, int) and not isinstance(v, bool))
                                          for v in (i.start, i.stop, i.step)) and (i.step or 1) > 0:
            basic.append(i)
            dim, out_dim = dim + 1, out_dim + 1
        elif isinstance(i, int) and not isinstance(i, bool):
            if not -shape[dim] <= i < shape[dim]:
                raise IndexError(f"index {i} is out of range for dim {dim} of size {shape[dim]}")
            basic.append(i)
            dim += 1
        else:
            raise Refusal(f"an index {i!r}")
    where = where[tuple(basic)]           # ints, slices and None alone: numpy's basic indexing is torch's
    try:
        arrays = np.broadcast_arrays(*tensors.values())
    except ValueError:
        raise IndexError("index tensors whose shapes do not broadcast") from None
    advanced = [slice(None)] * where.ndim
    for d, arr in zip(tensors, arrays):
        advanced[d] = arr
    return where[tuple(advanced)]         # arrays and `:` alone: numpy's rules are torch's


def _view(name: str, src: str, shape: List[int], want: List[int]) -> List[Node]:
    return [] if list(shape) == list(want) else [Node(name, "reshape", [src], dict(target_shape=list(want)))]


def gather_nodes(name: str, src: str, shape: List[int], where: np.ndarray) -> List[Node]:
    """Nodes making out.flat[k] = x.flat[where.flat[k]] from src (of
    `shape`): x viewed as [lead, M, tail] with lead the output's first dims
    that are x's and tail its last ones, the chosen rows of M selected
    (slices joined), then viewed as the output. The widest lead and tail
    that give exactly `where` are taken (fewer, longer slices); `where`
    is not empty."""
    out = list(where.shape)
    best = None
    for a in range(min(len(out), len(shape)) + 1):
        for b in range(min(len(out), len(shape)) - a + 1):
            if out[:a] != list(shape[:a]) or (b and out[len(out) - b:] != list(shape[len(shape) - b:])):
                continue
            lead, tail = int(np.prod(out[:a])), int(np.prod(out[len(out) - b:]))
            m, k = int(np.prod(shape)) // (lead * tail), where.size // (lead * tail)
            rows = where.reshape(lead, k, tail)[0, :, 0] // tail
            want = (np.arange(lead)[:, None, None] * (m * tail) + rows[None, :, None] * tail
                    + np.arange(tail)[None, None, :])
            if np.array_equal(want.reshape(-1), where.reshape(-1)) and (best is None or a + b > best[0] + best[1]):
                best = (a, b, lead, m, k, tail, rows)
    a, b, lead, m, k, tail, rows = best          # a = b = 0 (x flattened) always fits
    if rows.tolist() == list(range(m)):
        return [Node(name, "reshape", [src], dict(target_shape=out))]
    mid = list(shape[:a]) + [m] + list(shape[len(shape) - b:])
    nodes = _view(f"{name}_rows", src, shape, mid)
    picked = list(out[:a]) + [k] + list(out[len(out) - b:])
    last = f"{name}_picked" if picked != out else name
    nodes += select_nodes(last, nodes[-1].name if nodes else src, a, [int(r) for r in rows])
    return nodes + _view(name, last, picked, out)


def tensor_index_nodes(fn: torch.fx.Node, by_name, source: str, error) -> Optional[List[Node]]:
    """x[...] whose index holds a tensor: the gather nodes when every index
    tensor is a constant, one refused node for the rest; None when no
    tensor is in the index (basic indexing, handled elsewhere). An index
    out of range or one choosing nothing raises `error` naming the call by
    `source`."""
    if fn.target is not operator.getitem or len(fn.args) != 2 or not isinstance(fn.args[0], torch.fx.Node):
        return None
    idx = tuple(fn.args[1]) if isinstance(fn.args[1], (tuple, list)) else (fn.args[1],)
    found = {k: i for k, i in enumerate(idx) if isinstance(i, torch.fx.Node)}
    if not found:
        return None
    meta = fn.args[0].meta.get("tensor_meta")
    shape = [int(s) for s in meta.shape] if meta is not None and hasattr(meta, "shape") else None
    consts = {k: by_name.get(t.name) for k, t in found.items()}
    if any(c is None or c.op != "constant" for c in consts.values()):
        return [_refused(fn, "an index computed in the program (of those, "
                             "torch.gather(x, d, x.argmax(d, keepdim=True)) runs)")]
    if shape is None:
        return [_refused(fn, "x of unknown shape")]
    try:
        where = positions(shape, idx, {k: np.asarray(c.attrs["value"]) for k, c in consts.items()})
    except IndexError as e:
        # torch fails on it too: the model's own error, said of the call
        raise error(f"{source}: {e} (the model fails in torch too)") from None
    except Refusal as e:
        return [_refused(fn, str(e))]
    traced = fn.meta.get("tensor_meta")
    if traced is not None and hasattr(traced, "shape") and [int(s) for s in traced.shape] != list(where.shape):
        return [_refused(fn, f"a result of shape {list(where.shape)} where torch's is {list(traced.shape)}")]
    if where.size == 0:
        raise error(f"{source}: the index selects no entry, and ptec's tensors are never empty")
    return gather_nodes(fn.name, fn.args[0].name, shape, where)
