"""Calls ptec has no kernel for, written in the fx graph as calls it runs
(issue 15), before capture_view_writes reads the graph:

- torch.diagonal_scatter / select_scatter / slice_scatter /
  as_strided_scatter (and their Tensor methods): torch's definition, a
  copy of the input with the view written, `y = x.clone();
  y.diagonal(o, d1, d2).copy_(src)`; capture_view_writes runs that write
  through the view (as_strided: its constant gather, capture_strided), so
  the bounds are those of the in-place writes. A slice_scatter without
  step is refused on torch 1.13, whose default step is undefined.
- torch.gradient(x, spacing=, dim=, edge_order=) with a constant spacing
  (a number, a list of numbers, or constant coordinate tensors, one per
  dim): along each dim a product by the constant matrix torch's gradient of
  the identity gives (its interior and edge rules, computed by torch in
  float64), one F.linear over that dim; its result pieces read by index.
  Coordinates computed from the input (1-D, one per dim): torch's
  non-uniform rule in element-wise ops (_nonuniform); a computed number
  as spacing is refused by name.
- torch.cumulative_trapezoid / trapezoid / trapz(y, x, dim) with sample
  points x computed from the input (constant x is capture_trapezoid's one
  linear): torch's own composition, ((x[1:] - x[:-1]) * (y[:-1] + y[1:]) /
  2).cumsum(dim) (or .sum(dim)), a 1-D x viewed along dim and a lower-rank
  x padded with leading 1s as torch does, in slices (narrow), subtraction,
  products and a cumsum or sum.
- torch.cholesky_inverse(L, upper=) as torch.cholesky_solve of the
  identity: capture_matrix_functions' fp32 kernels then compute it.
  (torch.linalg.ldl_factor runs on its own kernel: capture_ldl.)
(tensorinv, tensorsolve, householder_product: capture_matrix_compositions;
torch.linalg.cholesky_ex and torch.geqrf: capture_compact_factors.)
"""
from __future__ import annotations

import operator
from typing import Callable, List, Optional

import torch
import torch.fx
import torch.nn.functional as F

from .capture_trapezoid import TRAPEZOIDS
from .ir import UnsupportedOperator

# torch 1.13's slice_scatter leaves its default step undefined (measured: one element written, none, or
# "slice step must be positive", from one call to the next)
_OLD_TORCH = tuple(int(v) for v in torch.__version__.split(".")[:2]) < (2, 0)
_SCATTERS = {"diagonal_scatter", "select_scatter", "slice_scatter", "as_strided_scatter"}
# each scatter's arguments after (input, src), with torch's defaults
_SCATTER_ARGS = {"diagonal_scatter": (("offset", 0), ("dim1", 0), ("dim2", 1)),
                 "select_scatter": (("dim", None), ("index", None)),
                 "slice_scatter": (("dim", 0), ("start", None), ("end", None), ("step", 1)),
                 "as_strided_scatter": (("size", None), ("stride", None), ("storage_offset", None))}


def _name_of(fn: torch.fx.Node) -> Optional[str]:
    if fn.op == "call_method":
        return fn.target
    if fn.op == "call_function":
        return getattr(fn.target, "__name__", None)
    return None


def _source(fn: torch.fx.Node) -> str:
    return f"{fn.name} ({'Tensor.' if fn.op == 'call_method' else 'torch.'}{_name_of(fn)})"


def _shape(fn) -> Optional[List[int]]:
    meta = fn.meta.get("tensor_meta") if isinstance(fn, torch.fx.Node) else None
    return [int(s) for s in meta.shape] if meta is not None and hasattr(meta, "shape") else None


def _args(fn: torch.fx.Node, names):
    """fn's arguments after its first two by name (positional or keyword,
    else their defaults)."""
    out = {}
    for i, (k, default) in enumerate(names):
        out[k] = fn.args[2 + i] if len(fn.args) > 2 + i else fn.kwargs.get(k, default)
    return out


def _scatter_as_write(gm: torch.fx.GraphModule, fn: torch.fx.Node) -> bool:
    """x.X_scatter(src, ...) as `y = x.clone(); y.<view>(...).copy_(src)`."""
    kind = _name_of(fn)
    if kind not in _SCATTERS or fn.op not in ("call_function", "call_method"):
        return False
    if fn.op == "call_function" and fn.target is not getattr(torch, kind, None):
        return False
    x = fn.args[0] if fn.args else fn.kwargs.get("input")
    src = fn.args[1] if len(fn.args) > 1 else fn.kwargs.get("src")
    a = _args(fn, _SCATTER_ARGS[kind])
    extra = set(fn.kwargs) - {"input", "src"} - set(a)
    if not isinstance(x, torch.fx.Node) or not isinstance(src, torch.fx.Node) or extra:
        return False
    xs, ss = _shape(x), _shape(src)
    if xs is None or ss is None:
        return False
    if kind == "diagonal_scatter":
        view = ("call_method", "diagonal", (a["offset"], a["dim1"], a["dim2"]))
    elif kind == "select_scatter":
        view = ("call_method", "select", (a["dim"], a["index"]))
    elif kind == "slice_scatter":
        if not isinstance(a["dim"], int):
            return False
        if len(fn.args) < 6 and "step" not in fn.kwargs and _OLD_TORCH:
            raise UnsupportedOperator(f"operator not supported: {_source(fn)}: without step, torch 1.13's "
                                      "slice_scatter reads an undefined step (it writes one element, none, or "
                                      "raises, from run to run); give step=1")
        d = a["dim"] % len(xs)
        view = ("call_function", operator.getitem, ((slice(None),) * d + (slice(a["start"], a["end"], a["step"]),),))
    else:
        view = ("call_method", "as_strided", (a["size"], a["stride"])
                + ((a["storage_offset"],) if a["storage_offset"] is not None else ()))
    if not _same_as_torch(fn, kind, view, x, xs, ss):
        return False        # torch's own error: the model fails at its run
    g = gm.graph
    with g.inserting_before(fn):
        y = g.call_method("clone", (x,))
        v = g.create_node(view[0], view[1], (y,) + view[2])
        g.call_method("copy_", (v, src))
    fn.replace_all_uses_with(y)
    g.erase_node(fn)
    return True


def _same_as_torch(fn, kind, view, x, xs, ss) -> bool:
    """Refuse the rewrite when torch's own call writes other positions
    than the view (a check of the rewrite on torch itself, at the traced
    shapes)."""
    meta = x.meta["tensor_meta"]
    base = torch.empty_strided(xs, tuple(meta.stride), dtype=torch.float64).zero_()
    src = torch.arange(1, 1 + int(torch.Size(ss).numel()), dtype=torch.float64).reshape(ss)
    args = [fn.args[i] for i in range(2, len(fn.args))]
    try:
        want = getattr(torch, kind)(base, src, *args, **{k: v for k, v in fn.kwargs.items()
                                                         if k not in ("input", "src")})
    except Exception:       # noqa: BLE001 - torch's own error: the model fails at its run
        return False
    got = base.clone()
    target = view[1] if view[0] == "call_function" else getattr(torch.Tensor, view[1])
    try:
        target(got, *view[2]).copy_(src)
    except Exception:       # noqa: BLE001 - no such view: refused below
        got = None
    if got is None or not torch.equal(got, want):
        raise UnsupportedOperator(f"operator not supported: {_source(fn)}: torch's result is not the input with "
                                  "src written through the view its arguments name")
    return True


def _constant(gm, v):
    """The value of a constant argument (a number, a tensor attribute, a list
    of them), or None when it is computed from the inputs."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    if isinstance(v, (list, tuple)):
        vals = [_constant(gm, e) for e in v]
        return None if any(e is None for e in vals) else list(vals)
    if isinstance(v, torch.fx.Node) and not _depends_on_input(v):
        t = _made(gm, v)
        return t.detach().to(torch.float64) if isinstance(t, torch.Tensor) and t.is_floating_point() \
            or isinstance(t, torch.Tensor) and t.dtype in (torch.int64, torch.int32) else None
    if isinstance(v, torch.Tensor):
        return v.detach().to(torch.float64)
    return None


# calls whose value is a draw or undefined: not a constant of the program
_DRAWS = ("rand", "normal", "bernoulli", "poisson", "multinomial", "empty", "uniform", "exponential", "dropout")


def _made(gm, v):
    """The value of node v, which reads no input: a tensor attribute, or
    torch's calls on constants (torch.arange(8.) * 0.5), else None."""
    if not isinstance(v, torch.fx.Node):
        return v
    if v.op == "get_attr":
        t = gm
        for part in v.target.split("."):
            t = getattr(t, part, None)
        return t
    if v.op not in ("call_function", "call_method"):
        return None
    name = v.target if isinstance(v.target, str) else getattr(v.target, "__name__", "")
    if any(d in name for d in _DRAWS):
        return None
    args = torch.fx.node.map_arg(v.args, lambda n: _made(gm, n))
    kwargs = torch.fx.node.map_arg(v.kwargs, lambda n: _made(gm, n))
    try:
        with torch.no_grad():
            return getattr(args[0], v.target)(*args[1:], **kwargs) if v.op == "call_method" \
                else v.target(*args, **kwargs)
    except Exception:       # noqa: BLE001 - not a constant this can compute: refused as computed
        return None


def _readers_by_index(fn: torch.fx.Node) -> bool:
    """Every reader of fn takes one piece by a constant index."""
    return all(u.op == "call_function" and u.target is operator.getitem and len(u.args) == 2
               and isinstance(u.args[1], int) for u in fn.users)


def gradient_matrix(n: int, spacing, edge_order: int) -> torch.Tensor:
    """[n, n]: row i the weights of the samples in torch.gradient's value at
    sample i (torch's own rules, in float64); spacing a number or the n
    coordinates."""
    eye = torch.eye(n, dtype=torch.float64)
    s = spacing if isinstance(spacing, float) else spacing.reshape(-1)
    return torch.gradient(eye, spacing=(s,), dim=0, edge_order=edge_order)[0]


def _gradient_as_linear(gm: torch.fx.GraphModule, fn: torch.fx.Node) -> bool:
    """torch.gradient(x, spacing=, dim=, edge_order=) read by index: each
    dim's piece x times a constant matrix over that dim."""
    if fn.op != "call_function" or fn.target is not torch.gradient or not fn.args:
        return False
    x = fn.args[0]
    shape = _shape(x)
    if not isinstance(x, torch.fx.Node) or shape is None or len(fn.args) > 1 \
            or set(fn.kwargs) - {"spacing", "dim", "edge_order"} or not _readers_by_index(fn):
        return False
    spacing, dim, edge = (fn.kwargs.get(k, d) for k, d in (("spacing", 1.0), ("dim", None), ("edge_order", 1)))
    dims = list(range(len(shape))) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    if not all(isinstance(d, int) for d in dims) or edge not in (1, 2):
        return False
    dims = [d % len(shape) for d in dims]
    value = _constant(gm, spacing)
    if value is None and _computed_coordinates(gm, fn, x, shape, spacing, dims, edge):
        return True
    if value is None:
        raise UnsupportedOperator(f"operator not supported: {_source(fn)}: its spacing is not a constant "
                                  "(computed from the input, or a draw); ptec runs torch.gradient with a constant spacing (a number, a list "
                                  "of numbers or constant coordinate tensors)")
    per_dim = value if isinstance(value, list) else [value]
    if len(per_dim) == 1 and len(dims) > 1:
        per_dim = per_dim * len(dims)
    if len(per_dim) != len(dims):
        return False        # torch's own error at its run
    if any(shape[d] < edge + 1 for d in dims):
        return False        # torch's own error at its run
    g, pieces = gm.graph, []
    with g.inserting_before(fn):
        for k, (d, s) in enumerate(zip(dims, per_dim)):
            weight = gradient_matrix(shape[d], s, edge).to(torch.float32)
            w = g.get_attr(_buffer(gm, fn, k, weight))
            last = x if d == len(shape) - 1 else g.call_method("movedim", (x, d, -1))
            out = g.call_function(F.linear, (last, w))
            pieces.append(out if d == len(shape) - 1 else g.call_method("movedim", (out, -1, d)))
    for u in list(fn.users):
        u.replace_all_uses_with(pieces[u.args[1]])
        g.erase_node(u)
    g.erase_node(fn)
    return True


def _nonuniform(f, c, dim: int, rank: int, edge: int):
    """torch.gradient of f along dim at the coordinates c (1-D, computed in
    the program): torch's rules. h = c[1:] - c[:-1]; interior
    (h_l^2 f[i+1] - h_r^2 f[i-1] + (h_r^2 - h_l^2) f[i]) / (h_l h_r (h_l + h_r));
    edges one-sided: edge_order 1 the first differences over h, 2 the
    three-point rules of the first and last two steps."""
    n = c.shape[0]

    def along(v):           # a 1-D value viewed on dim of f
        return v.reshape([1] * dim + [-1] + [1] * (rank - dim - 1))

    def fs(start, length):
        return f.narrow(dim, start, length)
    h = c.narrow(0, 1, n - 1) - c.narrow(0, 0, n - 1)
    hl, hr = along(h.narrow(0, 0, n - 2)), along(h.narrow(0, 1, n - 2))
    inner = (hl * hl * fs(2, n - 2) - hr * hr * fs(0, n - 2) + (hr * hr - hl * hl) * fs(1, n - 2)) \
        / (hl * hr * (hl + hr))
    if edge == 1:
        first = (fs(1, 1) - fs(0, 1)) / along(h.narrow(0, 0, 1))
        last = (fs(n - 1, 1) - fs(n - 2, 1)) / along(h.narrow(0, n - 2, 1))
    else:
        a, b = along(h.narrow(0, 0, 1)), along(h.narrow(0, 1, 1))
        first = (-(2.0 * a + b) / (a * (a + b))) * fs(0, 1) + ((a + b) / (a * b)) * fs(1, 1) \
            + (-a / (b * (a + b))) * fs(2, 1)
        a, b = along(h.narrow(0, n - 2, 1)), along(h.narrow(0, n - 3, 1))       # the last step, the one before
        last = (a / (b * (a + b))) * fs(n - 3, 1) + (-(a + b) / (a * b)) * fs(n - 2, 1) \
            + ((2.0 * a + b) / (a * (a + b))) * fs(n - 1, 1)
    return torch.cat([first, inner, last], dim)


def _computed_coordinates(gm, fn, x, shape, spacing, dims, edge) -> bool:
    """torch.gradient with coordinates computed in the program (one 1-D
    tensor per dim, each the dim's length; constant ones by their matrix):
    each dim's piece _nonuniform's composition, traced and copied into the
    graph. False for anything else (the refusal above)."""
    per_dim = list(spacing) if isinstance(spacing, (list, tuple)) else [spacing]
    if len(per_dim) == 1 and len(dims) > 1 or len(per_dim) != len(dims) or any(shape[d] < 3 for d in dims):
        return False
    for d, c in zip(dims, per_dim):
        if not isinstance(c, torch.fx.Node) or not _depends_on_input(c) or _shape(c) != [shape[d]]:
            return False
    g, pieces, rank = gm.graph, [], len(shape)
    with g.inserting_before(fn):
        for d, c in zip(dims, per_dim):
            body = _traced_body(d, rank, shape[d], edge)
            holders = [n for n in body.graph.nodes if n.op == "placeholder"]
            pieces.append(g.graph_copy(body.graph, {holders[0]: x, holders[1]: c}))
    for u in list(fn.users):
        u.replace_all_uses_with(pieces[u.args[1]])
        g.erase_node(u)
    g.erase_node(fn)
    return True


def _traced_body(dim: int, rank: int, n: int, edge: int) -> torch.fx.GraphModule:
    class _Body(torch.nn.Module):
        def forward(self, f, c):
            return _nonuniform(f, _Sized(c, n), dim, rank, edge)
    return torch.fx.symbolic_trace(_Body())


class _Sized:
    """A traced 1-D value whose length the composition reads (fx proxies
    have no shape)."""

    def __init__(self, v, n):
        self.v, self.shape = v, (n,)

    def narrow(self, d, start, length):
        return self.v.narrow(d, start, length)


def _depends_on_input(v) -> bool:
    seen, todo = set(), [v]
    while todo:
        n = todo.pop()
        if not isinstance(n, torch.fx.Node) or n in seen:
            continue
        seen.add(n)
        if n.op == "placeholder":
            return True
        todo.extend(n.all_input_nodes)
    return False


def _trapezoid(gm: torch.fx.GraphModule, fn: torch.fx.Node) -> bool:
    """torch.cumulative_trapezoid / trapezoid / trapz(y, x, dim) with x
    computed from the input, as torch composes it: dim wrapped by y's rank,
    a 1-D x viewed along dim, a lower-rank x padded with leading 1s, then
    (dx * (y[:-1] + y[1:]) / 2) summed or cumsummed over dim."""
    if fn.op != "call_function" or not fn.args:
        return False
    try:
        cumulative = TRAPEZOIDS.get(fn.target)
    except TypeError:
        return False
    if cumulative is None:
        return False
    y = fn.args[0]
    x = fn.args[1] if len(fn.args) > 1 else fn.kwargs.get("x")
    dim = fn.args[2] if len(fn.args) > 2 else fn.kwargs.get("dim", -1)
    ys, xs = _shape(y), _shape(x)
    if not isinstance(x, torch.fx.Node) or not _depends_on_input(x) or ys is None or xs is None \
            or not isinstance(dim, int) or set(fn.kwargs) - {"x", "dim"}:
        return False
    d = dim % len(ys)
    n = ys[d]
    if n < 2:
        return False        # torch's zeros (or its error): no function of y to compose
    g = gm.graph
    with g.inserting_before(fn):
        if len(xs) == 1:
            xv, m = g.call_method("view", (x, [n if i == d else 1 for i in range(len(ys))])), n
        elif len(xs) < len(ys):
            padded = [1] * (len(ys) - len(xs)) + xs
            xv, m = g.call_method("view", (x, padded)), padded[d]
        else:
            xv, m = x, xs[d]        # torch slices x by y's dim as it is
        dx = g.call_function(operator.sub, (g.call_function(torch.narrow, (xv, d, 1, m - 1)),
                                            g.call_function(torch.narrow, (xv, d, 0, m - 1))))
        both = g.call_function(operator.add, (g.call_function(torch.narrow, (y, d, 0, n - 1)),
                                              g.call_function(torch.narrow, (y, d, 1, n - 1))))
        areas = g.call_function(operator.truediv, (g.call_function(operator.mul, (dx, both)), 2.0))
        out = g.call_method("cumsum" if cumulative else "sum", (areas, d))
    fn.replace_all_uses_with(out)
    g.erase_node(fn)
    return True


def _buffer(gm, fn, k, value: torch.Tensor) -> str:
    attr = f"_ptec_{fn.name}_{k}"
    gm.register_buffer(attr, value.to(torch.float32))
    return attr


def _fn_is(fn, function, method: Optional[str] = None) -> bool:
    return (fn.op == "call_function" and fn.target is function) or (method is not None and fn.op == "call_method"
                                                                    and fn.target == method)


def _bound(fn, names):
    """fn's arguments by name (torch's order), or None for out= or others."""
    if len(fn.args) > len(names) or set(fn.kwargs) - set(names):
        return None
    got = dict(zip(names, fn.args))
    got.update(fn.kwargs)
    return got


def _cholesky_inverse(gm, fn) -> bool:
    """torch.cholesky_inverse(L, upper=) = (L L^T)^-1: cholesky_solve of
    the identity (its two triangular solves, capture_matrix_functions)."""
    if not _fn_is(fn, torch.cholesky_inverse, "cholesky_inverse"):
        return False
    got = _bound(fn, ("input", "upper"))
    shape = _shape(got.get("input")) if got else None
    if shape is None or len(shape) < 2 or shape[-1] != shape[-2]:
        return False
    g = gm.graph
    with g.inserting_before(fn):
        eye = g.get_attr(_buffer(gm, fn, "identity", torch.eye(shape[-1])))
        new = g.call_function(torch.cholesky_solve, (eye, got["input"]), {"upper": got.get("upper", False)})
    fn.replace_all_uses_with(new)
    g.erase_node(fn)
    return True


def composed_calls(gm: torch.fx.GraphModule, propagate: Callable[[], None]) -> None:
    """Rewrite the calls above in gm's graph; propagate() records the new
    nodes' shapes when any was made."""
    changed = False
    for fn in list(gm.graph.nodes):
        changed |= (_scatter_as_write(gm, fn) or _gradient_as_linear(gm, fn) or _trapezoid(gm, fn)
                    or _cholesky_inverse(gm, fn))
    if changed:
        gm.graph.lint()
        gm.recompile()
        propagate()
