"""Bool values (issue 15): comparisons of the input and what a model does
with their bool tensors.

* `compare` (attrs kind: gt, ge, lt, le, eq, ne; scalar: a number operand)
  of one or two tensors: `x > 0`, `torch.sigmoid(x) >= 0.5`, `a == b`,
  torch.gt / x.gt, torch.greater and the like. A number on the left is
  moved right with the comparison turned around (`0.5 < x` is `x > 0.5`).
* `logical` (attrs kind: and, or, xor, not) of bool tensors:
  torch.logical_*, and `&`, `|`, `^`, `~` (bitwise on bools is logical);
  torch.logical_* of a float tensor first compares it `!= 0`.
* `where` (inputs condition, a, b) for torch.where(cond, a, b) and
  x.masked_fill(mask, v) (where(mask, v, x)) whose condition is a computed
  bool (a constant one is capture_rewrites'); a number operand becomes a
  0-d constant node.
* `bool_to` (attrs dtype: float32, int32, int64): `.float()`, `.int()`,
  `.long()`, `.to(dtype)` / `.type(dtype)` of a bool.

The float graph evaluates bool values as torch.bool, so calibration and the
float oracle see the model's own values. How they are lowered, and why an
int8 comparison gives torch's answer on the dequantized values exactly:
ptec.backends.cortex_m.lowering_bool. Each function returns None for a call
it does not cover, which then stays an unsupported node refused by name.
A selection by a bool mask (`x[x > 0]`, torch.masked_select) is
capture_masked_select's."""
from __future__ import annotations

import operator
from typing import List, Optional

import numpy as np
import torch

from .capture_calls import _meta_shape
from .capture_masked_select import masked_select_nodes
from .capture_rewrites import where_args
from .ir import Node

_COMPARE = {}
for _kind, _fns in {"gt": (operator.gt, torch.gt, torch.greater), "ge": (operator.ge, torch.ge, torch.greater_equal),
                    "lt": (operator.lt, torch.lt, torch.less), "le": (operator.le, torch.le, torch.less_equal),
                    "eq": (operator.eq, torch.eq), "ne": (operator.ne, torch.ne, torch.not_equal)}.items():
    for _f in _fns + (_kind, "__" + _kind + "__"):
        _COMPARE[_f] = _kind
# `c < x` is `x > c`: the comparison with its operands swapped
SWAPPED = {"gt": "lt", "lt": "gt", "ge": "le", "le": "ge", "eq": "eq", "ne": "ne"}

_LOGICAL = {torch.logical_and: "and", "logical_and": "and", torch.logical_or: "or", "logical_or": "or",
            torch.logical_xor: "xor", "logical_xor": "xor", torch.logical_not: "not", "logical_not": "not"}
# bitwise calls are logical ones on bool tensors only
_BITWISE = {operator.and_: "and", torch.bitwise_and: "and", "bitwise_and": "and", "__and__": "and",
            operator.or_: "or", torch.bitwise_or: "or", "bitwise_or": "or", "__or__": "or",
            operator.xor: "xor", torch.bitwise_xor: "xor", "bitwise_xor": "xor", "__xor__": "xor",
            operator.invert: "not", torch.bitwise_not: "not", "bitwise_not": "not", "__invert__": "not"}

# the maximum / minimum of two bools is a bool in torch: logical or / and (ptec's min / max kernels compute in
# numbers, which would give a float32 where torch gives bool)
_BOOL_EXTREMA = {f: kind for kind, fns in {"or": (torch.maximum, torch.max, torch.fmax, "maximum", "max", "fmax"),
                                           "and": (torch.minimum, torch.min, torch.fmin, "minimum", "min", "fmin")
                                           }.items() for f in fns}

_CASTS = {"float": "float32", "int": "int32", "long": "int64"}
_DTYPES = {torch.float32: "float32", torch.int32: "int32", torch.int64: "int64"}

BOOL_OPS = ("compare", "logical")


def bool_valued(n: Node) -> bool:
    """A compare / logical node, or a bool model input (capture_input_dtypes)."""
    return n.op in BOOL_OPS or (n.op in ("input", "state") and n.attrs.get("dtype") == "bool")


def _lookup(table, target):
    try:
        return table.get(target)
    except TypeError:         # an unhashable target is none of these
        return None


def _dtype(a) -> Optional[torch.dtype]:
    meta = a.meta.get("tensor_meta") if isinstance(a, torch.fx.Node) else None
    return getattr(meta, "dtype", None)


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def is_bool(name: str, by_name) -> bool:
    """The node is a bool value ptec computes or holds (a bool constant)."""
    n = by_name.get(name)
    if n is None:
        return False
    if n.op == "constant":
        return np.asarray(n.attrs["value"]).dtype == np.bool_
    return bool_valued(n)


# views that keep a bool a bool (`(x > 0).reshape(4, -1)`): their IR nodes
# carry no dtype, so the view's source decides
_BOOL_VIEWS = ("reshape", "squeeze", "unsqueeze", "flatten")


def _moved_bool(a, by_name) -> bool:
    """A permute / transpose / slice / expand (through any views) of a computed bool."""
    if not isinstance(a, torch.fx.Node) or _dtype(a) != torch.bool or by_name.get(a.name) is None:
        return False
    n, moved = by_name[a.name], False
    while n is not None and n.op in _BOOL_VIEWS + _BOOL_MOVES and len(n.inputs) == 1:
        moved = moved or n.op in _BOOL_MOVES
        n = by_name.get(n.inputs[0])
    return moved and n is not None and bool_valued(n)


_BOOL_MOVES = ("permute", "transpose", "slice", "expand")


def _computed_bool(a, by_name) -> bool:
    """A bool tensor computed from the input (not a constant), or a view of one."""
    if not isinstance(a, torch.fx.Node) or by_name.get(a.name) is None:
        return False
    n = by_name[a.name]
    while n is not None and n.op in _BOOL_VIEWS and _dtype(a) == torch.bool and len(n.inputs) == 1:
        n = by_name.get(n.inputs[0])
    return n is not None and bool_valued(n)


def _compare_nodes(fn, by_name) -> Optional[List[Node]]:
    kind = _lookup(_COMPARE, fn.target)
    if kind is None or len(fn.args) != 2 or fn.kwargs:
        return None
    a, b = fn.args
    if not isinstance(a, torch.fx.Node):
        if not isinstance(b, torch.fx.Node):
            return None
        a, b, kind = b, a, SWAPPED[kind]
    if by_name.get(a.name) is None:
        return None
    if _number(b):
        if _dtype(a) not in (torch.float32, torch.bool):
            return None
        return [Node(fn.name, "compare", [a.name], dict(kind=kind, scalar=float(b)))]
    if not isinstance(b, torch.fx.Node) or by_name.get(b.name) is None:
        return None
    pair = {_dtype(a), _dtype(b)}
    if pair not in ({torch.float32}, {torch.bool}) \
            or all(by_name[v.name].op == "constant" for v in (a, b)):
        return None
    return [Node(fn.name, "compare", [a.name, b.name], dict(kind=kind))]


def _logical_nodes(fn, by_name) -> Optional[List[Node]]:
    kind = _lookup(_LOGICAL, fn.target)
    bitwise = kind is None
    kind = kind or _lookup(_BITWISE, fn.target)
    if kind is None and len(fn.args) == 2 and all(_dtype(a) == torch.bool for a in fn.args):
        kind = _lookup(_BOOL_EXTREMA, fn.target)       # torch.maximum(a > 0, b > 0): bools only, as bitwise
    arity = 1 if kind == "not" else 2
    if kind is None or len(fn.args) != arity or fn.kwargs \
            or not all(isinstance(a, torch.fx.Node) and by_name.get(a.name) is not None for a in fn.args):
        return None
    if not any(_computed_bool(a, by_name) for a in fn.args):
        return None                       # of constants, or of no bool: not this module's
    nodes, ins = [], []
    for k, a in enumerate(fn.args):
        if _dtype(a) == torch.bool:
            ins.append(a.name)
        elif not bitwise and _dtype(a) == torch.float32:
            # a float's truth value: x != 0, exact on any int8 grid (only 0 is 0)
            nodes.append(Node(f"{fn.name}__truth{k}", "compare", [a.name], dict(kind="ne", scalar=0.0)))
            ins.append(nodes[-1].name)
        else:
            return None                   # bitwise on integers, or a dtype ptec has no bool form for
    return nodes + [Node(fn.name, "logical", ins, dict(kind=kind))]


def _operand(fn, v, k: int, nodes: List[Node], ins: List[str], by_name) -> bool:
    """A where operand: a float tensor node, or a number as a 0-d constant."""
    if _number(v):
        nodes.append(Node(f"{fn.name}__value{k}", "constant", [], dict(value=np.array(v, np.float32))))
        ins.append(nodes[-1].name)
        return True
    if isinstance(v, torch.fx.Node) and by_name.get(v.name) is not None and _dtype(v) == torch.float32:
        ins.append(v.name)
        return True
    return False


def _where_nodes(fn, by_name) -> Optional[List[Node]]:
    if where_args(fn) is None:
        return None
    cond, a, b = where_args(fn)
    if not _computed_bool(cond, by_name) or _meta_shape(fn) is None or _dtype(fn) != torch.float32:
        return None
    nodes: List[Node] = []
    ins = [cond.name]
    if not (_operand(fn, a, 1, nodes, ins, by_name) and _operand(fn, b, 2, nodes, ins, by_name)):
        return None
    return nodes + [Node(fn.name, "where", ins)]


def _cast_nodes(fn, by_name) -> Optional[List[Node]]:
    if fn.args and not fn.kwargs and _moved_bool(fn.args[0], by_name) \
            and (fn.target in _CASTS or fn.target in ("to", "type")):
        from .capture_calls import refuse_call
        # (capture_bool_moves casts the bool before its moves: a chain it does not know is left here)
        refuse_call(fn, "a cast of a permuted, transposed, sliced or expanded computed bool (whose bytes ptec "
                    "moves only as numbers) through a call capture_bool_moves does not move: cast the bool first, "
                    "`(x > 0).float().permute(...)`")
    if not fn.args or not _computed_bool(fn.args[0], by_name) or fn.kwargs:
        return None
    if fn.target in _CASTS and len(fn.args) == 1:
        dtype = _CASTS[fn.target]
    elif fn.target in ("to", "type") and len(fn.args) == 2 and _lookup(_DTYPES, fn.args[1]) is not None:
        dtype = _DTYPES[fn.args[1]]
    else:
        return None
    return [Node(fn.name, "bool_to", [fn.args[0].name], dict(dtype=dtype))]


def bool_nodes(fn: torch.fx.Node, by_name) -> Optional[List[Node]]:
    """The nodes of a comparison, logical op, where / masked_fill on a
    computed condition or cast of a bool; None for any other call."""
    if fn.op not in ("call_function", "call_method"):
        return None
    for make in (_compare_nodes, _logical_nodes, _where_nodes, _cast_nodes, masked_select_nodes):
        nodes = make(fn, by_name)
        if nodes is not None:
            return nodes
    from .capture_bool_where import bool_where_nodes      # (it reads this module's tests)
    return bool_where_nodes(fn, by_name, is_bool, _computed_bool)
