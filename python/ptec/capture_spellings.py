"""Other spellings of ops ptec runs (issue 15), as the same IR nodes:

* arithmetic: torch.add / torch.sub / x.add / x.sub / torch.subtract with
  alpha= (a + alpha * b: b times the constant alpha first), torch.rsub
  (other - alpha * x), x.true_divide, torch.divide / x.divide,
  torch.multiply / x.multiply of float values;
* division with rounding_mode: by a number, one LUT of x (floordiv, or
  truncdiv for 'trunc'); by a tensor (and torch.floor_divide / `//` of two
  float tensors), the quotient's div then a floor or trunc LUT;
* x.bool() / x.to(torch.bool) of a float: the test x != 0 (a compare node);
* x.new_tensor(data) / x.new_zeros / x.new_ones / x.new_full: a constant of
  the traced dtype and shape;
* torch.atleast_1d / 2d / 3d and torch.ravel / x.ravel() of one tensor: a reshape;
  torch.narrow_copy: a slice; torch.concat / torch.concatenate: a join
  (its tensors are in a list, which the generic refusal cannot evaluate).

A reduction with a dtype= keyword that is not float (capture_plumbing drops
a float32 / float64 one) is refused in one line saying why. Each function
returns None for a call it does not cover (integer operands are
capture_int_math's), which then stays an unsupported node refused by name."""
from __future__ import annotations

import operator
from typing import List, Optional

import numpy as np
import torch
import torch.fx

from .capture_calls import _meta_shape, _scalar_arg
from .capture_plumbing import _DTYPE_KEYWORD, FLOATS, _dtype
from .capture_rewrites import _Steps as Steps
from .ir import Node

_ARITHMETIC = {torch.add: "add", "add": "add", torch.sub: "sub", "sub": "sub",
               torch.subtract: "sub", "subtract": "sub", torch.rsub: "rsub", "rsub": "rsub",
               torch.mul: "mul", "mul": "mul", torch.multiply: "mul", "multiply": "mul",
               torch.div: "div", "div": "div", torch.divide: "div", "divide": "div",
               torch.true_divide: "div", "true_divide": "div",
               torch.floor_divide: "floor_divide", "floor_divide": "floor_divide",
               operator.floordiv: "floor_divide"}
_ATLEAST = {torch.atleast_1d: 1, torch.atleast_2d: 2, torch.atleast_3d: 3}
_NEW = {"new_tensor", "new_zeros", "new_ones", "new_full"}
# torch.cat itself is capture's; torch.concatenate is torch 2.x's
_CONCAT = {getattr(torch, n): n for n in ("concat", "concatenate") if hasattr(torch, n)}
# the calls capture already reads without keywords (x + y, torch.div(x, y)): left to it
_PLAIN = {torch.add, "add", torch.sub, "sub", torch.mul, "mul", torch.div, "div", torch.true_divide}
_NUMPY = {torch.float32: np.float32, torch.float64: np.float32, torch.int64: np.int64,
          torch.int32: np.int32, torch.bool: np.bool_}


def _lookup(table, target):
    """table's entry for target (a set: target itself), else None."""
    try:
        if isinstance(table, (set, frozenset)):
            return target if target in table else None
        return table.get(target)
    except TypeError:                 # an unhashable target is none of these
        return None


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


class _Steps(Steps):
    """capture_rewrites' step builder, with numbers as 0-d constants."""

    def operand(self, v) -> str:
        """A tensor's name, or a number as a 0-d constant."""
        return v.name if isinstance(v, torch.fx.Node) else self.const(v)


def _arithmetic_nodes(fn, by_name) -> Optional[List[Node]]:
    kind = _lookup(_ARITHMETIC, fn.target)
    if kind is None or len(fn.args) != 2 or not isinstance(fn.args[0], torch.fx.Node) \
            or (not fn.kwargs and _lookup(_PLAIN, fn.target) is not None):
        return None
    a, b = fn.args
    alpha = fn.kwargs.get("alpha", 1)
    mode = fn.kwargs.get("rounding_mode")
    allowed = {"add": {"alpha"}, "sub": {"alpha"}, "rsub": {"alpha"}, "div": {"rounding_mode"}}.get(kind, set())
    if set(fn.kwargs) - allowed or not _number(alpha) or mode not in (None, "floor", "trunc"):
        return None
    if kind == "floor_divide":
        kind, mode = "div", "floor"
    if any(_dtype(v) not in FLOATS or v.name not in by_name for v in (a, b) if isinstance(v, torch.fx.Node)) \
            or not (isinstance(b, torch.fx.Node) or _number(b)):
        return None                   # integers: capture_int_math's; other dtypes stay refused
    if kind == "div" and mode is not None and not isinstance(b, torch.fx.Node):
        if b == 0:
            return None
        fn_name = "floordiv" if mode == "floor" else "truncdiv"
        return [Node(fn.name, "elementwise", [a.name], dict(fn=fn_name, divisor=float(b)))]
    s = _Steps(fn.name)
    if kind == "rsub":                # other - alpha * x
        a, b = b, a
        kind = "sub"
    if kind in ("add", "sub") and alpha != 1:
        b = b * alpha if _number(b) else s("mul", [b.name, s.operand(float(alpha))])
    left, right = s.operand(a), b if isinstance(b, str) else s.operand(b)
    out = s(kind, [left, right])
    if mode is not None:
        s("elementwise", [out], fn="floor" if mode == "floor" else "trunc")
    return s.done()


def _bool_node(fn) -> Optional[Node]:
    """x.bool(), x.to(torch.bool), x.type(torch.bool) of a float value."""
    if fn.op != "call_method" or not fn.args or _dtype(fn.args[0]) not in FLOATS:
        return None
    rest = list(fn.args[1:]) + list(fn.kwargs.values())
    if (fn.target == "bool" and not rest) or (fn.target in ("to", "type") and rest == [torch.bool]
                                              and set(fn.kwargs) <= {"dtype"}):
        return Node(fn.name, "compare", [fn.args[0].name], dict(kind="ne", scalar=0.0))
    return None


def _new_constant(fn) -> Optional[Node]:
    """x.new_tensor(data) and x.new_zeros / new_ones / new_full(size): a
    constant with the traced dtype and shape (data of numbers only)."""
    first = {"new_tensor": "data"}.get(fn.target, "size")
    if fn.op != "call_method" or fn.target not in _NEW or (len(fn.args) < 2 and first not in fn.kwargs):
        return None
    if set(fn.kwargs) - {"dtype", "device", "requires_grad", first, "fill_value"}:
        return None
    dtype, shape = _dtype(fn), _meta_shape(fn)
    if dtype not in _NUMPY or shape is None:
        return None
    found = []
    torch.fx.node.map_arg((fn.args[1:], fn.kwargs), found.append)
    if found:
        return None                   # data or size computed in the forward
    if fn.target == "new_tensor":
        value = torch.as_tensor(fn.args[1] if len(fn.args) > 1 else fn.kwargs["data"], dtype=dtype)
    elif fn.target == "new_full":
        fill = _scalar_arg(fn, 2, "fill_value")
        if not isinstance(fill, (int, float, bool)):
            return None
        value = torch.full(shape, fill, dtype=dtype)
    else:
        value = (torch.zeros if fn.target == "new_zeros" else torch.ones)(shape, dtype=dtype)
    if list(value.shape) != shape:
        return None
    return Node(fn.name, "constant", [], dict(value=value.numpy().astype(_NUMPY[dtype])))


def _view_nodes(fn) -> Optional[List[Node]]:
    """atleast_Nd and ravel as a reshape to the traced shape; narrow_copy as
    a slice; concat / concatenate as a join of their list of tensors."""
    t = fn.target
    one = len(fn.args) == 1 and isinstance(fn.args[0], torch.fx.Node) and not fn.kwargs
    if fn.op != "call_function":
        if t == "narrow_copy":
            return _narrow(fn)
        if t == "ravel" and one and _meta_shape(fn) is not None:
            return [Node(fn.name, "reshape", [fn.args[0].name], dict(target_shape=_meta_shape(fn)))]
        return None
    if _lookup(_CONCAT, t) is not None:
        seq = fn.args[0] if fn.args else fn.kwargs.get("tensors")
        dim = _scalar_arg(fn, 1, "dim", fn.kwargs.get("axis", 0))
        if not isinstance(seq, (list, tuple)) or not seq or not all(isinstance(a, torch.fx.Node) for a in seq) \
                or not isinstance(dim, int) or set(fn.kwargs) - {"tensors", "dim", "axis"}:
            return None
        return [Node(fn.name, "cat", [a.name for a in seq], dict(dim=dim))]
    if t is getattr(torch, "narrow_copy", None):
        return _narrow(fn)
    if (_lookup(_ATLEAST, t) is not None or t is torch.ravel) and one and _meta_shape(fn) is not None:
        return [Node(fn.name, "reshape", [fn.args[0].name], dict(target_shape=_meta_shape(fn)))]
    return None


def _narrow(fn) -> Optional[List[Node]]:
    args = dict(zip(("input", "dim", "start", "length"), fn.args))
    args.update(fn.kwargs)
    x, dim, start, length = (args.get(k) for k in ("input", "dim", "start", "length"))
    shape = _meta_shape(x) if isinstance(x, torch.fx.Node) else None
    if shape is None or len(args) != 4 or not all(isinstance(v, int) for v in (dim, start, length)):
        return None
    dim %= len(shape)
    start %= shape[dim]                # torch counts a negative start from the end
    return [Node(fn.name, "slice", [x.name], dict(dim=dim, start=start, end=start + length))]


def _dtype_refusal(fn, ins: List[str]) -> Optional[List[Node]]:
    """A reduction asked to compute in a dtype that is not float: one
    unsupported node that says so (evaluated as torch does)."""
    dtype = fn.kwargs.get("dtype")
    if _lookup(_DTYPE_KEYWORD, fn.target) is None or dtype is None \
            or _dtype(fn.args[0]) not in FLOATS:
        return None
    template = fn.args

    def run(*xs):
        it = iter(xs)
        args = [next(it) if isinstance(a, torch.fx.Node) else a for a in template]
        if fn.op == "call_method":
            return getattr(args[0], fn.target)(*args[1:], **fn.kwargs)
        return fn.target(*args, **fn.kwargs)
    what = fn.target if isinstance(fn.target, str) else fn.target.__name__
    why = f"dtype={dtype} computes in that dtype, and ptec computes float values in float32 only " \
          f"(drop the dtype, or cast the result)"
    return [Node(fn.name, "unsupported", list(ins), dict(fn=run, what=what, why=why))]


def spelling_nodes(fn: torch.fx.Node, ins: List[str], by_name) -> Optional[List[Node]]:
    """The nodes of a call this module covers, else None."""
    if fn.op not in ("call_function", "call_method") or not fn.args:
        return None
    for make in (lambda: _arithmetic_nodes(fn, by_name), lambda: _view_nodes(fn),
                 lambda: _dtype_refusal(fn, ins)):
        nodes = make()
        if nodes is not None:
            return nodes
    node = _bool_node(fn) or _new_constant(fn)
    return [node] if node is not None else None
