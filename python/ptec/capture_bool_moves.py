"""Casts of a moved bool (issue 15): `(x > 0).permute(0, 2, 1).float()`,
`(x > 0).transpose(1, 2).long()`, `(x > 0)[:, 1:3].int()`,
`(x[:, :1] > 0).expand(1, 4, 8).float()`.

ptec moves a computed bool's bytes only as numbers, so a cast of a bool
after a permute / transpose / slice / expand was refused. Moving values
and converting them commute (a move copies elements, a cast converts each
one alone): the pass (a rewrite of the torch.fx graph before capture
lowers it) casts the bool first and makes the same moves on the cast
value, `(x > 0).float().permute(0, 2, 1)`, torch's value exactly. The
moves are the calls below whose only tensor operand is the bool (a view's
sizes, expand_as's tensor read for its shape only, a getitem of ints,
slices, None and `...`); a chain the pass does not know stays as traced
(capture_bool refuses its cast in one line naming it)."""
from __future__ import annotations

import builtins
import operator
from typing import Optional

import torch
import torch.fx

_MOVE_METHODS = ("permute", "transpose", "t", "expand", "expand_as", "view", "reshape", "squeeze", "unsqueeze",
                 "flatten", "contiguous", "narrow", "movedim", "swapaxes", "swapdims", "flip", "detach", "clone",
                 "select", "unflatten", "repeat")
_MOVE_FUNCTIONS = (torch.permute, torch.transpose, torch.t, torch.squeeze, torch.unsqueeze, torch.flatten,
                   torch.reshape, torch.narrow, torch.movedim, torch.swapaxes, torch.flip, torch.select, torch.detach,
                   torch.broadcast_to)
_CAST_METHODS = ("float", "int", "long", "double", "half", "bfloat16", "short", "byte", "char", "to", "type")


def _dtype(a) -> Optional[torch.dtype]:
    meta = a.meta.get("tensor_meta") if isinstance(a, torch.fx.Node) else None
    return getattr(meta, "dtype", None)


def _plain_index(index) -> bool:
    items = index if isinstance(index, tuple) else (index,)
    return all(i is None or i is Ellipsis or isinstance(i, (int, slice)) and not isinstance(i, bool)
               and (not isinstance(i, slice) or all(isinstance(v, (int, type(None)))
                                                   for v in (i.start, i.stop, i.step)))
               for i in items)


def _is_move(fn: torch.fx.Node) -> bool:
    """fn moves the elements of its first argument, a bool, into a bool."""
    if not fn.args or not isinstance(fn.args[0], torch.fx.Node) or _dtype(fn.args[0]) is not torch.bool \
            or _dtype(fn) is not torch.bool:
        return False
    if fn.op == "call_method" and fn.target in _MOVE_METHODS:
        others = list(fn.args[1:]) + list(fn.kwargs.values())
        return all(not isinstance(a, torch.fx.Node) or _dtype(a) is None or fn.target == "expand_as"
                   for a in others)
    if fn.op == "call_function" and fn.target is operator.getitem:
        return len(fn.args) == 2 and _plain_index(fn.args[1])
    if fn.op == "call_function" and fn.target is builtins.getattr:
        return len(fn.args) == 2 and fn.args[1] in ("T", "mT")
    try:
        known = fn.op == "call_function" and fn.target in _MOVE_FUNCTIONS
    except TypeError:                     # an unhashable target is none of these
        return False
    return known and not any(isinstance(a, torch.fx.Node) and _dtype(a) is not None
                             for a in list(fn.args[1:]) + list(fn.kwargs.values()))


_PIECES = ("unbind", "split", "chunk", "tensor_split", "hsplit", "vsplit", "dsplit", "split_with_sizes")


def _piece(fn: torch.fx.Node) -> bool:
    """fn is `unbind(b)[k]` / `split(b, n)[k]` / `chunk(b, n)[k]` of a bool b."""
    if not (fn.op == "call_function" and fn.target is operator.getitem and len(fn.args) == 2
            and isinstance(fn.args[1], int) and isinstance(fn.args[0], torch.fx.Node)):
        return False
    call = fn.args[0]
    name = call.target if call.op == "call_method" else getattr(call.target, "__name__", "")
    return (call.op in ("call_method", "call_function") and name in _PIECES and bool(call.args)
            and isinstance(call.args[0], torch.fx.Node) and _dtype(call.args[0]) is torch.bool
            and not any(isinstance(a, torch.fx.Node) for a in list(call.args[1:]) + list(call.kwargs.values())))


def _transposed_dims(move: torch.fx.Node):
    """The dims of a transpose / swapaxes / t() / .T / .mT as a permute's, or None."""
    if move.target is builtins.getattr:
        name = move.args[1]
    else:
        name = move.target if move.op == "call_method" else getattr(move.target, "__name__", "")
    shape = getattr(move.args[0].meta.get("tensor_meta"), "shape", None)
    if name not in ("transpose", "swapaxes", "swapdims", "t", "T", "mT") or shape is None:
        return None
    rank = len(shape)
    if name == "T":
        return list(range(rank))[::-1]
    if name in ("t", "mT"):
        pair = (0, 1) if name == "t" else (-2, -1)
    else:
        pair = tuple(move.args[1:3]) if len(move.args) >= 3 else None
    if rank < 2 or pair is None or not all(isinstance(d, int) for d in pair):
        return None
    dims = list(range(rank))
    a, b = (d % rank for d in pair)
    dims[a], dims[b] = dims[b], dims[a]
    return dims


def _is_cast(fn: torch.fx.Node) -> bool:
    return (fn.op == "call_method" and fn.target in _CAST_METHODS and bool(fn.args)
            and _dtype(fn.args[0]) is torch.bool and _dtype(fn) not in (None, torch.bool))


def cast_bools_first(gm: torch.fx.GraphModule, propagate) -> None:
    """Each cast of a moved bool as the cast bool moved (the module doc);
    propagate: shapes and dtypes traced again after a change."""
    g = gm.graph
    changed = False
    for fn in list(g.nodes):
        if not _is_cast(fn) or not isinstance(fn.args[0], torch.fx.Node) \
                or not (_is_move(fn.args[0]) or _piece(fn.args[0])):
            continue
        chain, base = [], fn.args[0]
        while _is_move(base) or _piece(base):
            if _piece(base):                  # unbind(b)[k]: the call, then its getitem
                chain += [base, base.args[0]]
                base = base.args[0].args[0]
            else:
                chain.append(base)
                base = base.args[0]
        with g.inserting_before(fn):
            value = g.create_node(fn.op, fn.target, (base,) + tuple(fn.args[1:]), dict(fn.kwargs))
            for move in reversed(chain):
                dims = _transposed_dims(move)
                if dims is not None:              # as a permute: capture reads an int value's permute by its dims
                    value = g.call_method("permute", (value, *dims))
                else:
                    value = g.create_node(move.op, move.target, (value,) + tuple(move.args[1:]), dict(move.kwargs))
        fn.replace_all_uses_with(value)
        g.erase_node(fn)
        for move in chain:                    # the bool's moves, when nothing else reads them
            if not move.users:
                g.erase_node(move)
        changed = True
    if changed:
        g.lint()
        gm.recompile()
        propagate()


def _shape(a):
    return getattr(a.meta.get("tensor_meta"), "shape", None) if isinstance(a, torch.fx.Node) else None


def _scalar(c) -> bool:
    """A number, or a 0-d tensor value (`x[0, 0, 0]`: it broadcasts the same to any shape)."""
    if isinstance(c, torch.fx.Node):
        return _shape(c) is not None and len(_shape(c)) == 0 and _dtype(c) is not torch.bool
    return isinstance(c, (int, float)) and not isinstance(c, bool)


def _compared_operands(fn, pairs) -> Optional[tuple]:
    """The positions of the operands to move of fn, a comparison: (k,) for
    one non-bool tensor and a number or 0-d value (`x > 0.5`, `0.5 < x`,
    `x > x[0, 0]`), (0, 1) for two non-bool tensors of one shape
    (`x[..., 0] > x[..., 1]`; pairs: the comparisons this pass made of such
    moved pairs, whose new operands have no traced shape yet), else None."""
    from .capture_bool import _COMPARE
    if not isinstance(fn, torch.fx.Node) or fn.op not in ("call_function", "call_method") or fn.kwargs \
            or len(fn.args) != 2:
        return None
    try:
        if fn.target not in _COMPARE:
            return None
    except TypeError:                     # an unhashable target is none of these
        return None
    if fn in pairs:
        return (0, 1)
    a, b = fn.args
    if all(isinstance(t, torch.fx.Node) and _dtype(t) not in (None, torch.bool) for t in (a, b)) \
            and _shape(a) is not None and len(_shape(a)) > 0 and _shape(a) == _shape(b):
        return (0, 1)
    for k in (0, 1):
        t, c = fn.args[k], fn.args[1 - k]
        if isinstance(t, torch.fx.Node) and _dtype(t) is not torch.bool and _shape(t) != torch.Size([]) \
                and _scalar(c):
            return (k,)
    return None


def compares_after_moves(gm: torch.fx.GraphModule, propagate) -> None:
    """A moved comparison of a number, a 0-d value or a tensor of the same
    shape (moved too), `(x[..., 0] > 0.5).t()` as a
    key_padding_mask, `masked_fill(m.t(), -inf)` of m = s > 0: the
    comparison of the moved operand, `x[..., 0].t() > 0.5`. The value is
    torch's exactly (a comparison reads each element alone) and it is a
    comparison again, which the readers of a bool mask take (a moved bool
    is moved bytes: capture_attention_masks' softmax of the kept positions,
    a logical or, a where read a compare or logical node). Runs after
    cast_bools_first (a cast of a moved bool is its own); a chain of moves
    is taken one move at a time, in the graph's order."""
    g = gm.graph
    changed, pairs = False, set()
    for fn in list(g.nodes):
        if not _is_move(fn):
            continue
        cmp = fn.args[0]
        moving = _compared_operands(cmp, pairs)
        if moving is None:
            continue
        with g.inserting_before(fn):
            dims = _transposed_dims(fn)
            args = list(cmp.args)
            for k in moving:
                if dims is not None:              # as a permute: capture reads an int value's permute by its dims
                    moved = g.call_method("permute", (cmp.args[k], *dims))
                else:
                    moved = g.create_node(fn.op, fn.target, (cmp.args[k],) + tuple(fn.args[1:]), dict(fn.kwargs))
                args[k] = moved
            compared = g.create_node(cmp.op, cmp.target, tuple(args), {})
        if len(moving) == 2:
            pairs.add(compared)
        compared.meta = dict(fn.meta)             # the moved bool's shape and dtype (the next move of a chain)
        fn.replace_all_uses_with(compared)
        g.erase_node(fn)
        if not cmp.users:
            g.erase_node(cmp)
        changed = True
    if changed:
        g.lint()
        gm.recompile()
        propagate()
