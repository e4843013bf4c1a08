"""Indexing by constant tensors (issue 15): `x[:, self.index]` with a
registered buffer, `x[..., torch.tensor([[0, 1], [2, 0]])]`, several index
tensors (`x[rows, cols]`), a bool mask, beside ints, slices, None and
`...`, each index made in forward from no input. With every index known
at compile time, the result is a fixed choice of x's entries: ptec finds
which (torch's rules, below), then moves int8 bytes: x viewed as
[lead, M, tail], the chosen rows of M as slices joined by a cat (runs of
consecutive rows one slice), viewed as the output. One index computed in
the program as an argmax, with ints and `:` elsewhere and only dims of
size 1 before it, picks rows of x viewed as a table (aten::embedding.out);
several (or other) int64 index tensors computed in the program, of any
rank, with ints, slices (a step too), None and `...` elsewhere, become one
position in the indexed dims' block (ptec::flat_index.out) whose rows the
lookup copies (_computed_indices_nodes); any other index computed from
the input is one unsupported node whose refusal says so, evaluated in
float so capture reaches the refusal.

Torch's rules, which differ from numpy's where an int stands beside a
tensor: ints, slices and None apply first, as basic indexing; a bool mask
stands for the integer positions of its true entries (one index per dim it
covers); a 0-d integer tensor is an int; the index tensors broadcast
together, and the result's dims from them replace the indexed dims where
those are adjacent, else go first."""
from __future__ import annotations

import operator
from typing import List, Optional

import numpy as np
import torch

from .capture_masked_select import mask_index_nodes
from .ir import Node

ONLY = ("indices that are constants (buffers, or tensors made in forward from no input) run, and so do int64 "
        "index tensors computed in the program (argmax, x.long(), an int64 input) beside integer constants, ints, "
        "slices, None and `...`")


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
        # an index computed as an argmax is carried as float in the graph: as torch has it, int64
        value = {n: v.long() if k and v.is_floating_point() else v for k, (n, v) in enumerate(zip(names, xs))}
        return operator.getitem(*torch.fx.node.map_arg(fn.args, lambda a: value[a.name]))
    return Node(fn.name, "unsupported", names, dict(fn=run, what="getitem", why=f"{why}; {ONLY}"))


class Refusal(Exception):
    """An index form this module does not lower (the message says which)."""


def positions(shape: List[int], idx: tuple, values: dict) -> np.ndarray:
    """The flat positions in x (of `shape`) of x[idx] under torch's rules,
    as an int64 array of the result's shape; `values` maps each index
    tensor's position in idx to its numpy value. An index out of range
    raises IndexError naming it, anything else not indexing raises Refusal."""
    # a 0-d integer tensor is an int to torch: applied first, its dim dropped, no say in where the others go
    ints = {k: int(v) for k, v in values.items() if v.ndim == 0 and v.dtype != np.uint8
            and np.issubdtype(v.dtype, np.integer)}
    idx = tuple(ints.get(k, i) for k, i in enumerate(idx))
    values = {k: v for k, v in values.items() if k not in ints}
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


def computed_rows_nodes(name: str, src: str, shape: List[int], dim: int, ids: str, ids_shape,
                        out=None) -> Optional[List[Node]]:
    """src (of `shape`) indexed along dim by int64 ids computed in the
    program (an argmax; rank 1 or 2), torch's x[:, ids] / x.index_select:
    with only dims of size 1 before dim, src is a table [size, rest] whose
    rows the ids pick (aten::embedding.out on its int8 bytes, each id
    checked at run time), viewed as torch's result (`out`, else src's dims
    with dim replaced by the ids'). Larger dims before dim: dim moved first
    (a permute of the int8 bytes), the rows picked, the ids' dims moved
    back to dim's place. None otherwise."""
    if ids_shape is None or not 1 <= len(ids_shape) <= 2:
        return None
    if int(np.prod(shape[:dim])) != 1:
        order = [dim] + [d for d in range(len(shape)) if d != dim]
        moved = [shape[d] for d in order]
        picked = list(ids_shape) + moved[1:]
        k = len(ids_shape)
        back = list(range(k, k + dim)) + list(range(k)) + list(range(k + dim, len(picked)))
        rows = computed_rows_nodes(f"{name}_first", f"{name}_moved", moved, 0, ids, ids_shape, picked)
        return [Node(f"{name}_moved", "permute", [src], dict(dims=order))] + rows + [
            Node(f"{name}_back", "permute", [rows[-1].name], dict(dims=back)),
            Node(name, "reshape", [f"{name}_back"], dict(target_shape=list(out) if out is not None else
                                                         list(shape[:dim]) + list(ids_shape) + list(shape[dim + 1:])))]
    rest = int(np.prod(shape[dim + 1:]))
    out = out if out is not None else list(shape[:dim]) + list(ids_shape) + list(shape[dim + 1:])
    return [Node(f"{name}_table", "reshape", [src], dict(target_shape=[int(shape[dim]), rest])),
            Node(f"{name}_rows", "embedding", [ids, f"{name}_table"], {}),
            Node(name, "reshape", [f"{name}_rows"], dict(target_shape=out))]


def computed_index_select_nodes(fn: torch.fx.Node, by_name) -> Optional[List[Node]]:
    """torch.index_select(x, dim, ids) / x.index_select(dim, ids) with 1-D
    ids an int64 value computed in the program (an argmax, arithmetic on
    one: is_index; no negatives, as torch's): computed_rows_nodes. A constant
    index is capture_calls' (slices); anything else: None."""
    if fn.target not in (torch.index_select, "index_select") or fn.kwargs or len(fn.args) != 3:
        return None
    x, dim, ids = fn.args
    from .capture_indices import is_index      # here: capture_indices imports capture_calls, which imports this
    if not isinstance(x, torch.fx.Node) or not isinstance(ids, torch.fx.Node) or not isinstance(dim, int) \
            or not is_index(by_name.get(ids.name)):
        return None
    meta, ids_meta = x.meta.get("tensor_meta"), ids.meta.get("tensor_meta")
    if meta is None or ids_meta is None or len(ids_meta.shape) != 1 or not -len(meta.shape) <= dim < len(meta.shape):
        return None
    shape = [int(s) for s in meta.shape]
    return computed_rows_nodes(fn.name, x.name, shape, dim % len(shape), ids.name, [int(ids_meta.shape[0])])


def _computed_index_nodes(fn: torch.fx.Node, shape, idx: tuple, found: dict, by_name) -> Optional[List[Node]]:
    """x[:, ids], x[..., ids], x[0, ids] with one index an argmax computed
    in the program and `:` or ints in the other places: the ints first (as
    torch: one-wide slices, their dims dropped by the final view), then
    computed_rows_nodes."""
    out = fn.meta.get("tensor_meta")
    if len(found) != 1 or shape is None or sum(i is Ellipsis for i in idx) > 1 or out is None:
        return None
    (k, t), = found.items()
    source = by_name.get(t.name)
    if source is None or source.op != "argmax" or any(
            j != k and i is not Ellipsis and i != slice(None) and (not isinstance(i, int) or isinstance(i, bool))
            for j, i in enumerate(idx)):
        return None
    if Ellipsis in idx:
        e = idx.index(Ellipsis)
        k = k + len(shape) - len(idx) if e < k else k
        idx = tuple(idx[:e]) + (slice(None),) * (len(shape) - len(idx) + 1) + tuple(idx[e + 1:])
    if len(idx) > len(shape):
        return None
    nodes, src, shape = [], fn.args[0].name, list(shape)
    for d, i in enumerate(idx):
        if d != k and isinstance(i, int):
            if not -shape[d] <= i < shape[d]:
                return None
            nodes.append(Node(f"{fn.name}_at{d}", "slice", [src], dict(dim=d, start=i % shape[d], end=i % shape[d] + 1)))
            src, shape[d] = nodes[-1].name, 1
    meta = t.meta.get("tensor_meta")
    ids_shape = [int(s) for s in meta.shape] if meta is not None and hasattr(meta, "shape") else None
    rows = computed_rows_nodes(fn.name, src, shape, k, t.name, ids_shape, [int(s) for s in out.shape])
    return None if rows is None else nodes + rows


def _index_value(node: Optional[Node]) -> Optional[str]:
    """"computed" for an int64 index value of the program (an argmax, an
    int64 input, x.long() of a float value, arithmetic on them: is_index),
    "constant" for an integer constant, else None."""
    if node is not None and node.op == "constant":
        v = np.asarray(node.attrs["value"])
        return "constant" if np.issubdtype(v.dtype, np.integer) else None
    from .capture_indices import is_index      # here: capture_indices imports capture_calls, which imports this
    if is_index(node):
        return "computed"
    return None


def eval_flat_index(xs: List[torch.Tensor], sizes: List[int]) -> torch.Tensor:
    """The flat_index node in the float graph: the index tensors (computed
    ones carried as float) broadcast, checked and wrapped as torch's
    indexing, as positions in the block of dims `sizes`, flattened, as
    float32. An index out of range raises IndexError, as torch."""
    arrays = torch.broadcast_tensors(*[x.long() for x in xs])
    flat = torch.zeros(arrays[0].shape, dtype=torch.int64)
    for a, size in zip(arrays, sizes):
        if a.numel() and (int(a.min()) < -size or int(a.max()) >= size):
            raise IndexError(f"index {int(a.min()) if int(a.min()) < -size else int(a.max())} is out of range "
                             f"for a dim of size {size}")
        flat = flat * size + torch.where(a < 0, a + size, a)
    return flat.reshape(-1).float()


def _spelled_out(idx: tuple, found: dict, rank: int):
    """idx with its `...` written as `:`s and `:` appended up to x's rank
    (None takes no dim of x, every other entry one), and found re-keyed to
    the new positions; None when idx names more dims than x has."""
    taken = sum(i is not None and i is not Ellipsis for i in idx)
    if taken > rank:
        return None
    if Ellipsis in idx:
        e, fill = idx.index(Ellipsis), rank - taken
        found = {(k if k < e else k + fill - 1): v for k, v in found.items()}
        idx = tuple(idx[:e]) + (slice(None),) * fill + tuple(idx[e + 1:])
        taken = rank
    return tuple(idx) + (slice(None),) * (rank - taken), found


def _basic_nodes(name: str, src: str, shape: List[int], idx: tuple, found: dict):
    """torch's first step of x[idx] (idx spelled out): the ints, slices
    (with a step: one-wide slices joined, select_nodes) and None, with the
    index tensors' dims kept whole. Returns the nodes, the last one's name,
    its shape (x's rank), y (the shape torch indexes next: an int's dim
    gone, a 1 for each None) and the dims of y the index tensors index; None
    for an entry that is not an int, a slice of ints with a step >= 1 or None,
    or a basic index choosing nothing."""
    nodes, sizes, y, dims, d = [], list(shape), [], [], 0
    for k, i in enumerate(idx):
        if i is None:
            y.append(1)
            continue
        if k in found:
            dims.append(len(y))
            y.append(sizes[d])
            d += 1
            continue
        if isinstance(i, slice):
            if any(v is not None and (not isinstance(v, int) or isinstance(v, bool))
                   for v in (i.start, i.stop, i.step)) or (i.step is not None and i.step < 1):
                return None
            picked = list(range(*i.indices(sizes[d])))
            y.append(len(picked))
        elif isinstance(i, int) and not isinstance(i, bool) and -sizes[d] <= i < sizes[d]:
            picked = [i % sizes[d]]
        else:
            return None
        if not picked:
            return None
        if picked != list(range(sizes[d])):
            nodes += select_nodes(f"{name}_at{d}", src, d, picked)
            src, sizes[d] = nodes[-1].name, len(picked)
        d += 1
    return nodes, src, sizes, y, dims


def _rest_before_index_dims(y: List[int], dims: List[int], ranks: List[int]) -> int:
    """How many of y's other dims precede the index tensors' result dims,
    torch's placement: y's dims `dims` indexed by tensors of `ranks`. A 0-d
    integer index is an int to torch (its dim dropped first), so the rest
    stand in place of the others when those are adjacent once the 0-d ones
    are gone, else first (0)."""
    zero = {d for d, r in zip(dims, ranks) if r == 0}
    kept = [d for d in range(len(y)) if d not in zero]
    at = [kept.index(d) for d in dims if d not in zero]
    if not at or at != list(range(at[0], at[0] + len(at))):
        return 0
    return sum(d not in dims for d in kept[:at[0]])


def _computed_indices_nodes(fn: torch.fx.Node, shape, idx: tuple, found: dict, by_name) -> Optional[List[Node]]:
    """x[i, j], x[:, i, j], x[i, :, j], x[..., i], x[None, i], x[::2, i] with
    index tensors of any rank that are int64 values of the program (or
    constants beside them), ints, slices (a step too), None and one `...`
    elsewhere: torch's rules (ints, slices and None first; the index tensors
    broadcast; their result dims in place of adjacent indexed dims, else
    first). The basic indexing (_basic_nodes) as slices, the indexed dims
    moved first and viewed as one (a table [block, rest]), the index tensors
    as one position in it (ptec::flat_index.out, each index checked and a
    negative wrapped at run time), its rows (aten::embedding.out), viewed
    and moved as torch places them. None for other forms."""
    out = fn.meta.get("tensor_meta")
    kinds = {k: _index_value(by_name.get(t.name)) for k, t in found.items()}
    if shape is None or out is None or None in kinds.values() or "computed" not in kinds.values() \
            or sum(i is Ellipsis for i in idx) > 1:
        return None
    metas = [t.meta.get("tensor_meta") for t in found.values()]
    if any(m is None or not hasattr(m, "shape") for m in metas):
        return None
    try:
        bsh = [int(s) for s in np.broadcast_shapes(*[tuple(int(s) for s in m.shape) for m in metas])]
    except ValueError:
        return None
    if int(np.prod(bsh)) == 0:
        return None
    spelled = _spelled_out(tuple(idx), found, len(shape))
    basic = None if spelled is None else _basic_nodes(fn.name, fn.args[0].name, shape, *spelled)
    if basic is None:
        return None
    nodes, src, sizes, y, dims = basic
    found = spelled[1]
    rest = [d for d in range(len(y)) if d not in dims]
    block, width = int(np.prod([y[d] for d in dims])), int(np.prod([y[d] for d in rest]))
    nodes += _index_dims_first(fn.name, src, y, dims, [block, width])
    nodes.append(Node(f"{fn.name}_at", "flat_index", [found[k].name for k in sorted(found)],
                      dict(sizes=[y[d] for d in dims], shape=bsh)))
    nodes.append(Node(f"{fn.name}_rows", "embedding", [f"{fn.name}_at", nodes[-2].name], {}))
    lead = _rest_before_index_dims(y, dims, [len(found[k].meta["tensor_meta"].shape) for k in sorted(found)])
    got = [y[d] for d in rest[:lead]] + bsh + [y[d] for d in rest[lead:]]
    if got != [int(s) for s in out.shape]:
        return None
    # the index dims in place of the indexed ones: after the rest's first `lead`
    before = int(np.prod([y[d] for d in rest[:lead]]))
    return nodes + _block_swap(fn.name, f"{fn.name}_rows", 1, int(np.prod(bsh)), before, width // before, got)


def _block_swap(name: str, src: str, lead: int, a: int, b: int, trail: int, to: List[int]) -> List[Node]:
    """src's entries, as [lead, a, b, trail] row-major blocks, with the a and
    b blocks swapped, viewed as `to`: a view, a permute of at most 4 dims
    (sizes of 1 left out) and a view; one view when a or b is 1. The last
    node is named `name`."""
    if a == 1 or b == 1:
        return [Node(name, "reshape", [src], dict(target_shape=list(to)))]
    groups = [lead, a, b, trail]
    keep = [k for k in range(4) if groups[k] > 1]
    return [Node(f"{name}_blocks", "reshape", [src], dict(target_shape=[groups[k] for k in keep])),
            Node(f"{name}_swapped", "permute", [f"{name}_blocks"],
                 dict(dims=[keep.index(k) for k in (0, 2, 1, 3) if k in keep])),
            Node(name, "reshape", [f"{name}_swapped"], dict(target_shape=list(to)))]


def _index_dims_first(name: str, src: str, y: List[int], dims: List[int], table: List[int]) -> List[Node]:
    """src's entries (y's, row-major) with y's dims `dims` moved first, in
    their order, viewed as `table`: each run of adjacent indexed dims moved
    past the dims before it by one block swap (_block_swap), so no permute
    takes more than 4 dims whatever y's rank; the last node is named
    `{name}_table`."""
    runs = [[d] for d in dims[:1]]
    for d in dims[1:]:
        if d == runs[-1][-1] + 1:
            runs[-1].append(d)
        else:
            runs.append([d])
    order, moved, swaps = list(range(len(y))), 0, []
    for run in runs:
        at = order.index(run[0])
        if at > moved:
            # [before, passed, run, after] -> [before, run, passed, after]
            swaps.append((order[:moved], order[moved:at], run, order[at + len(run):]))
            order = order[:moved] + run + order[moved:at] + order[at + len(run):]
        moved += len(run)
    if not swaps:
        return [Node(f"{name}_table", "reshape", [src], dict(target_shape=list(table)))]
    size = lambda ds: int(np.prod([y[d] for d in ds]))  # noqa: E731
    nodes = []
    for k, (before, passed, run, after) in enumerate(swaps):
        last = k == len(swaps) - 1
        out = f"{name}_table" if last else f"{name}_move{k}"
        nodes += _block_swap(out, src, size(before), size(passed), size(run), size(after),
                             list(table) if last else [y[d] for d in before + run + passed + after])
        src = out
    return nodes


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
    if any(getattr(t.meta.get("tensor_meta"), "dtype", None) == torch.bool
           and (consts[k] is None or consts[k].op != "constant") for k, t in found.items()):
        # x[x > 0]: a selection of variable length, a program output (capture_masked_select)
        # x[mask], or x[:, mask] after whole dims (x[mask, 1:] is x[:, 1:][mask]: capture_index_forms)
        p = min(found)
        alone = list(found) == [p] and len(idx) == p + 1 and all(i == slice(None) for i in idx[:p])
        rows = mask_index_nodes(fn, found[p], by_name, p) if alone else None
        if rows is not None:
            return rows
        return [_refused(fn, "a bool mask computed in the program that is neither of x's own shape nor of its "
                             "leading dims (alone in the index): the result's shape depends on the values "
                             "(x[mask] with such a mask, and torch.masked_select, run as a program output)")]
    if any(c is None or c.op != "constant" for c in consts.values()):
        rows = _computed_index_nodes(fn, shape, idx, found, by_name)
        if rows is None:
            rows = _computed_indices_nodes(fn, shape, idx, found, by_name)
        if rows is not None:
            return rows
        return [_refused(fn, "an index computed in the program that is not an int64 value of the program, or "
                             "beside a bool mask, or choosing nothing")]
    return constant_index_nodes(fn, shape, idx, {k: np.asarray(c.attrs["value"]) for k, c in consts.items()},
                                source, error)


def constant_index_nodes(fn: torch.fx.Node, shape, idx: tuple, values: dict, source: str, error) -> List[Node]:
    """The gather nodes of getitem fn whose index tensors (positions k of
    idx) have the constant `values` (numpy): see tensor_index_nodes."""
    if shape is None:
        return [_refused(fn, "x of unknown shape")]
    try:
        where = positions(shape, idx, values)
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
