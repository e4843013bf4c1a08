"""A magnitude of two tensors written out by hand, `torch.sqrt(a ** 2 + b ** 2)`
(also a * a, a.pow(2), torch.pow(a, 2), torch.square(a), `** 0.5` for the
root, either order of the terms), traced as the one call torch.hypot(a, b)
it equals, so it takes capture_binary_math's fp32 step (aten::hypot.out
between a dequantize and a quantize; probe 9). Step by step in int8 the
squares sat on a grid sized by the largest one and their sum on another:
a small magnitude's squares rounded to 0 (10-13 output steps off, and a
dB of it, 20 * log10(. + 1e-3), 120).

With a small constant inside the root, `sqrt(a ** 2 + b ** 2 + eps)`
(eps a Python number >= 0, in any position of the sum), the value is
hypot(hypot(a, b), sqrt(eps)) exactly in real arithmetic: the second
hypot reads the first and a constant tensor of sqrt(eps) like it
(torch.full_like), fp32 as well.

The 2-norm over the dim of a stack of two, torch.stack([re, im], d)
.norm(dim=d) (torch.norm, torch.linalg.norm / vector_norm, keepdim: an
unsqueeze after it), is the same hypot (was 9.7 output steps: a root of an
int8 sum of squares).

Only when every inner value (the squares, the partial sums, the stack) has
no other reader (they are then dropped)."""
from __future__ import annotations

import math
import operator
from typing import List, Optional, Tuple

import torch
import torch.fx

from .capture_norm_chains import is_call

_POW = (operator.pow, torch.pow, "pow")
_MUL = (operator.mul, torch.mul, "mul")
_SQUARE = (torch.square, "square")
_ADD = (operator.add, torch.add, "add")
_SQRT = (torch.sqrt, "sqrt")
_PURE = (operator.getitem, "select", torch.select, "narrow", torch.narrow, "flip", torch.flip)


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _same(a, b) -> bool:
    """a and b the same value: one node, or two traces of one pure step of
    the same values (x[:, 0] * x[:, 0] traces x[:, 0] twice)."""
    if a is b:
        return True
    if not isinstance(a, torch.fx.Node) or not isinstance(b, torch.fx.Node):
        return type(a) is type(b) and a == b if isinstance(a, (int, float, bool, str, type(None))) else \
            (isinstance(a, (tuple, list)) and type(a) is type(b) and len(a) == len(b)
             and all(_same(x, y) for x, y in zip(a, b))) or (isinstance(a, slice) and isinstance(b, slice)
                                                           and _same((a.start, a.stop, a.step), (b.start, b.stop, b.step)))
    return a.op == b.op and a.op in ("call_function", "call_method") and a.target in _PURE and a.target == b.target \
        and _same(a.args, b.args) and not a.kwargs and not b.kwargs


def _squared(fn) -> Optional[torch.fx.Node]:
    """x of x ** 2 / x.pow(2) / torch.pow(x, 2) / torch.square(x) / x * x, else None."""
    if fn.kwargs:
        return None
    if is_call(fn, _POW) and len(fn.args) == 2 and _number(fn.args[1]) and float(fn.args[1]) == 2.0:
        x = fn.args[0]
    elif is_call(fn, _SQUARE) and len(fn.args) == 1:
        x = fn.args[0]
    elif is_call(fn, _MUL) and len(fn.args) == 2 and _same(fn.args[0], fn.args[1]):
        x = fn.args[0]
    else:
        return None
    return x if isinstance(x, torch.fx.Node) else None


def _terms(fn, inner: List[torch.fx.Node]) -> Optional[List]:
    """The leaves of a tree of two-operand adds (inner adds read only by
    their parent, collected in inner), else None."""
    if not is_call(fn, _ADD) or len(fn.args) != 2 or fn.kwargs:
        return None
    out = []
    for a in fn.args:
        if is_call(a, _ADD) and list(a.users) == [fn]:
            inner.append(a)
            sub = _terms(a, inner)
            if sub is None:
                return None
            out.extend(sub)
        else:
            out.append(a)
    return out


def _match(root) -> Optional[Tuple[torch.fx.Node, torch.fx.Node, float, List[torch.fx.Node]]]:
    """(a, b, eps, the nodes the call replaces) of sqrt(a^2 + b^2 [+ eps]), else None."""
    if is_call(root, _SQRT) and len(root.args) == 1 and not root.kwargs:
        total = root.args[0]
    elif is_call(root, _POW) and len(root.args) == 2 and not root.kwargs and _number(root.args[1]) \
            and float(root.args[1]) == 0.5:
        total = root.args[0]
    else:
        return None
    if not isinstance(total, torch.fx.Node) or list(total.users) != [root]:
        return None
    inner: List[torch.fx.Node] = []
    leaves = _terms(total, inner)
    if leaves is None or len(leaves) not in (2, 3):
        return None
    squares = [v for v in leaves if isinstance(v, torch.fx.Node)]
    numbers = [v for v in leaves if not isinstance(v, torch.fx.Node)]
    if len(squares) != 2 or not all(_number(v) for v in numbers):
        return None
    eps = float(sum(numbers)) if numbers else 0.0
    if not math.isfinite(eps) or eps < 0.0:
        return None
    xs = []
    for sq in squares:
        x = _squared(sq)
        users = list(sq.users)
        if x is None or any(u is not total and u not in inner for u in users) or len(users) != 1:
            return None
        xs.append(x)
    # x[:, 0] * x[:, 0]: the second trace of x[:, 0] read only by the square goes with it
    twins = [sq.args[1] for sq in squares if is_call(sq, _MUL) and sq.args[1] is not sq.args[0]
             and list(sq.args[1].users) == [sq]]
    return xs[0], xs[1], eps, [root, total] + inner + squares + twins


def _norm_args(fn):
    """(x, dim, keepdim) of a 2-norm over one dim (x.norm(dim=d), torch.norm,
    torch.linalg.norm / vector_norm, p / ord 2 or the default), else None."""
    if not isinstance(fn, torch.fx.Node):
        return None
    t = fn.target
    if (fn.op == "call_method" and t == "norm") or (fn.op == "call_function" and t is torch.norm):
        names, two = ["input", "p", "dim", "keepdim"], ("fro", 2, 2.0)
    elif fn.op == "call_function" and t is torch.linalg.vector_norm:
        names, two = ["x", "ord", "dim", "keepdim"], (2, 2.0)
    elif fn.op == "call_function" and t is torch.linalg.norm:
        names, two = ["input", "ord", "dim", "keepdim"], (None, 2, 2.0)
    else:
        return None
    got = dict(zip(names, fn.args))
    for k, v in fn.kwargs.items():
        if k in ("out", "dtype") and v is None:
            continue
        if k in got or k not in names:
            return None
        got[k] = v
    p = got.get(names[1], two[0])
    dim, keepdim = got.get("dim"), got.get("keepdim", False)
    if isinstance(dim, (tuple, list)) and len(dim) == 1:
        dim = dim[0]
    if isinstance(p, bool) or p not in two or not isinstance(dim, int) or isinstance(dim, bool) \
            or not isinstance(keepdim, bool) or not isinstance(got.get(names[0]), torch.fx.Node):
        return None
    return got[names[0]], dim, keepdim


def _stacked_norm(root):
    """(a, b, dim, keepdim) of torch.stack([a, b], d).norm(dim=d), else None."""
    got = _norm_args(root)
    if got is None:
        return None
    x, dim, keepdim = got
    if not (x.op == "call_function" and x.target is torch.stack) or list(x.users) != [root]:
        return None
    names = dict(zip(["tensors", "dim"], x.args))
    if set(x.kwargs) - {"dim"} or set(x.kwargs) & set(names):
        return None
    names.update(x.kwargs)
    pair, d = names.get("tensors"), names.get("dim", 0)
    if not isinstance(pair, (list, tuple)) or len(pair) != 2 or not all(isinstance(v, torch.fx.Node) for v in pair) \
            or not isinstance(d, int) or d != dim:
        return None             # a dim spelled the other way round (-1 and 2) is left as it is
    return pair[0], pair[1], dim, keepdim


def hand_hypots_as_calls(graph: torch.fx.Graph) -> None:
    for root in list(graph.nodes):
        stacked = _stacked_norm(root)
        if stacked is not None:
            a, b, dim, keepdim = stacked
            stack = root.args[0] if root.args else root.kwargs.get("input", root.kwargs.get("x"))
            with graph.inserting_before(root):
                call = graph.call_function(torch.hypot, (a, b))
                if keepdim:
                    call = graph.call_method("unsqueeze", (call, dim))
            call.meta.update({k: v for k, v in root.meta.items() if k != "tensor_meta"})
            root.replace_all_uses_with(call)
            graph.erase_node(root)
            graph.erase_node(stack)
            continue
        got = _match(root)
        if got is None:
            continue
        a, b, eps, dead = got
        with graph.inserting_before(root):
            call = graph.call_function(torch.hypot, (a, b))
            if eps > 0.0:
                floor = graph.call_function(torch.full_like, (call, math.sqrt(eps)))
                call = graph.call_function(torch.hypot, (call, floor))
        call.meta.update({k: v for k, v in root.meta.items() if k != "tensor_meta"})
        root.replace_all_uses_with(call)
        for n in dead:              # readers first: root, the sum, inner adds, then the squares
            graph.erase_node(n)
