"""In-place ops on a fresh copy as their out-of-place op (issue 15):
x.clone().add_(1), `y = x.clone(); y.mul_(2); return y`, torch.relu_(y),
y += 1 on a clone. A clone shares its bytes with nothing, so writing into it
changes no other value: the in-place op is the out-of-place op, and the
readers of the copy after the write read its result.

The fx graph is changed before capture reads it: the in-place node's
target becomes the out-of-place one (its traced shape is the same), and
the copy's later readers read that node. An in-place op on anything else
(the model's input, a view sharing the bytes of another value), or on a
copy that something other than arithmetic read before the write (a view
of it would see the write), stays as it is and is refused by name;
arithmetic before the write (x.clone() - 1) reads the value before it.
zero_() and fill_(v) on a copy are the constants zeros_like / full_like,
copy_(z) is z broadcast to the copy's shape (expand_as)."""
from __future__ import annotations

import operator
from typing import Optional, Tuple

import torch
import torch.fx
import torch.nn.functional as F

# in-place methods whose name without "_" means something else
_NOT_THE_SAME = {"bernoulli_", "resize_", "resize_as_", "set_", "as_strided_"}
# calls whose result is a new tensor, never a view of an operand
_NEW_VALUE = {operator.add, operator.sub, operator.mul, operator.truediv, operator.neg, operator.pow, operator.abs,
              operator.matmul}
_NEW_VALUE_NAMES = {"add", "sub", "mul", "div", "neg", "abs", "pow", "clamp", "clip", "relu", "sigmoid", "tanh", "exp",
                    "log", "sqrt", "rsqrt", "square", "sum", "mean", "amax", "amin", "softmax", "matmul", "maximum",
                    "minimum", "sin", "cos", "floor", "ceil", "round", "sign", "clone"}
# writes of a constant: the constant of the copy's shape
_FILLS = {"zero_": torch.zeros_like, "fill_": torch.full_like}
_AUGMENTED = {"__iadd__": operator.add, "__isub__": operator.sub, "__imul__": operator.mul,
              "__itruediv__": operator.truediv}


def out_of_place(fn: torch.fx.Node) -> Optional[Tuple[str, object]]:
    """(op, target) of the out-of-place form of in-place call fn, or None."""
    t = fn.target
    if fn.op == "call_method" and t in _AUGMENTED:
        return "call_function", _AUGMENTED[t]
    if fn.op == "call_method" and t in _FILLS:
        return "call_function", _FILLS[t]
    if fn.op == "call_method" and t == "copy_" and len(fn.args) == 2 and isinstance(fn.args[1], torch.fx.Node) \
            and set(fn.kwargs) <= {"non_blocking"}:
        return "call_method", "expand_as"
    if fn.op == "call_method" and isinstance(t, str) and t.endswith("_") and not t.startswith("_") \
            and t not in _NOT_THE_SAME and callable(getattr(torch.Tensor, t[:-1], None)):
        return "call_method", t[:-1]
    name = getattr(t, "__name__", "") if fn.op == "call_function" else ""
    if name.endswith("_") and not name.startswith("_") and name not in _NOT_THE_SAME:
        for home in (torch, F):
            if getattr(home, name, None) is t and callable(getattr(home, name[:-1], None)):
                return "call_function", getattr(home, name[:-1])
    return None


def _new_value(fn: torch.fx.Node) -> bool:
    if fn.op == "call_function" and fn.target in _NEW_VALUE:
        return True
    name = fn.target if fn.op == "call_method" else getattr(fn.target, "__name__", None) \
        if fn.op == "call_function" else None
    if fn.op == "call_function" and getattr(torch, name or "", None) is not fn.target:
        return False
    return name in _NEW_VALUE_NAMES


def _is_clone(fn: torch.fx.Node) -> bool:
    return (fn.op == "call_method" and fn.target == "clone") or (fn.op == "call_function" and fn.target is torch.clone)


def fresh_in_place(gm: torch.fx.GraphModule) -> None:
    """Each in-place op on a fresh copy (a clone, or an in-place op already
    made out-of-place here) as its out-of-place op; the copy's readers after
    it read its result."""
    order = {fn: i for i, fn in enumerate(gm.graph.nodes)}
    fresh = {fn for fn in gm.graph.nodes if _is_clone(fn)}
    changed = False
    for fn in list(gm.graph.nodes):
        form = out_of_place(fn) if fn.args else None
        copy = fn.args[0] if form is not None else None
        if not isinstance(copy, torch.fx.Node) or copy not in fresh:
            continue
        others = [u for u in copy.users if u is not fn]
        if any(order[u] < order[fn] and not _new_value(u) for u in others):
            continue                        # read before the write: a view of it would see the write
        for u in others:
            if order[u] > order[fn]:
                u.replace_input_with(copy, fn)
        fn.op, fn.target = form
        if form == ("call_method", "expand_as"):        # y.copy_(z): z broadcast to y's shape
            fn.args, fn.kwargs = (fn.args[1], fn.args[0]), {}
        fresh.add(fn)
        changed = True
    if changed:
        gm.recompile()
