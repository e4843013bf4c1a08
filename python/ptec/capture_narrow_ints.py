"""Calls on int16 / uint8 / int8 values (issue 15): `i.short() + 1`,
`i.byte() * 3`, `-i.char()`, `b < 3`, `s * 0.5`, `s // 7`, views, cat,
stack, where, sorts of them, computed in int64 and wrapped back.

torch computes `s + 1` (s int16) in int16 with two's-complement
wrap-around. Every such value fits int64 exactly, so the int64 result of
the same call, cast into the narrow dtype (its low bits: the kernel
dim_order_ops::_to_dim_order_copy), is torch's: for + - * neg abs pow
bitwise ops and << (the ring of integers mod 2^k), for views, cat,
stack, where, index, sort, topk, max and min (they only move or order the
values, and int64 orders them as the narrow type does), for // and % (the
operands fit the result dtype, so the exact quotient is torch's before the
wrap, -128 // -1 as int8 included: 128 wraps to -128), for comparisons
(bool) and for float math (`s * 0.5`, `s / 3`: torch converts the value
into float32, exactly, as int64's float copy does).

A Python int operand of such a call is converted by torch into the
computing dtype first (its low bits: `b // -3` with b uint8 is b // 253,
`b < 300` is b < 44): the pass writes that converted value into the call
(where it matters: //, %, comparisons, shifts; + - * and bitwise ops give
the same low bits either way).

The pass (before capture lowers the fx graph): every call reading an
int16 / uint8 / int8 tensor that is not itself a cast reads its int64
copy (`s.long()`), and its value of narrow dtype (or its tuple's getitem
of narrow dtype) is cast back (`.to(dtype)`): so the narrow value between
two calls is the tensor of its own dtype, and each call runs on int64
kernels. A bool cast into a narrow dtype and read as numbers
(`(x > 0).byte() + 1`) casts the bool's int64 0 / 1 (`m.long()`). A narrow value read as a mask or condition is torch 1.13's
boolean reading of it, `b.long() != 0` (or the bool b was cast from):
a uint8 index `x[b]`, where's uint8 condition, masked_select's uint8
mask, masked_fill's and masked_scatter's uint8 / int8 / int16 mask (0 or
1: torch raises on another value, ptec reads it as True). Kept out,
refused in one line: an int8 / int16 index or where condition (torch
refuses them: only long, byte or bool index; a bool condition); a shift
by a tensor or by a Python int outside 0 ... 31 (torch 1.13 shifts a
narrow value as a 32-bit C int: by 32 or more its result is the CPU's,
e.g. int8 5 << 32 is 5 on x86; by 8 ... 31 it equals the int64 shift
wrapped, int8 1 << 7 is -128, 1 << 8 is 0)."""
from __future__ import annotations

import operator
from typing import Optional

import torch
import torch.fx

from .capture_modules import ptec_state, ptec_state_write

_NARROW = (torch.int16, torch.uint8, torch.int8)
_CASTS = ("short", "byte", "char", "double", "long", "int", "float", "to", "type", "half", "bool")
# calls whose Python int operand torch converts into the computing dtype, where that matters
_SCALAR_WRAPPED = ("floordiv", "floor_divide", "mod", "remainder", "fmod", "lt", "le", "gt", "ge", "eq", "ne",
                   "__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__", "__floordiv__", "__mod__",
                   "lshift", "rshift", "__lshift__", "__rshift__", "bitwise_left_shift", "bitwise_right_shift",
                   "add", "sub", "mul", "__add__", "__sub__", "__mul__", "and_", "or_", "xor",
                   "bitwise_and", "bitwise_or", "bitwise_xor", "__and__", "__or__", "__xor__")
_SHIFTS = ("lshift", "rshift", "__lshift__", "__rshift__", "bitwise_left_shift", "bitwise_right_shift")


def _dtype(a) -> Optional[torch.dtype]:
    meta = a.meta.get("tensor_meta") if isinstance(a, torch.fx.Node) else None
    return getattr(meta, "dtype", None)


def _name(fn: torch.fx.Node) -> str:
    if fn.op == "call_method":
        return fn.target
    return getattr(fn.target, "__name__", str(fn.target))


def _narrow(a) -> bool:
    return _dtype(a) in _NARROW


def _kept_out(fn: torch.fx.Node) -> bool:
    """A call that reads a narrow value otherwise than as integers (a mask,
    a condition), or shifts by a tensor amount: left to capture_int_casts."""
    name = _name(fn)
    if fn.op == "call_function" and fn.target is operator.getitem:
        return _index_narrow(fn.args[1:])
    if name == "where":
        return bool(fn.args) and _narrow(fn.args[0]) or _narrow(fn.kwargs.get("condition"))
    if name in ("masked_fill", "masked_fill_", "masked_select", "masked_scatter"):
        return any(_narrow(a) for a in fn.args[1:2]) or _narrow(fn.kwargs.get("mask"))
    if name in _SHIFTS:
        return shift_refusal(fn) is not None
    return False


def shift_refusal(fn: torch.fx.Node) -> Optional[str]:
    """Why a shift of a narrow value is refused, or None: torch 1.13 shifts
    an int16 / uint8 / int8 value as a 32-bit C int, so by 32 or more its
    result follows the CPU's shift (by the amount mod 32 on x86), not the
    integer's; a tensor amount may be any."""
    if _name(fn) not in _SHIFTS or not any(_narrow(a) for a in fn.args[:1]):
        return None
    amount = fn.args[1] if len(fn.args) > 1 else fn.kwargs.get("other")
    if isinstance(amount, int) and not isinstance(amount, bool) and 0 <= amount <= 31:
        return None
    return (f"a shift of an int16 / uint8 / int8 value by {amount if isinstance(amount, int) else 'a tensor'}: "
            f"torch 1.13 shifts it as a 32-bit C int (by 32 or more: the CPU's result); ptec shifts such a value "
            f"by a Python int from 0 to 31 only")


def _index_narrow(index) -> bool:
    found = []
    torch.fx.node.map_arg(index, lambda a: found.append(a) or a)
    return any(_narrow(a) for a in found)


_MASKED_ANY = ("masked_fill", "masked_fill_", "masked_scatter", "masked_scatter_")


def _long(g: torch.fx.Graph, a: torch.fx.Node, longs) -> torch.fx.Node:
    if a not in longs:
        with g.inserting_after(a):
            longs[a] = g.call_method("long", (a,))
    return longs[a]


def _read_as_bool(g: torch.fx.Graph, fn: torch.fx.Node, longs) -> bool:
    """A narrow value fn reads as a mask or condition, as torch 1.13 does:
    torch reads a uint8 index, where's uint8 condition and masked_select's
    uint8 mask as booleans (nonzero: True), and masked_fill's and
    masked_scatter's uint8 / int8 / int16 mask too (0 or 1 only, else torch
    raises "Mask tensor can take 0 and 1 values only"; ptec reads any
    nonzero as True). fn then reads `m.long() != 0` there. An int8 / int16
    index, condition or masked_select mask torch refuses, so it stays kept
    out (refused). True when fn changed."""
    name = _name(fn)
    if fn.op not in ("call_function", "call_method"):
        return False

    def as_bool(a):
        if _is_cast(a) and a.args and _dtype(a.args[0]) is torch.bool:
            return a.args[0]                  # (x > 0).byte(): 0 or 1, the bool itself
        with g.inserting_before(fn):
            return g.call_method("ne", (_long(g, a, longs), 0))

    def u8(a):
        return isinstance(a, torch.fx.Node) and _dtype(a) is torch.uint8

    if fn.op == "call_function" and fn.target is operator.getitem and len(fn.args) == 2:
        found = []
        torch.fx.node.map_arg(fn.args[1], lambda a: found.append(a) or a)
        if not any(u8(a) for a in found):
            return False
        fn.args = (fn.args[0], torch.fx.node.map_arg(fn.args[1], lambda a: as_bool(a) if u8(a) else a))
        return True
    if name == "where":
        key = 0 if fn.args else "condition"
    elif name == "masked_select" or name in _MASKED_ANY:
        key = 1 if len(fn.args) > 1 else "mask"
    else:
        return False
    m = fn.args[key] if isinstance(key, int) else fn.kwargs.get(key)
    if not (u8(m) or name in _MASKED_ANY and _narrow(m)):
        return False
    if isinstance(key, int):
        fn.args = fn.args[:key] + (as_bool(m),) + fn.args[key + 1:]
    else:
        fn.kwargs = {**fn.kwargs, key: as_bool(m)}
    return True


def _is_cast(fn: torch.fx.Node) -> bool:
    return fn.op == "call_method" and fn.target in _CASTS


def _dtype_view(fn: torch.fx.Node) -> bool:
    """x.view(dtype): it reads x's own bytes (capture_dtype_view), never an int64 copy."""
    return fn.op == "call_method" and fn.target == "view" and any(
        isinstance(a, torch.dtype) for a in list(fn.args[1:]) + list(fn.kwargs.values()))


def _wrapped(v: int, dtype: torch.dtype) -> int:
    """A Python int converted into dtype as torch does (its low bits)."""
    bits = {torch.int16: 16, torch.uint8: 8, torch.int8: 8}[dtype]
    v &= (1 << bits) - 1
    return v - (1 << bits) if dtype is not torch.uint8 and v >= 1 << (bits - 1) else v


def widen_narrow_ints(gm: torch.fx.GraphModule, propagate) -> None:
    """Calls on int16 / uint8 / int8 values as int64 calls cast back (the
    module doc); propagate: shapes and dtypes traced again after a change."""
    g = gm.graph
    changed = False
    longs = {}
    for fn in list(g.nodes):
        if fn.op not in ("call_function", "call_method") or _is_cast(fn) or _dtype_view(fn):
            continue
        if fn.target in (ptec_state, ptec_state_write):
            continue                # a narrow buffer's state is kept in its dtype (capture_integer_states)
        changed = _read_as_bool(g, fn, longs) or changed
        read = []
        torch.fx.node.map_arg((fn.args, fn.kwargs), lambda a: read.append(a) or a)
        narrow = [a for a in read if _narrow(a)]
        if not narrow or _kept_out(fn) or fn.meta.get("ptec_int64_selection"):
            continue                # the marked selection (capture_unique_narrow) copies any element size
        tensors = [torch.zeros((), dtype=_dtype(a) or torch.float32) for a in read if _dtype(a) is not None]
        name = _name(fn)
        compute = None
        rounded = name in ("div", "divide") and fn.kwargs.get("rounding_mode") is not None   # b.div(-3, rounding_mode="floor")
        if (name in _SCALAR_WRAPPED or rounded) and len(fn.args) == 2:
            ints = [a for a in fn.args if isinstance(a, int) and not isinstance(a, bool)]
            compute = torch.result_type(tensors[0], ints[0]) if ints and len(tensors) == 1 else None
            if compute not in _NARROW:
                compute = None
        for a in narrow:
            _long(g, a, longs)
        args = torch.fx.node.map_arg(fn.args, lambda a: longs.get(a, a))
        if compute is not None:
            args = tuple(_wrapped(a, compute) if isinstance(a, int) and not isinstance(a, bool) else a
                         for a in args)
        fn.args = args
        fn.kwargs = torch.fx.node.map_arg(fn.kwargs, lambda a: longs.get(a, a))
        changed = True
        outs = [fn] if _dtype(fn) in _NARROW else \
            [u for u in fn.users if u.op == "call_function" and u.target is operator.getitem
             and _dtype(u) in _NARROW]
        for o in outs:
            dtype = _dtype(o)
            with g.inserting_after(o):
                back = g.call_method("to", (o, dtype))
            o.replace_all_uses_with(back, delete_user_cb=lambda u: u is not back)
            back.meta = dict(o.meta)
    for fn in reversed(list(g.nodes)):       # casts whose reads became their bools', unread now
        if _is_cast(fn) and not fn.users and _dtype(fn) in _NARROW:
            g.erase_node(fn)
    changed = _bool_casts_via_long(g) or changed
    changed = _float_casts_via_int32(g) or changed
    if changed:
        g.lint()
        gm.recompile()
        propagate()


def _bool_casts_via_long(g: torch.fx.Graph) -> bool:
    """A bool value cast into int16 / uint8 / int8 and read as numbers
    (`(x > 0).byte() + 1`): the cast reads the bool's int64 copy (0 or 1,
    `m.long()`), so it is the int64 -> narrow cast of capture_int_casts;
    the narrow value is torch's (0 or 1 of its dtype). True when changed."""
    changed = False
    for fn in list(g.nodes):
        if _is_cast(fn) and fn.users and _dtype(fn) in _NARROW and fn.args \
                and isinstance(fn.args[0], torch.fx.Node) and _dtype(fn.args[0]) is torch.bool:
            with g.inserting_before(fn):
                as_long = g.call_method("long", (fn.args[0],))
            fn.args = (as_long,) + fn.args[1:]
            changed = True
    return changed


_FLOATS = (torch.float32, torch.float16, torch.bfloat16, torch.float64)


def _float_casts_via_int32(g: torch.fx.Graph) -> bool:
    """A float value (float32; a half / bfloat16 / float64 one is its float32 copy) cast into int16 / uint8 / int8 (`(y * 255).round().byte()`,
    `x.to(torch.int16)`): the cast reads the value's int32 copy (`x.int()`,
    capture_indices' to_index: truncation toward zero), then wraps it as
    capture_int_casts' int32 -> narrow cast (its low bits). torch 1.13 on
    x86 converts through a 32-bit int the same way (300.0 as uint8 is 44,
    -1.5 is 255, 40000.0 as int16 is -25536), so every value inside the
    int32 range is torch's; a NaN, an infinity or a value outside int32
    fails the run (to_index's InvalidArgument) where torch gives 0
    (docs/aot.md). True when changed."""
    changed = False
    for fn in list(g.nodes):
        if _is_cast(fn) and fn.users and _dtype(fn) in _NARROW and fn.args \
                and isinstance(fn.args[0], torch.fx.Node) and _dtype(fn.args[0]) in _FLOATS:
            with g.inserting_before(fn):
                as_int = g.call_method("int", (fn.args[0],))
            fn.args = (as_int,) + fn.args[1:]
            changed = True
    return changed
