"""Integer readers of unique's counts (issue 15): `counts * 2`,
`counts // 2`, `counts > 1`, `counts.sum()`, `counts.max()`,
`counts.argmax()`, `counts.cumsum(0)`, and the unique value at a counts
position (`values[counts.argmax()]`, the most frequent value), rewritten in
the fx graph before capture into fixed-shape integer ops
(capture_int_math, capture_bool, capture_reductions).

The counts are `masked_select(c, keep)` (capture_unique_counts._counts,
marked `ptec_int64_selection`): c int64 [n], keep bool [n] set on its
first k places, k >= 1 (the sorted 0/1 of the run starts: a non-empty
prefix). So, with s = masked_select(c, keep):

- an element-wise op of s and Python numbers (+ - * // % neg abs, clamp,
  comparisons, int casts) is the same op of c, picked by keep: a new
  marked selection (int64 / int32 / bool), whose own readers are
  rewritten in turn;
- cumsum along 0 is c's cumsum picked by keep (a prefix's running sums are
  the first k of c's);
- sum is the sum of c where keep, 0 elsewhere (a bool s: c & keep);
  any / all of a bool s those of c & keep / c | ~keep;
- max / min / amax / amin and argmax / argmin (no dim, or dim 0 of the 1-D
  s) are those of c where keep, c[0] elsewhere: c[0] is s's first element,
  so the fill never changes a max / min and never wins an arg (ties: the
  first, as torch), and an argmax / argmin position lies in [0, k);
- `counts[m]` and `values[m]` of a comparison m of the counts
  (`values[counts > 1]`): c (values' v[starts], below) picked by keep and
  m's unpicked values (a selection again, no longer a prefix);
- `values[i]`, values the unique values torch.unique / unique_consecutive
  returned with the counts and i such a position: values' k elements are
  the (sorted) flattened input at the run starts, so values[i] is
  v[starts[i]] (capture_unique_counts keeps v and starts on values'
  node): a 0-d take of int8 codes, exact.

Readers left are refused by capture_unique_counts.int64_selection_nodes
(one line naming the reader)."""
from __future__ import annotations

import operator

import torch

_FLAG = "ptec_int64_selection"
COMPACT = "ptec_unique_compact"       # values' node: (v, starts, the counts' keep) nodes (capture_unique_counts)
_POSITION = "ptec_counts_position"    # an argmax / argmin of counts: a position in [0, k); its keep node
PREFIX = "ptec_prefix_pick"          # a marked selection whose keep is a non-empty prefix (the counts)

_ELEMENTWISE_FUNCTIONS = {operator.mul, operator.add, operator.sub, operator.floordiv, operator.mod, operator.neg,
                          operator.gt, operator.lt, operator.ge, operator.le, operator.eq, operator.ne,
                          torch.mul, torch.add, torch.sub, torch.floor_divide, torch.remainder, torch.neg, torch.abs,
                          torch.clamp, torch.gt, torch.lt, torch.ge, torch.le, torch.eq, torch.ne}
_ELEMENTWISE_METHODS = {"mul", "add", "sub", "floor_divide", "remainder", "neg", "abs", "clamp", "gt", "lt", "ge",
                        "le", "eq", "ne", "long", "int", "__mul__", "__add__", "__sub__", "__rsub__", "__rmul__",
                        "__radd__"}
_INTEGER = (torch.int64, torch.int32, torch.bool)


def _dtype(fn):
    return getattr(fn.meta.get("tensor_meta"), "dtype", None)


def _name(fn):
    if fn.op == "call_method":
        return fn.target
    if fn.op == "call_function":
        return getattr(fn.target, "__name__", None)
    return None


def _numbers(values) -> bool:
    return all(isinstance(a, (int, float)) and not isinstance(a, bool) or a is None for a in values)


def _dim0(fn, start: int) -> bool:
    """No dim, or dim 0 / -1 of the 1-D selection, without keepdim."""
    args = list(fn.args[start:])
    kw = dict(fn.kwargs)
    if kw.pop("keepdim", False) is not False or kw.pop("dtype", None) is not None:
        return False
    dims = args + ([kw.pop("dim")] if "dim" in kw else [])
    if kw or len(dims) > 1:
        return False
    return not dims or dims[0] in (0, -1, (0,), (-1,), [0], [-1])


def _select(g, v, keep, prefix):
    got = g.call_function(torch.masked_select, (v, keep))
    got.meta[_FLAG] = True
    got.meta[PREFIX] = prefix
    return got


def _rewrite(g, sel, user) -> bool:
    """user of the marked selection sel rewritten (True) or left."""
    v, keep = sel.args
    prefix = bool(sel.meta.get(PREFIX))
    name = _name(user)
    others_args = [a for a in user.args if a is not sel]
    in_args = sum(a is sel for a in user.args)
    if user.op not in ("call_function", "call_method") or in_args != 1 or sel in user.kwargs.values():
        return False
    out = _dtype(user)
    if user.op == "call_function" and user.target is operator.getitem and user.args[0] is sel:
        m = user.args[1]           # counts[counts > 1]: one pick by both masks (no longer a prefix)
        if not (isinstance(m, torch.fx.Node) and m.meta.get(_FLAG) and _dtype(m) is torch.bool
                and m.args[1] is keep):
            return False
        with g.inserting_before(user):
            made = _select(g, v, g.call_function(operator.and_, (keep, m.args[0])), False)
    elif (user.op == "call_function" and user.target in _ELEMENTWISE_FUNCTIONS
            or user.op == "call_method" and user.target in _ELEMENTWISE_METHODS):
        if out not in _INTEGER or not _numbers(others_args) or not _numbers(user.kwargs.values()):
            return False
        with g.inserting_before(user):
            made = _select(g, g.create_node(user.op, user.target, tuple(v if a is sel else a for a in user.args),
                                            dict(user.kwargs)), keep, prefix)
    elif name == "cumsum" and prefix and user.args[0] is sel and out in _INTEGER and not user.kwargs.get("dtype") \
            and [a for a in list(user.args[1:]) + list(user.kwargs.values())] in ([0], [-1]):
        with g.inserting_before(user):
            made = _select(g, g.create_node(user.op, user.target, (v,) + tuple(user.args[1:]), dict(user.kwargs)),
                           keep, True)
    elif name in ("sum", "any", "all", "max", "min", "amax", "amin", "argmax", "argmin") and user.args[0] is sel \
            and _dim0(user, 1) and (name != "sum" or out in (torch.int64,)) \
            and (prefix or name not in ("argmax", "argmin")):
        boolean = _dtype(sel) is torch.bool
        with g.inserting_before(user):
            if name in ("sum", "any") and boolean:
                filled = g.call_function(operator.and_, (v, keep))
            elif name == "all" and boolean:
                filled = g.call_function(operator.or_, (v, g.call_function(operator.invert, (keep,))))
            elif name == "sum":
                filled = g.call_function(operator.mul, (v, g.call_method("long", (keep,))))
            elif name in ("any", "all"):
                return False
            else:
                first = g.call_function(operator.getitem, (v, slice(None, 1, None)))
                filled = g.call_function(torch.where, (keep, v, first))
            made = g.create_node(user.op, user.target, (filled,) + tuple(user.args[1:]), dict(user.kwargs))
        if name in ("argmax", "argmin"):
            made.meta[_POSITION] = keep
    else:
        return False
    user.replace_all_uses_with(made)
    g.erase_node(user)
    return True


def _value_at(g, user) -> bool:
    """values[i] of unique's values at a counts position i: v[starts[i]];
    values[m] of a comparison m of the counts: v[starts] picked by keep & m's
    values (a float selection, or an integer one of integer values)."""
    if user.op != "call_function" or user.target is not operator.getitem or len(user.args) != 2:
        return False
    values, i = user.args
    if not isinstance(i, torch.fx.Node) or COMPACT not in values.meta:
        return False
    v, starts, keep = values.meta[COMPACT]
    if i.meta.get(_POSITION) is keep:             # a position of these counts
        with g.inserting_before(user):
            made = g.call_function(operator.getitem, (v, g.call_function(operator.getitem, (starts, i))))
    elif i.meta.get(_FLAG) and i.meta.get(PREFIX) and _dtype(i) is torch.bool and i.args[1] is keep:
        # values[counts > 1]: the compact values v[starts] picked where keep and the comparison
        with g.inserting_before(user):
            made = g.call_function(torch.masked_select, (g.call_function(operator.getitem, (v, starts)),
                                                         g.call_function(operator.and_, (keep, i.args[0]))))
        if _dtype(values) in _INTEGER:
            made.meta[_FLAG] = True
    else:
        return False
    user.replace_all_uses_with(made)
    g.erase_node(user)
    return True


def counts_readers(gm: torch.fx.GraphModule, propagate) -> bool:
    """Rewrites the readers of unique's counts it can (the module
    docstring); True when any changed (then the shapes are propagated)."""
    g = gm.graph
    changed = False
    for _ in range(200):
        progress = False
        for fn in list(g.nodes):
            if fn.op == "call_function" and fn.target is torch.masked_select and fn.meta.get(_FLAG):
                for user in list(fn.users):
                    if _rewrite(g, fn, user):
                        progress = True
                if progress and not fn.users:
                    g.erase_node(fn)
            if COMPACT in fn.meta:
                for user in list(fn.users):
                    progress = _value_at(g, user) or progress
            if progress:
                break
        if not progress:
            break
        changed = True
        for fn in list(g.nodes):              # picks left unread (values[counts > 1] read their mask)
            if fn.op == "call_function" and fn.target is torch.masked_select and fn.meta.get(_FLAG) \
                    and not fn.users:
                g.erase_node(fn)
        gm.recompile()
        propagate()
    return changed
