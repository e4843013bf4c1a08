"""Writes at constant positions (issue 15): torch.scatter / Tensor.scatter
(a src tensor or a value; reduce="add" / "multiply"), scatter_add,
scatter_reduce (sum, prod, mean, amax, amin; include_self), index_add
(alpha), index_copy, masked_scatter with a constant mask, index_put
with a tuple of constant index tensors (accumulate or not) and torch.put /
Tensor.put(_) (self viewed flat, negative positions from the end;
accumulate or not), all with a CONSTANT index.

With constant indices every write is a fixed pair (target position p of
the output, source position q of src), known at compile time, so each
output element is a fixed function of the inputs:

- the picked values: src viewed as [1, Ns] times a constant 0/1 matrix
  P [Ns, M] (P[q, p] = 1 for each pair; alpha for index_add), an int8
  matmul whose only rounding is its output's (0/1 is exact on any grid that
  holds 0 and 1). Where several sources reach one target the matmul sums
  them (scatter_add, index_put(accumulate=True)).
- amax / amin / prod / plain writes: the pairs in layers, layer j holding
  each target's j-th write (in torch's order), each layer one 0/1 matmul,
  folded into the running value only where the layer writes (a constant
  bool mask: torch.where).
- mean: the sum (self included or not) times 1/count, count being known.

An output element no pair writes keeps self's value. A plain write (no
reduction) to one position twice is refused: torch leaves which value lands
unspecified. An index computed in the program: scatter / scatter_add along
the last dim by an argsort / topk / argmax are capture_scatter_computed's
one-hot matmuls; the other forms are refused in one line (which element
each write reaches then depends on the values).
"""
from __future__ import annotations

from typing import List, Optional

import numpy as np
import torch

from .capture_calls import refuse_call, _meta_shape
from .ir import Node

# the most entries one constant pick matrix may have (64 KB of int8 weights)
MAX_PICK = 1 << 16

# call -> (kind, its parameter names after self, in torch's order)
_CALLS = {
    "scatter": ("scatter", ("dim", "index", "src", "reduce")),
    "scatter_add": ("scatter_add", ("dim", "index", "src")),
    "scatter_reduce": ("scatter_reduce", ("dim", "index", "src", "reduce", "include_self")),
    "index_add": ("index_add", ("dim", "index", "source", "alpha")),
    "index_copy": ("index_copy", ("dim", "index", "source")),
    "masked_scatter": ("masked_scatter", ("mask", "source")),
    "index_put": ("index_put", ("indices", "values", "accumulate")),
    "put": ("put", ("index", "source", "accumulate")),          # x.put_ too (capture_in_place)
}
_TARGETS = {**{name: name for name in _CALLS},
            **{getattr(torch, name): name for name in _CALLS if hasattr(torch, name)}}
_REDUCE_SPELLINGS = {"add": "sum", "multiply": "prod"}          # scatter(..., reduce=)
_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")             # scatter_reduce(..., reduce)


def _call_name(fn) -> Optional[str]:
    try:
        return _TARGETS.get(fn.target)
    except TypeError:         # an unhashable target is none of these
        return None


def _int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and bool(np.isfinite(v))


def _numel(shape) -> int:
    return int(np.prod(shape)) if len(shape) else 1


def _float_tensor(a, by_name) -> bool:
    meta = a.meta.get("tensor_meta") if isinstance(a, torch.fx.Node) else None
    return by_name.get(getattr(a, "name", None)) is not None and getattr(meta, "dtype", None) == torch.float32


def _constant(a, by_name) -> Optional[np.ndarray]:
    node = by_name.get(a.name) if isinstance(a, torch.fx.Node) else None
    return None if node is None or node.op != "constant" else np.asarray(node.attrs["value"])


def _bound(fn, kind: str) -> Optional[dict]:
    """The call's arguments by name (self as "self"), or None when it spells
    more than torch's parameters."""
    names = ("self",) + _CALLS[kind][1]
    if len(fn.args) > len(names) or set(fn.kwargs) - set(names) - {"input"}:
        return None
    args = dict(zip(names, fn.args))
    for k, v in fn.kwargs.items():
        args["self" if k == "input" else k] = v
    return args


def _index(fn, a, by_name) -> np.ndarray:
    """A constant integer index tensor as int64, or a one-line refusal."""
    value = _constant(a, by_name)
    if value is None:
        if isinstance(a, torch.fx.Node):
            refuse_call(fn, "its index is computed in the program, so where each write lands depends on the values; "
                        "ptec runs it with a constant index tensor only")
        refuse_call(fn, "its index is not a tensor")
    if value.dtype.kind not in "iu":
        refuse_call(fn, f"its index is of dtype {value.dtype}, not an integer tensor")
    return value.astype(np.int64)


def _along_dim(fn, shape, dim, index: np.ndarray, src_shape):
    """(targets, sources) of scatter's pairs: for each position q of index,
    the output position q with dim replaced by index[q], from src at q."""
    rank = len(shape)
    if not _int(dim) or not -rank <= dim < rank:
        refuse_call(fn, f"dim {dim!r} is not a dim of a rank-{rank} tensor")
    dim %= rank
    if index.ndim != rank or (src_shape is not None and len(src_shape) != rank):
        refuse_call(fn, "index (and src) must have self's number of dims")
    if any(index.shape[d] > shape[d] for d in range(rank) if d != dim) \
            or (src_shape is not None and any(index.shape[d] > src_shape[d] for d in range(rank))):
        refuse_call(fn, "index is larger than self (other dims) or src")
    if ((index < 0) | (index >= shape[dim])).any():
        refuse_call(fn, f"an index is outside 0..{shape[dim] - 1}")
    grid = list(np.indices(index.shape))
    at = list(grid)
    at[dim] = index
    targets = np.ravel_multi_index([g.ravel() for g in at], shape)
    sources = (np.ravel_multi_index([g.ravel() for g in grid], src_shape) if src_shape is not None
               else np.zeros(targets.size, np.int64))          # a value: every write the same number
    return targets, sources


def _rows_index(fn, shape, dim, index: np.ndarray, src_shape):
    """index_add / index_copy: source's slice i along dim goes to self's
    slice index[i]; as scatter with index[i] spread over source's shape."""
    rank = len(shape)
    if not _int(dim) or not -rank <= dim < rank or index.ndim > 1:
        refuse_call(fn, "it needs an int dim of self and a 1-D index")
    dim %= rank
    index = index.reshape(-1)
    want = [index.size if d == dim else shape[d] for d in range(rank)]
    if list(src_shape) != want:
        refuse_call(fn, f"source has shape {list(src_shape)}, not {want}")
    spread = np.broadcast_to(index.reshape([-1 if d == dim else 1 for d in range(rank)]), want)
    return _along_dim(fn, shape, dim, np.ascontiguousarray(spread), src_shape)


def _put_index(fn, shape, indices, by_name, values_shape):
    """index_put's pairs: the constant index tensors (leading dims, with
    negative positions from the end, as torch) pick output positions; the
    values broadcast to the picked shape."""
    if not isinstance(indices, (tuple, list)) or not indices or len(indices) > len(shape) \
            or any(i is None for i in indices):
        refuse_call(fn, "it takes a tuple of index tensors for self's leading dims (None or slices are not run)")
    idx = []
    for d, a in enumerate(indices):
        value = _index(fn, a, by_name)
        if ((value < -shape[d]) | (value >= shape[d])).any():
            refuse_call(fn, f"an index of dim {d} is outside -{shape[d]}..{shape[d] - 1}")
        idx.append(value % shape[d])
    try:
        picked = np.arange(_numel(shape)).reshape(shape)[tuple(idx)]
        src = np.arange(_numel(values_shape)).reshape(values_shape) if values_shape is not None else None
        sources = np.broadcast_to(src, picked.shape).ravel() if src is not None else np.zeros(picked.size, np.int64)
    except (IndexError, ValueError) as e:
        refuse_call(fn, f"its indices and values do not broadcast ({e})")
    return picked.ravel(), sources


def _flat_index(fn, shape, index: np.ndarray, src_shape):
    """put's pairs: index k (of self viewed flat, negative from the end)
    gets source element k, both in their flat order, as torch."""
    m = _numel(shape)
    index = index.reshape(-1)
    if src_shape is None or index.size != _numel(src_shape):
        refuse_call(fn, f"its index has {index.size} elements and source {_numel(src_shape or [])}: torch needs as many")
    if ((index < -m) | (index >= m)).any():
        refuse_call(fn, f"an index is outside -{m}..{m - 1}")
    return index % m, np.arange(index.size)


def _layers(targets: np.ndarray) -> np.ndarray:
    """Each pair's layer: how many earlier pairs (in torch's order) write
    the same target."""
    order = np.argsort(targets, kind="stable")
    layer = np.zeros(targets.size, np.int64)
    for k in range(1, order.size):
        if targets[order[k]] == targets[order[k - 1]]:
            layer[order[k]] = layer[order[k - 1]] + 1
    return layer


class _Steps:
    """The call's nodes, named name__scatterK; the last takes the call's name."""

    def __init__(self, name: str):
        self.name, self.nodes = name, []

    def __call__(self, op, inputs, **attrs) -> str:
        self.nodes.append(Node(f"{self.name}__scatter{len(self.nodes)}", op, list(inputs), attrs))
        return self.nodes[-1].name

    def const(self, value, dtype=np.float32) -> str:
        return self("constant", [], value=np.asarray(value, dtype))

    def done(self) -> List[Node]:
        self.nodes[-1].name = self.name
        return self.nodes


# the most runs one gathered write joins (capture_tensor_index.select_nodes: a slice each)
MAX_RUNS = 1024


def _gathered_write(fn, s: "_Steps", self_name: str, shape, src: str, src_shape, targets, sources) -> List[Node]:
    """A plain write too large for a pick matrix (the Temporal Shift
    Module's `out[:, :-1, :f] = x[:, 1:, :f]` on [8, 64, 14, 14]): self and
    src flattened and joined, [self..., src...], then each output element
    taken from its place there (its own position, or m + its source's
    where a pair writes it): a constant gather, whose consecutive picks are
    one slice each (capture_tensor_index.gather_nodes), so its size is
    linear in the tensors' and its values are bytes moved on the join's
    grid. Refused when the picks fall in more than MAX_RUNS runs."""
    from .capture_tensor_index import gather_nodes
    m, ns = _numel(shape), _numel(src_shape)
    at = np.arange(m, dtype=np.int64)
    at[targets] = m + sources
    runs = 1 + int(np.count_nonzero(np.diff(at) != 1))
    if runs > MAX_RUNS:
        refuse_call(fn, f"its writes fall in {runs} separate runs of the output (ptec joins at most {MAX_RUNS} "
                    "slices for a write of more than " + str(MAX_PICK) + " src times output elements)")
    both = s("cat", [s("reshape", [self_name], target_shape=[m]), s("reshape", [src], target_shape=[ns])], dim=0)
    s.nodes.extend(gather_nodes(f"{s.name}__scatter{len(s.nodes)}", both, [m + ns], at.reshape(shape)))
    return s.done()


def _scatter_nodes(fn, name: str, self_name: str, shape, src, src_shape, src_value, targets, sources,
                   reduce: Optional[str], include_self: bool, alpha: float = 1.0) -> List[Node]:
    """The nodes of the writes (targets[k] <- sources[k], flat positions)
    into self_name of `shape`: reduce None (a plain write) or one of
    _REDUCTIONS. src is a node of src_shape, or src_value its known value
    (a constant or a number), whose writes are then constants."""
    m = _numel(shape)
    counts = np.bincount(targets, minlength=m) if targets.size else np.zeros(m, np.int64)
    written = counts > 0
    if reduce is None and (counts > 1).any():
        refuse_call(fn, f"it writes output position {int(np.argmax(counts > 1))} more than once, and torch leaves "
                    "which value lands unspecified")
    s = _Steps(name)
    if not written.any():
        s("identity", [self_name])
        return s.done()
    ns = _numel(src_shape) if src_shape is not None else 1
    if src_value is None and ns * m > MAX_PICK and reduce is None:
        return _gathered_write(fn, s, self_name, shape, src, src_shape, targets, sources)
    if src_value is None and ns * m > MAX_PICK:
        refuse_call(fn, f"its constant pick matrix would have {ns * m} entries (ptec makes at most {MAX_PICK}: "
                    "src elements times output elements)")
    layer = _layers(targets)
    flat = []

    def where(mask, a: str, b: str) -> str:
        if mask.all():
            return a
        return s("where", [s.const(mask.reshape(shape), np.bool_), a, b])

    def pick(which) -> str:
        """The values the pairs `which` write (times alpha) at their
        targets, 0 elsewhere; pairs sharing a target summed."""
        if src_value is not None:
            values = np.zeros(m, np.float64)
            np.add.at(values, targets[which], np.asarray(src_value, np.float64).reshape(-1)[sources[which]] * alpha)
            return s.const(values.reshape(shape))
        matrix = np.zeros((ns, m), np.float32)
        np.add.at(matrix, (sources[which], targets[which]), np.float32(alpha))
        if np.abs(matrix).max() > abs(alpha):
            # one source twice at one target (broadcast values): a 0/1 matmul per layer, summed
            parts = [pick(which & (layer == j)) for j in range(int(layer[which].max()) + 1)]
            total = parts[0]
            for p in parts[1:]:
                total = s("add", [total, p])
            return total
        if not flat:
            flat.append(s("reshape", [src], target_shape=[1, ns]))
        return s("reshape", [s("matmul", [flat[0], s.const(matrix)])], target_shape=list(shape))

    everything = np.ones(targets.size, bool)
    if reduce is None:
        where(written, pick(everything), self_name)
    elif reduce in ("sum", "mean"):
        total = pick(everything)
        if include_self:
            total = s("add", [self_name, total])
        if reduce == "mean":
            n = counts + (1 if include_self else 0)
            cur = self_name
            for c in sorted(set(n[written].tolist())):
                # sum / count: the count is known, one scalar per count
                cur = where(written & (n == c), s("mul", [total, s.const(1.0 / c)]), cur)
        elif not include_self:
            where(written, total, self_name)
    else:
        combine = {"prod": "mul", "amax": "maximum", "amin": "minimum"}[reduce]
        cur = self_name
        for j in range(int(layer.max()) + 1):
            has = np.zeros(m, bool)
            has[targets[layer == j]] = True
            values = pick(layer == j)
            cur = where(has, values if j == 0 and not include_self else s(combine, [cur, values]), cur)
    return s.done()


def _argsort_like(index, by_name) -> bool:
    """An argsort / topk / argmax index: its positions are known to lie in
    self's last dim (capture_scatter_computed.computed_scatter_nodes)."""
    node = by_name.get(index.name)
    return node is not None and node.op in ("argmax", "sort_indices")


def _last_dim(dim, shape) -> bool:
    """dim is self's last (an argsort's sum there has computed_scatter_nodes'
    form; off it, the one-hot sum of any index, summed_scatter_nodes)."""
    return isinstance(dim, int) and not isinstance(dim, bool) and -len(shape) <= dim < len(shape) \
        and dim % len(shape) == len(shape) - 1


def computed_copy(fn, kind, a, self_name, shape, src, src_shape, reduce, by_name):
    """index_copy and index_put of one index tensor (dim 0) whose index is
    computed in the program or an input: index_put(accumulate=True) is
    index_add's sum (summed_scatter_nodes: any index), the plain writes
    capture_scatter_computed.computed_copy_nodes (an argsort-like index);
    a one-line refusal otherwise; None for a constant index or another call."""
    if kind == "index_copy":
        index, dim = a.get("index"), a.get("dim")
    elif kind == "index_put" and isinstance(a.get("indices"), (tuple, list)) and len(a["indices"]) == 1:
        index, dim = a["indices"][0], 0
    else:
        return None
    if not isinstance(index, torch.fx.Node) or _constant(index, by_name) is not None \
            or not isinstance(src, torch.fx.Node):
        return None
    from .capture_scatter_computed import computed_copy_nodes, summed_scatter_nodes
    if reduce == "sum":
        nodes = summed_scatter_nodes(fn.name, "index_add", self_name, shape, dim, index, src.name, src_shape, 1.0,
                                     by_name)
    else:
        nodes = computed_copy_nodes(fn.name, self_name, shape, dim, index, src.name, src_shape, by_name)
    if isinstance(nodes, str):
        where = "a program input" if by_name.get(index.name) is not None and \
            by_name[index.name].op == "input" else "computed in the program"
        refuse_call(fn, f"its index is {where}: " + nodes)
    return nodes


def scatter_nodes(fn, ins, by_name) -> Optional[List[Node]]:
    """The nodes of one of _CALLS with constant indices (the module's
    docstring), a one-line refusal (UnsupportedOperator) for an index
    computed in the program or a form ptec does not run, or None for any
    other call."""
    kind = _call_name(fn)
    if kind is None:
        return None
    a = _bound(fn, _CALLS[kind][0])
    if a is None or not _float_tensor(a.get("self"), by_name):
        return None
    self_node = a["self"]
    shape = _meta_shape(self_node)
    if shape is None or not shape:
        return None
    src = a.get("src", a.get("source", a.get("values")))
    if isinstance(src, torch.fx.Node):
        if not _float_tensor(src, by_name):
            return None
        src_shape, src_value = _meta_shape(src), _constant(src, by_name)
    elif _number(src) and kind == "scatter":
        src_shape, src_value = None, np.array([float(src)])     # scatter(dim, index, value)
    else:
        return None
    reduce, include_self, alpha = None, True, 1.0
    if kind == "scatter":
        spelled = a.get("reduce")
        if spelled is not None and spelled not in _REDUCE_SPELLINGS:
            refuse_call(fn, f"reduce={spelled!r}: torch takes 'add' or 'multiply'")
        reduce = _REDUCE_SPELLINGS.get(spelled)
    elif kind in ("scatter_add", "index_add"):
        reduce = "sum"
    elif kind == "scatter_reduce":
        reduce, include_self = a.get("reduce"), a.get("include_self", True)
        if reduce not in _REDUCTIONS or not isinstance(include_self, bool):
            refuse_call(fn, f"reduce={reduce!r} is not one of {', '.join(_REDUCTIONS)}")
    elif kind in ("index_put", "put"):
        accumulate = a.get("accumulate", False)
        if not isinstance(accumulate, bool):
            return None
        reduce = "sum" if accumulate else None
    if kind == "index_add":
        alpha = a.get("alpha", 1)
        if not _number(alpha):
            return None
        alpha = float(alpha)

    index = a.get("index")
    if kind in ("scatter_add", "index_add") and isinstance(index, torch.fx.Node) and _constant(index, by_name) is None \
            and (kind == "index_add" or not _argsort_like(index, by_name) or not _last_dim(a.get("dim"), shape)):
        # a sum by an index the program takes as an input or computes (capture_scatter_computed)
        from .capture_scatter_computed import summed_scatter_nodes
        nodes = summed_scatter_nodes(fn.name, kind, self_node.name, shape, a.get("dim"), index,
                                     getattr(src, "name", None), src_shape, alpha, by_name)
        if isinstance(nodes, str):
            where = "a program input" if by_name.get(index.name) is not None and \
                by_name[index.name].op == "input" else "computed in the program"
            refuse_call(fn, f"its index is {where}: " + nodes)
        return nodes
    if kind == "scatter" and reduce is None and isinstance(index, torch.fx.Node) and _constant(index, by_name) is None \
            and not _argsort_like(index, by_name):
        from .capture_scatter_input import input_scatter_nodes       # an input index, or one computed from it
        nodes = input_scatter_nodes(fn.name, self_node.name, shape, a.get("dim"), index, getattr(src, "name", None),
                                    src_shape, src_value[0] if _number(src) else None, by_name)
        if isinstance(nodes, str):
            where = "a program input" if by_name.get(index.name) is not None and \
                by_name[index.name].op == "input" else "computed in the program"
            refuse_call(fn, f"its index is {where}: " + nodes)
        return nodes
    if kind in ("scatter", "scatter_add") and isinstance(index, torch.fx.Node) and _constant(index, by_name) is None:
        from .capture_scatter_computed import computed_scatter_nodes
        nodes = computed_scatter_nodes(fn.name, self_node.name, shape, a.get("dim"), index, getattr(src, "name", None),
                                       src_shape, reduce, by_name, src_value[0] if _number(src) else None)
        if isinstance(nodes, str):
            where = "a program input" if by_name.get(index.name) is not None and \
                by_name[index.name].op == "input" else "computed in the program"
            refuse_call(fn, f"its index is {where}: " + nodes)
        return nodes
    copied = computed_copy(fn, kind, a, self_node.name, shape, src, src_shape, reduce, by_name)
    if copied is not None:
        return copied
    if kind in ("scatter", "scatter_add", "scatter_reduce"):
        targets, sources = _along_dim(fn, shape, a.get("dim"), _index(fn, a.get("index"), by_name), src_shape)
    elif kind in ("index_add", "index_copy"):
        targets, sources = _rows_index(fn, shape, a.get("dim"), _index(fn, a.get("index"), by_name), src_shape)
    elif kind == "masked_scatter":
        mask = _constant(a.get("mask"), by_name)
        if mask is None and isinstance(src, torch.fx.Node):
            from .capture_masked_scatter import computed_masked_scatter_nodes
            nodes = computed_masked_scatter_nodes(fn.name, self_node.name, shape, a.get("mask"), src.name, src_shape,
                                                  by_name)
            if isinstance(nodes, str):
                refuse_call(fn, "its mask is computed in the program: " + nodes)
            return nodes
        if mask is None or mask.dtype != np.bool_:
            refuse_call(fn, "its mask is computed in the program, so which source element lands where depends on "
                        "the values; ptec runs it with a constant bool mask only")
        try:
            mask = np.broadcast_to(mask, shape)
        except ValueError:
            refuse_call(fn, f"its mask of shape {list(mask.shape)} does not broadcast to {list(shape)}")
        targets = np.flatnonzero(mask)
        if targets.size > _numel(src_shape):
            refuse_call(fn, f"source has {_numel(src_shape)} elements, fewer than the mask's {targets.size}")
        sources = np.arange(targets.size)
    elif kind == "put":
        targets, sources = _flat_index(fn, shape, _index(fn, a.get("index"), by_name), src_shape)
    else:
        targets, sources = _put_index(fn, shape, a.get("indices"), by_name, src_shape)
    return _scatter_nodes(fn, fn.name, self_node.name, shape, getattr(src, "name", None), src_shape, src_value,
                          np.asarray(targets, np.int64),
                          np.asarray(sources, np.int64), reduce, include_self, alpha)

