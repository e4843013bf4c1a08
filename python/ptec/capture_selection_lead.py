"""Readers of a 1-D selection given leading dims of 1 (issue 15):
`s.unsqueeze(0) * 2`, `torch.sigmoid(s[None])`, `s[None].sum(1)`,
`s[None].softmax(-1)`, `s[None].cumsum(1)`, `s[None] + b` (b of one
element), `s.unsqueeze(0).unsqueeze(0)`, with s a selection x[mask] (or a
value computed from one) of variable length n.

A view U of s as [1, ..., 1, n] holds s's elements in order, and so does
any value with at most one dim above 1. So a reader R of U is, in torch's
own terms, a reader R' of s (or of s viewed [n, 1, ..., 1] when R works
along a dim of size 1) followed by a reshape to R's shape, its dim
arguments moved to the matching dims: `s[None].sum(1)` is
`s.sum(0).reshape(1)`, `s[None].cumsum(1)` is `s.cumsum(0).reshape(1, -1)`,
`s[None].softmax(0)` is `s.view(-1, 1).softmax(1).reshape(1, -1)`, an
element-wise op of U the op of s reshaped. That rewrite is made on the
torch.fx graph before capture, and the selection machinery
(capture_masked_select and the capture_selection_* modules) then computes
R' over x as for any reader of s; the reshape at the end, when it keeps the
varying length last, is again a view with leading ones, which runs as a
program output (capture_selection_row_output) or is lifted again.

Each rewrite is first checked on torch itself: R of U and R' of s (values,
dtypes, and R's shapes giving one varying dim between ones, or no varying
dim) must agree for counts 0, 1, 2, 3, 5, 8 and the example's, with random
values (the other operands random of their traced shapes), or both raise;
a reader failing that check is left as it is and refused naming it
(capture_masked_select.refuse_consumers), as a reader giving the varying
length beside another dim above 1 (`s[None] + b` of b [3, 1]).

A row selection s [n, C...] (`boxes[m]`, varying along its first dim)
viewed [1, ..., 1, n, C...] is lifted the same way: R of U is R' of s (a
dim d of U past the ones is s's d - k; a dim of the ones is one of s viewed
[n, C..., 1, ..., 1]) followed by a reshape to R's shape, whose varying dim
may be followed by fixed dims above 1 but only preceded by ones
(`boxes[m][None] * 2` is `(boxes[m] * 2).reshape(1, -1, C)`, a program
output capture_selection_row_output runs; `boxes[m][None].sum(1)` is
`boxes[m].sum(0).reshape(1, C)`); a reader giving [k, n, C] (k > 1) is
refused as the 1-D case's.

A view of a selection spelling its length with a literal number
(`s.view(1, 24)`, `s.reshape(24, 1)`, the example's count) is refused in
one line: torch raises for any other count, and taking it for -1 would
silently run a program torch refuses."""
from __future__ import annotations

import operator
import warnings
from typing import Dict, List, Optional, Set, Tuple

import torch
import torch.fx
from torch.fx.operator_schemas import normalize_function

from .capture_shape_numbers import _is_selection, _varying

_LENGTHS = (0, 1, 2, 3, 5, 8)
_DIM_NAMES = ("dim", "dims", "dim0", "dim1")
_VIEW_TARGETS = ("view", "reshape", torch.reshape)


def _shape(fn) -> Optional[List[int]]:
    meta = fn.meta.get("tensor_meta") if isinstance(fn, torch.fx.Node) else None
    shape = getattr(meta, "shape", None)
    return None if shape is None else [int(v) for v in shape]


def _call(fn: torch.fx.Node, args, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # x.T of a 1-D value, ...: torch's deprecation notes
        if fn.op == "call_method":
            return getattr(args[0], fn.target)(*args[1:], **kwargs)
        return fn.target(*args, **kwargs)


class _Values:
    """fx nodes evaluated for a given s: those computed from s by calls, the
    module's attributes, shape numbers; any other tensor random of its
    traced shape and dtype (one value per node, the same for every count)."""

    def __init__(self, gm: torch.fx.GraphModule, s: torch.fx.Node, from_s: Set[str]):
        self.gm, self.s, self.from_s = gm, s, from_s
        self.others: Dict[str, object] = {}
        self.gen = torch.Generator().manual_seed(15)

    def other(self, fn: torch.fx.Node):
        if fn.name not in self.others:
            if fn.op == "get_attr":
                val = self.gm
                for part in fn.target.split("."):
                    val = getattr(val, part)
                self.others[fn.name] = val
            elif isinstance(fn.meta.get("number"), (int, float)):
                self.others[fn.name] = fn.meta["number"]
            else:
                meta = fn.meta.get("tensor_meta")
                if getattr(meta, "shape", None) is None:
                    raise LookupError(fn.name)
                shape, dtype = list(meta.shape), meta.dtype
                if dtype == torch.bool:
                    v = torch.rand(shape, generator=self.gen) > 0.5
                elif dtype.is_floating_point:
                    v = torch.randn(shape, generator=self.gen).to(dtype)
                else:
                    v = torch.randint(-3, 4, shape, generator=self.gen).to(dtype)
                self.others[fn.name] = v
        return self.others[fn.name]

    def run(self, fn: torch.fx.Node, env: Dict[str, object]):
        if fn.name in env:
            return env[fn.name]
        if fn.name not in self.from_s or fn.op not in ("call_function", "call_method"):
            return self.other(fn)
        args = torch.fx.node.map_arg(fn.args, lambda a: self.run(a, env))
        kwargs = torch.fx.node.map_arg(fn.kwargs, lambda a: self.run(a, env))
        env[fn.name] = _call(fn, args, kwargs)
        return env[fn.name]


def _from(gm: torch.fx.GraphModule, s: torch.fx.Node) -> Set[str]:
    out = {s.name}
    for fn in gm.graph.nodes:
        if any(a.name in out for a in fn.all_input_nodes):
            out.add(fn.name)
    return out


def _sample(length: int, gen, rest=()) -> torch.Tensor:
    return torch.randn([length] + list(rest), generator=gen) * 2


def _rest(s: torch.fx.Node) -> List[int]:
    """s's dims after its varying first one ([] for a 1-D s, [C] for rows [n, C])."""
    return _shape(s)[1:]


def _leading(gm: torch.fx.GraphModule, u: torch.fx.Node, varying: Set[str]) -> Optional[Tuple[torch.fx.Node, int]]:
    """(s, k) when u views a varying value s as [1] * k + s's shape (k >= 1):
    a 1-D s as [1, ..., 1, n], or a row selection s [n, C...] (varying along
    its first dim) as [1, ..., 1, n, C...]; checked on torch for several
    counts; else None."""
    shape = _shape(u)
    if u.op not in ("call_function", "call_method") or shape is None or len(shape) < 2 or u.name not in varying:
        return None
    inputs = [a for a in u.all_input_nodes if _shape(a) is not None and a.name in varying]
    if len(inputs) != 1 or not _shape(inputs[0]):
        return None
    s = inputs[0]
    rest = _rest(s)
    k = len(shape) - 1 - len(rest)
    if k < 1 or any(v != 1 for v in shape[:k]) or shape[k + 1:] != rest:
        return None
    values = _Values(gm, s, _from(gm, s))
    gen = torch.Generator().manual_seed(1)
    for n in _LENGTHS + (_shape(s)[0],):
        x = _sample(n, gen, rest)
        try:
            got = values.run(u, {s.name: x})
        except Exception:           # noqa: BLE001 - torch refuses this count: not a view of any count
            return None
        if not isinstance(got, torch.Tensor) or list(got.shape) != [1] * k + [n] + rest \
                or not torch.equal(got.reshape(-1), x.reshape(-1)):
            return None
    return s, k


def _dims(fn: torch.fx.Node) -> Optional[Dict[Tuple[str, object], object]]:
    """{(where, key): dim value} of fn's dim arguments (where "a" an args
    position, "k" a kwarg), found by torch's own signature; None when the
    signature is not known."""
    target = getattr(torch, fn.target, None) if fn.op == "call_method" else fn.target
    if target is None or not callable(target):
        return None
    def kind(a):
        if isinstance(a, torch.fx.Node):
            return torch.Tensor
        if isinstance(a, (tuple, list)):
            return List[int]
        return type(a)
    pair = None
    for types in ((tuple(kind(a) for a in fn.args), {k: kind(v) for k, v in fn.kwargs.items()}), (None, None)):
        try:
            pair = normalize_function(target, tuple(fn.args), dict(fn.kwargs), arg_types=types[0],
                                      kwarg_types=types[1], normalize_to_only_use_kwargs=True)
        except Exception:          # noqa: BLE001 - a signature torch cannot bind
            pair = None
        if pair is not None:
            break
    if pair is None:
        return None
    names = list(pair.kwargs)
    out = {}
    for i, _ in enumerate(fn.args):
        if i < len(names) and names[i] in _DIM_NAMES:
            out[("a", i)] = fn.args[i]
    for k, v in fn.kwargs.items():
        if k in _DIM_NAMES:
            out[("k", k)] = v
    return out


def _moved(d, rank: int, k: int, wide: bool):
    """A dim of U [1] * k + S (S s's shape, of rank - k dims) as the dim of
    s (wide False: S's dims only) or of s viewed S + [1] * k (wide)."""
    if isinstance(d, (tuple, list)):
        got = [_moved(v, rank, k, wide) for v in d]
        return None if any(v is None for v in got) else type(d)(got)
    if not isinstance(d, int) or isinstance(d, bool):
        return None
    d %= rank
    if rank > k + 1:          # a row selection's [1, n, C...]: its dims follow the ones
        return d - k if d >= k else (rank - k + d if wide else None)
    if d == rank - 1:
        return 0
    return d + 1 if wide else None


def _flat_results(value) -> Optional[List[torch.Tensor]]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, tuple) and value and all(isinstance(v, torch.Tensor) for v in value):
        return list(value)
    return None


def _agree(a, b) -> bool:
    return a.dtype == b.dtype and a.numel() == b.numel() and \
        torch.allclose(a.reshape(-1).double(), b.reshape(-1).double(), rtol=1e-5, atol=1e-5, equal_nan=True)


def _targets(shapes: Dict[int, List[List[int]]], count: int, rows: bool = False) -> Optional[List[Tuple[int, ...]]]:
    """Per result: the reshape target (-1 at the varying dim) from its shapes
    at each count; None unless each has at most one varying dim, between
    ones (rows: after ones only, the dims after it fixed: [1, n, C])."""
    out = []
    for i in sorted(shapes):
        seen = shapes[i]
        at_count = [sh for n, sh in seen if n == count]
        if not at_count:
            return None
        if all(sh == at_count[0] for _, sh in seen):
            out.append(tuple(at_count[0]))
            continue
        ranks = {len(sh) for _, sh in seen}
        if len(ranks) != 1:
            return None
        moving = {d for d in range(ranks.pop()) if len({sh[d] for _, sh in seen}) > 1}
        if len(moving) != 1:
            return None
        d = moving.pop()
        if any(sh[d] != n or any(v != 1 for j, v in enumerate(sh) if j != d and (j < d or not rows))
               for n, sh in seen):
            return None
        out.append(tuple(-1 if j == d else v for j, v in enumerate(at_count[0])))
    return out


def _lift(gm: torch.fx.GraphModule, u: torch.fx.Node, s: torch.fx.Node, k: int, r: torch.fx.Node,
          leads: Dict[str, Tuple[torch.fx.Node, int]]) -> bool:
    """r (a reader of u) made r' of s, reshaped; False when no form checks."""
    if r.op not in ("call_function", "call_method"):
        return False
    getters = list(r.users)
    tuple_out = _flat_results_meta(r)
    if tuple_out and any(g.op != "call_function" or g.target is not operator.getitem or not isinstance(g.args[1], int)
                         for g in getters):
        return False
    # the lifted operands: u and other views with k leading ones of values varying alike
    lifted = {a.name: leads[a.name][0] for a in r.all_input_nodes if a.name in leads and leads[a.name][1] == k}
    if u.name not in lifted:
        return False
    rest = _rest(s)
    rank = k + 1 + len(rest)
    dims = _dims(r)
    forms = [("plain", None)]
    if dims:
        forms += [("last", False), ("wide", True)]
    from_s: Set[str] = set()
    for base in set(lifted.values()):
        from_s |= _from(gm, base)
    count = _shape(s)[0]
    for form, wide in forms:
        new_dims = {}
        if form != "plain":
            new_dims = {key: _moved(v, rank, k, wide) for key, v in dims.items()}
            if any(v is None for v in new_dims.values()):
                continue
        shapes: Dict[int, list] = {}
        whole_view = True
        ok = True
        gen = torch.Generator().manual_seed(2)
        values = _Values(gm, s, from_s | set(lifted))
        ran = set()
        for n in _LENGTHS + (count,):
            env, env2 = {}, {}
            for base in dict.fromkeys(lifted.values()):
                x = _sample(n, gen, rest)
                env[base.name] = env2[base.name] = x
            for name, base in lifted.items():
                x = env[base.name]
                env[name] = x.reshape([1] * k + [n] + rest)
                env2[name] = x.reshape([n] + rest + [1] * k) if wide else x
            try:
                want = _flat_results(values.run(r, dict(env)))
                if want is None:
                    return False
                raised = False
            except Exception:       # noqa: BLE001 - torch refuses this count
                want, raised = None, True
            try:
                args = torch.fx.node.map_arg(r.args, lambda a: values.run(a, env2))
                kwargs = torch.fx.node.map_arg(r.kwargs, lambda a: values.run(a, env2))
                args, kwargs = _with_dims(list(args), dict(kwargs), new_dims)
                got = _flat_results(_call(r, args, kwargs))
            except Exception:       # noqa: BLE001
                got = None
            if raised or got is None:
                if raised and got is None and n != count:
                    continue
                ok = False
                break
            ran.add(n)
            if len(got) != len(want) or not all(_agree(a, b) for a, b in zip(want, got)):
                ok = False
                break
            for i, w in enumerate(want):
                shapes.setdefault(i, []).append((n, list(w.shape)))
            only = env[next(iter(lifted.values())).name]
            whole_view = whole_view and len(lifted) == 1 and len(want) == 1 and want[0].dtype == only.dtype \
                and torch.equal(want[0].reshape(-1), only.reshape(-1))
        if ok and len(ran) < 3:      # a size spelled as the example's count (view(1, 1, 24)): torch's own refusal
            return False
        if not ok:
            continue
        targets = _targets(shapes, count, rows=bool(rest))
        if targets is None or (tuple_out and len(targets) < 2) or (not tuple_out and len(targets) != 1):
            return False
        g = gm.graph
        with g.inserting_before(r):
            if whole_view and not tuple_out:
                # a view of a view: one view of s
                out = g.call_method("reshape", (s, targets[0]))
                r.replace_all_uses_with(out)
                g.erase_node(r)
                return True
            ins = {}
            for name, base in lifted.items():
                ins[name] = g.call_method("reshape", (base, (-1,) + tuple(rest) + (1,) * k)) if wide else base
            args = torch.fx.node.map_arg(r.args, lambda a: ins.get(a.name, a))
            kwargs = torch.fx.node.map_arg(r.kwargs, lambda a: ins.get(a.name, a))
            args, kwargs = _with_dims(list(args), dict(kwargs), new_dims)
            made = g.create_node(r.op, r.target, tuple(args), kwargs)
            flat = wide and not rest      # rows: the result reshaped to its target directly
            if flat and any(-1 in tg for tg in targets):
                # the rows [n, 1, ...] of s viewed wide, made 1-D again (a view keeping its elements)
                made_flat = g.call_method("reshape", (made, (-1,))) if not tuple_out else None
            if not tuple_out:
                out = g.call_method("reshape", (made_flat if flat and -1 in targets[0] else made, targets[0]))
                r.replace_all_uses_with(out)
                g.erase_node(r)
                return True
        for getter in getters:
            with g.inserting_before(getter):
                piece = g.call_function(operator.getitem, (made, getter.args[1]))
                if wide and not rest and -1 in targets[getter.args[1]]:
                    piece = g.call_method("reshape", (piece, (-1,)))
                out = g.call_method("reshape", (piece, targets[getter.args[1]]))
            getter.replace_all_uses_with(out)
            g.erase_node(getter)
        g.erase_node(r)
        return True
    return False


def _flat_results_meta(r: torch.fx.Node) -> bool:
    """r traced a tuple (torch.max(u, 1), u.sort(1))."""
    meta = r.meta.get("tensor_meta")
    return isinstance(meta, (tuple, list)) and not hasattr(meta, "shape")      # (TensorMetadata is a tuple)


def _with_dims(args: list, kwargs: dict, new_dims):
    for (where, key), v in new_dims.items():
        if where == "a":
            args[key] = v
        else:
            kwargs[key] = v
    return args, kwargs


def _selection_behind(fn: torch.fx.Node) -> Optional[torch.fx.Node]:
    """The selection fn is, or is computed from element by element (each
    step of fn's shape), else None."""
    shape = _shape(fn)
    while shape:
        if _is_selection(fn):
            return fn
        same = [a for a in fn.all_input_nodes if _shape(a) == shape]
        if len(same) != 1 or fn.op not in ("call_function", "call_method"):
            return None
        fn = same[0]
    return None


def literal_views(gm: torch.fx.GraphModule, error) -> None:
    """Raises `error` for a view or reshape of a selection (or of a value
    computed from it element by element) whose sizes are all literal
    numbers (the module docstring)."""
    for fn in gm.graph.nodes:
        if fn.op not in ("call_function", "call_method") or fn.target not in _VIEW_TARGETS or not fn.args \
                or not isinstance(fn.args[0], torch.fx.Node):
            continue
        sel = _selection_behind(fn.args[0])
        if sel is None:
            continue
        shape = fn.args[1:] if fn.target != torch.reshape else fn.args[1:2]
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        if shape and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in shape):
            what = fn.target if isinstance(fn.target, str) else fn.target.__name__
            sizes = ", ".join(str(v) for v in shape)
            raise error(f"operator not supported: {fn.name} ({what}({sizes})) of {sel.name}, a selection "
                        "x[mask] whose length changes from run to run, spells its sizes as numbers (the "
                        "example's count): torch raises for any other count; spell the length -1")


def lift_leading_ones(gm: torch.fx.GraphModule, propagate) -> bool:
    """Rewrites each reader of a view [1, ..., 1, n] of a varying 1-D value
    it can (the module docstring); True when any changed (the graph's
    shapes need propagating again)."""
    changed = False
    for _ in range(200):
        varying = _varying(gm)
        leads = {}
        for fn in gm.graph.nodes:
            found = _leading(gm, fn, varying) if fn.name in varying else None
            if found is not None:
                leads[fn.name] = found
        progress = False
        for name, (s, k) in leads.items():
            u = next(fn for fn in gm.graph.nodes if fn.name == name)
            for r in list(u.users):
                if r.op != "output" and _lift(gm, u, s, k, r, leads):
                    progress = changed = True
                    for fn in list(gm.graph.nodes):     # the views it read, now read by nothing
                        if fn.name in leads and not fn.users:
                            gm.graph.erase_node(fn)
                    gm.recompile()
                    propagate()     # the new nodes' traced shapes
                    break
            if progress:
                break
        if not progress:
            break
    return changed
