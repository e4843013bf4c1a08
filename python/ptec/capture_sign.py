"""torch.sign / torch.sgn / Tensor.sign / Tensor.sgn of a program's own
float32 input, by two comparisons (probe 8):

    sign(x) = sign(float(x > 0) - float(x < 0))

two `compare` nodes against 0 (each a bool; a comparison of a program's
float input reads the float value itself, `aten::gt.Scalar_out`: exact),
each `bool_to` float32, their difference (-1, 0 or 1 within a step of its
grid) and the usual one-input `sign` of it, so the result is the same
whole-valued `sign` node its readers and the quantizer already know
(whole-number grids for comparisons and ids). The table alone read the
input's int8 code: a float input within half an input step of 0 gave 0
where torch gives +-1 (soft_margin_loss(x, y.sign()): 56 output steps off).

Not where the sign reaches a `.view(dtype)` (capture_dtype_view runs its
producers on float32 kernels, `aten::sign.out` of the input's value, which
is exact already). Only a program input: a value computed in int8 has its codes compared by
the table itself (the same answer), and one computed in fp32 runs
`aten::sign.out` on its float value. Complex and integer inputs are not
taken here (capture_complex / capture_int_math).

The sign of a difference, `torch.sign(a - b)` (`(a - b).sign()`,
`torch.sub(a, b)`, a number on either side) of float32 values: the
difference computed in int8 rounds onto its own grid, whose step is set by
the differences calibration saw, so a difference within half that step of
0 became 0 where torch gives +-1 (issue 15 probe: 155 output steps, two
inputs 1e-3 apart; 106 for two linear layers' near outputs). It is the
same two comparisons of the operands themselves, `(a > b) - (a < b)`: of
program inputs their float values (exact), of int8 values the two
dequantized values or their codes on a shared grid (torch's answer for the
program's values); the subtraction stays for its other readers."""
from __future__ import annotations

import operator
from typing import List, Optional

import torch

from .ir import Node

_TARGETS = (torch.sign, torch.sgn, "sign", "sgn")
_SUBS = (operator.sub, torch.sub, "sub")


def _reaches_dtype_view(fn: torch.fx.Node) -> bool:
    """Whether a reader of fn, or of its readers, is x.view(dtype)."""
    from .capture_dtype_view import _target_dtype
    seen, todo = set(), list(fn.users)
    while todo:
        u = todo.pop()
        if u in seen:
            continue
        seen.add(u)
        if u.op == "call_method" and u.target == "view" and _target_dtype(u) is not None:
            return True
        todo.extend(u.users)
    return False


def _is_sign_call(fn: torch.fx.Node) -> bool:
    """fn is torch.sign / sgn (or the method) of one tensor, no keywords."""
    if fn.op not in ("call_function", "call_method") or fn.kwargs or len(fn.args) != 1:
        return False
    try:
        return fn.target in _TARGETS
    except TypeError:       # an unhashable target
        return False


def sign_nodes(fn: torch.fx.Node, ins: List[str]) -> Optional[List[Node]]:
    """The comparison form of a float32 program input's sign, else None."""
    if not _is_sign_call(fn):
        return None
    x = fn.args[0]
    meta = x.meta.get("tensor_meta") if isinstance(x, torch.fx.Node) else None
    if x.op != "placeholder" or getattr(meta, "dtype", None) != torch.float32 or _reaches_dtype_view(fn):
        return None
    n = fn.name
    return [Node(f"{n}__pos", "compare", [ins[0]], dict(kind="gt", scalar=0.0)),
            Node(f"{n}__neg", "compare", [ins[0]], dict(kind="lt", scalar=0.0)),
            Node(f"{n}__posf", "bool_to", [f"{n}__pos"], dict(dtype="float32")),
            Node(f"{n}__negf", "bool_to", [f"{n}__neg"], dict(dtype="float32")),
            Node(f"{n}__diff", "sub", [f"{n}__posf", f"{n}__negf"]),
            Node(n, "elementwise", [f"{n}__diff"], dict(fn="sign"))]


def _float32(a) -> bool:
    meta = a.meta.get("tensor_meta") if isinstance(a, torch.fx.Node) else None
    return getattr(meta, "dtype", None) == torch.float32


def difference_sign_nodes(fn: torch.fx.Node) -> Optional[List[Node]]:
    """sign(a - b) of float32 values as (a > b) - (a < b) (module doc), else None."""
    if not _is_sign_call(fn):
        return None
    d = fn.args[0]
    if not isinstance(d, torch.fx.Node) or d.op not in ("call_function", "call_method") or d.kwargs \
            or len(d.args) != 2 or not _float32(d) or _reaches_dtype_view(fn):
        return None
    try:
        if d.target not in _SUBS:
            return None
    except TypeError:
        return None
    a, b = d.args
    nodes = [x for x in (a, b) if isinstance(x, torch.fx.Node)]
    numbers = [x for x in (a, b) if isinstance(x, (int, float)) and not isinstance(x, bool)]
    if len(nodes) + len(numbers) != 2 or not nodes or not all(_float32(x) for x in nodes):
        return None
    n = fn.name
    if len(nodes) == 2:
        pos = Node(f"{n}__pos", "compare", [a.name, b.name], dict(kind="gt"))
        neg = Node(f"{n}__neg", "compare", [a.name, b.name], dict(kind="lt"))
    elif isinstance(a, torch.fx.Node):          # a - c: a > c, a < c
        pos = Node(f"{n}__pos", "compare", [a.name], dict(kind="gt", scalar=float(b)))
        neg = Node(f"{n}__neg", "compare", [a.name], dict(kind="lt", scalar=float(b)))
    else:                                       # c - b: b < c, b > c
        pos = Node(f"{n}__pos", "compare", [b.name], dict(kind="lt", scalar=float(a)))
        neg = Node(f"{n}__neg", "compare", [b.name], dict(kind="gt", scalar=float(a)))
    return [pos, neg,
            Node(f"{n}__posf", "bool_to", [f"{n}__pos"], dict(dtype="float32")),
            Node(f"{n}__negf", "bool_to", [f"{n}__neg"], dict(dtype="float32")),
            Node(f"{n}__diff", "sub", [f"{n}__posf", f"{n}__negf"]),
            Node(n, "elementwise", [f"{n}__diff"], dict(fn="sign"))]
