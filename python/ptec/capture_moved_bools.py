"""Moved bools read as bools (probe items 7, 8): a bool (a comparison, a
logical op, a bool model input) moved by flip, roll, a slice with a step,
permute / transpose / t() / rot90, expand / repeat / tile /
repeat_interleave, unbind / split pieces, gathers by integer indices
(index_select, gather, take, take_along_dim, `m[:, [2, 0, 1]]`, `m[idx]`), cat or stack (with constant or
computed bools), F.pad with False / True, and then read by torch.where,
masked_fill, `&` / `|` / `^` / `~`, any / all / sum / count_nonzero, an
attention mask or a program output: `key_padding_mask =
torch.cat([zeros(n, 1, dtype=bool), mask], 1)` for a CLS token,
`torch.cat([ones(1, dtype=bool), a[1:] != a[:-1]]) & (a != 0)` (CTC).

ptec moves a bool's bytes only through views (reshape, squeeze, unsqueeze,
flatten), so the pass (a rewrite of the torch.fx graph before capture lowers
it) moves the bool as float 0 / 1 instead and reads it back as a bool: the
moved bool b becomes `moved(b.float()) != 0`, each bool the moves start from
cast with .float(), a bool pad value as 0.0 / 1.0. Torch's value exactly:
moves copy elements and casting commutes with them, and on an int8 grid 0 is
its zero point exactly (a requantized 0 stays the zero point), while 1 is
another code (the grid's range holds 0 and at most 1, so its step is far
below 1; a grid calibrated on 0s alone saturates 1 to its top code), so
`!= 0` (capture_bool's comparison, exact on the codes) gives the bool back.
Chains of views only, and chains of constants only, stay as they are."""
from __future__ import annotations

import builtins
import operator
from typing import Dict, List

import torch
import torch.fx
import torch.nn.functional as F

from .capture_bool_moves import _dtype, _is_move, _piece

# views ptec already moves as bool bytes: a chain of these alone stays a bool
_VIEW_METHODS = ("view", "reshape", "squeeze", "unsqueeze", "flatten", "detach")
_VIEW_FUNCTIONS = (torch.reshape, torch.squeeze, torch.unsqueeze, torch.flatten, torch.detach)
_JOINS = (torch.cat, torch.stack, torch.hstack, torch.vstack, torch.concat)
_PADS = (F.pad, torch.constant_pad_nd)


def _target_in(fn: torch.fx.Node, table) -> bool:
    try:
        return fn.op == "call_function" and fn.target in table
    except TypeError:                     # an unhashable target is none of these
        return False


def _other_tensors(args) -> bool:
    return any(isinstance(a, torch.fx.Node) and _dtype(a) is not None for a in args)


def _join(fn: torch.fx.Node) -> bool:
    """torch.cat / stack of bools into a bool."""
    if not _target_in(fn, _JOINS) or not fn.args or not isinstance(fn.args[0], (list, tuple)) \
            or _dtype(fn) is not torch.bool:
        return False
    return all(isinstance(p, torch.fx.Node) and _dtype(p) is torch.bool for p in fn.args[0]) \
        and not _other_tensors(list(fn.args[1:]) + list(fn.kwargs.values()))


def _pad(fn: torch.fx.Node) -> bool:
    """F.pad(b, pad) / F.pad(b, pad, value=False or True) of a bool b, constant mode."""
    if not _target_in(fn, _PADS) or not fn.args or not isinstance(fn.args[0], torch.fx.Node) \
            or _dtype(fn.args[0]) is not torch.bool or _dtype(fn) is not torch.bool:
        return False
    args = dict(zip(("input", "pad", "mode", "value"), fn.args), **fn.kwargs)
    return args.get("mode", "constant") == "constant" and isinstance(args.get("value", None), (bool, int, float,
                                                                                              type(None))) \
        and not _other_tensors([args.get("pad")])


_MORE = ("roll", "tile", "repeat_interleave", "rot90")
_MORE_FUNCTIONS = (torch.roll, torch.tile, torch.repeat_interleave, torch.rot90)


def _roll(fn: torch.fx.Node) -> bool:
    """b.roll(shifts, dims) / torch.roll, tile, repeat_interleave (a number of
    repeats) and rot90 of a bool b."""
    named = (fn.op == "call_method" and fn.target in _MORE) or _target_in(fn, _MORE_FUNCTIONS)
    return named and bool(fn.args) and isinstance(fn.args[0], torch.fx.Node) and _dtype(fn.args[0]) is torch.bool \
        and _dtype(fn) is torch.bool and not _other_tensors(list(fn.args[1:]) + list(fn.kwargs.values()))


_GATHERS = ("index_select", "gather", "take", "take_along_dim")
_GATHER_FUNCTIONS = (torch.index_select, torch.gather, torch.take, torch.take_along_dim)
_INDEX_DTYPES = (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8)


def _index_items(index) -> bool:
    """A getitem index holding an integer list or an integer tensor (with ints,
    slices, None, ...): a gather (a bool mask index is no gather)."""
    items = index if isinstance(index, tuple) else (index,)
    gather = False
    for i in items:
        if isinstance(i, torch.fx.Node):
            if _dtype(i) not in _INDEX_DTYPES:
                return False
            gather = True
        elif isinstance(i, (list, tuple)):
            if not i or not all(isinstance(v, int) and not isinstance(v, bool) for v in i):
                return False
            gather = True
        elif not (i is None or i is Ellipsis or isinstance(i, (int, slice)) and not isinstance(i, bool)):
            return False
    return gather


def _gather(fn: torch.fx.Node) -> bool:
    """index_select / gather / take / take_along_dim of a bool b by integer
    indices, or b[:, [2, 0, 1]] / b[idx] (integer lists or tensors): elements
    of b picked by index, which commute with the cast as the other moves do."""
    if not fn.args or not isinstance(fn.args[0], torch.fx.Node) or _dtype(fn.args[0]) is not torch.bool \
            or _dtype(fn) is not torch.bool:
        return False
    if fn.op == "call_function" and fn.target is operator.getitem:
        return len(fn.args) == 2 and _index_items(fn.args[1])
    named = (fn.op == "call_method" and fn.target in _GATHERS) or _target_in(fn, _GATHER_FUNCTIONS)
    rest = list(fn.args[1:]) + list(fn.kwargs.values())
    return named and all(not isinstance(a, torch.fx.Node) or _dtype(a) in _INDEX_DTYPES for a in rest)


def _moves(fn: torch.fx.Node) -> bool:
    """fn makes a bool of the elements of bools (and bool constants) only."""
    return isinstance(fn, torch.fx.Node) and (_is_move(fn) or _piece(fn) or _join(fn) or _pad(fn) or _roll(fn)
                                              or _gather(fn))


def _view_only(fn: torch.fx.Node) -> bool:
    """A move ptec makes on the bool's own bytes: a reshape-like view, or a
    getitem of None / ... / whole slices."""
    if fn.op == "call_method":
        return fn.target in _VIEW_METHODS
    if fn.op == "call_function" and fn.target is operator.getitem and not _piece(fn):
        items = fn.args[1] if isinstance(fn.args[1], tuple) else (fn.args[1],)
        return all(i is None or i is Ellipsis or i == slice(None) for i in items)
    return _target_in(fn, _VIEW_FUNCTIONS)


def _sources(fn: torch.fx.Node) -> List[torch.fx.Node]:
    """The bools fn moves."""
    if _join(fn):
        return list(fn.args[0])
    if _piece(fn):
        return [fn.args[0].args[0]]
    return [fn.args[0]]


def _needs_numbers(fn: torch.fx.Node, computed) -> bool:
    """The moved bool fn holds a move other than a view, and reads a value of the program."""
    stack, moved, live, seen = [fn], False, False, set()
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        if _moves(n):
            moved = moved or not _view_only(n)
            stack += _sources(n)
        else:
            live = live or n in computed
    return moved and live


def moved_bools_compared(gm: torch.fx.GraphModule, propagate) -> None:
    """Each read of a moved bool as its moves made on float 0 / 1, compared
    != 0 (the module doc); propagate: shapes and dtypes traced again after a change."""
    g = gm.graph
    computed = set()
    for n in g.nodes:
        if n.op == "placeholder" or any(a in computed for a in n.all_input_nodes):
            computed.add(n)
    floats: Dict[torch.fx.Node, torch.fx.Node] = {}
    moved: List[torch.fx.Node] = []

    def make(like: torch.fx.Node, args, kwargs) -> torch.fx.Node:
        return g.create_node(like.op, like.target, tuple(args), dict(kwargs))

    def as_float(b: torch.fx.Node) -> torch.fx.Node:
        if b in floats:
            return floats[b]
        if not _moves(b):
            value = g.call_method("float", (b,))
        else:
            moved.append(b)
            if _join(b):
                value = make(b, [[as_float(p) for p in b.args[0]]] + list(b.args[1:]), b.kwargs)
            elif _piece(b):
                call = b.args[0]
                if call not in floats:
                    floats[call] = make(call, [as_float(call.args[0])] + list(call.args[1:]), call.kwargs)
                    moved.append(call)
                value = make(b, [floats[call], b.args[1]], {})
            elif _pad(b):
                args = dict(zip(("input", "pad", "mode", "value"), b.args), **b.kwargs)
                value = g.call_function(b.target, (as_float(b.args[0]), args["pad"]),
                                        dict(mode="constant", value=float(args.get("value") or 0)))
            elif b.target is builtins.getattr:      # .T / .mT: the attribute of the float
                value = make(b, [as_float(b.args[0]), b.args[1]], {})
            else:
                value = make(b, [as_float(b.args[0])] + list(b.args[1:]), b.kwargs)
        floats[b] = value
        return value

    changed = False
    for fn in list(g.nodes):
        if not _moves(fn):
            continue
        readers = [u for u in fn.users if not _moves(u)]
        if not readers or not _needs_numbers(fn, computed):
            continue
        with g.inserting_before(fn.next):
            back = g.call_function(operator.ne, (as_float(fn), 0.0))
        for u in readers:
            u.replace_input_with(fn, back)
        changed = True
    if not changed:
        return
    for n in reversed(list(g.nodes)):             # the bool moves nothing reads any more
        if n in moved and not n.users:
            g.erase_node(n)
    g.lint()
    gm.recompile()
    propagate()

