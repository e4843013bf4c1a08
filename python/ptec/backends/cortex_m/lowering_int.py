"""The lowering of integer arithmetic on index values (capture_int_math's
`int_math` nodes) on the int64 / int32 tensors themselves, never quantized:

* add, sub (and -i as 0 - i), mul: aten::add.out / sub.out / mul.out, whose
  integer forms wrap as torch's (two's complement) and take an integral
  alpha; a Python int operand is a 0-d constant of the dtype, broadcast.
* clamp: aten::clamp.out takes no int64, so torch's rule (the lower bound
  first, then the upper: min > max gives max) is spelled with kernels that
  take both integer dtypes: x < lo as a bool (aten::lt.Scalar_out) picking
  the constant lo over x (aten::where.self_out), then x > hi likewise.
* floor_divide, remainder, fmod: aten::floor_divide.out, remainder.Tensor_out,
  fmod.Tensor_out on the integer tensors (their int32 / int64 forms: a
  zero divisor, or the least value by -1, fails the run); trunc_divide
  (rounding_mode="trunc") is floor_divide(a - fmod(a, b), b), whose
  division is exact (a - fmod(a, b) is a multiple of b lying between 0 and
  a, so it cannot overflow), the same failures.
* bitwise_and / or / xor (~i is i ^ -1), left_shift, right_shift:
  aten::bitwise_and / or / xor.Tensor_out, bitwise_left_shift /
  right_shift.Tensor_out (a shift amount outside [0, width) fails the run).
* maximum / minimum, abs, sign: comparisons (aten::gt / lt.Tensor_out)
  picking with aten::where.self_out, abs's negation aten::sub.out (0 - x),
  sign the bools as 0 / 1 (_to_dim_order_copy) subtracted; comparisons of
  integers (capture's compare nodes with attrs integer): int_compare.
* cast (and an int32 operand beside int64 ones, torch's promotion):
  dim_order_ops::_to_dim_order_copy.out between int64, int32 and
  (capture_int_casts) int16, uint8, int8 (into a narrower type the low
  bits, as torch), or into float64.
* cat / stack: aten::cat.out copies elements of any dtype (stack's new dim
  a view of each operand); view: the contiguous bytes under torch's shape;
  slice: aten::slice_copy.Tensor_out (any dtype) of the contiguous value.

* where: aten::where.self_out with the bool condition (masked_fill too).
* gcd / lcm: aten::gcd.out / lcm.out (ptec's kernels, torch's schemas).
* sum, prod, amax, amin, cumsum: aten::sum.IntList_out, prod.int_out /
  prod.out, amax.out, amin.out, cumsum.out of the integers (op_int_reduce.c:
  sums and products wrap; an int32 value cast to int64 first, torch's
  accumulation); argmax / argmin: aten::argmax.out / argmin.out on them.
* pow: repeated squaring with aten::mul.out (wrapping as torch's).
* permute: aten::permute_copy.out; take (i[j]): aten::embedding.out of the
  rows of i (a [rows, 1] view), by ids flat_index wrapped and checked.

Operands of other shapes broadcast on contiguous tensors (lowering_bool's
_call); the result is laid out as every value of its rank."""
from __future__ import annotations

from typing import List

import numpy as np

from ...capture_int_math import NUMPY_DTYPES
from ...ir import Node
from ...lowered import Act, clone_dim_order, layout, needs_relayout, new_act, raw_view
from ...pte.program_builder import CHANNELS_LAST
from ...pte.schema import ScalarType
from .lowering_bool import _call, _contiguous, _dim_order, bool_value

SCALAR_TYPES = {"int64": ScalarType.LONG, "int32": ScalarType.INT,
                # casts only (capture_int_casts): no arithmetic is made in these
                "int16": ScalarType.SHORT, "uint8": ScalarType.BYTE, "int8": ScalarType.CHAR,
                "float64": ScalarType.DOUBLE}
_DIVISIONS = {"floor_divide": "aten::floor_divide.out", "remainder": "aten::remainder.Tensor_out",
              "fmod": "aten::fmod.Tensor_out", "bitwise_and": "aten::bitwise_and.Tensor_out",
              "bitwise_or": "aten::bitwise_or.Tensor_out", "bitwise_xor": "aten::bitwise_xor.Tensor_out",
              "left_shift": "aten::bitwise_left_shift.Tensor_out",
              "right_shift": "aten::bitwise_right_shift.Tensor_out", "gcd": "aten::gcd.out", "lcm": "aten::lcm.out"}
_TWO = ("add", "sub", "mul", "trunc_divide", "maximum", "minimum", *_DIVISIONS)


def _constant(ctx, value, dtype: str) -> Act:
    """An integer constant in `dtype` (torch casts a constant operand to the result's dtype)."""
    arr = np.asarray(value).astype(NUMPY_DTYPES[dtype])
    # sizes given: the builder's contiguous copy of a 0-d array is 1-D
    return Act(ctx.b.constant(arr, sizes=arr.shape), list(arr.shape), SCALAR_TYPES[dtype])


def _cast(ctx, x: Act, st) -> Act:
    """x (int32 or int64) in the integer dtype st, in x's own layout."""
    if x.dtype == st:
        return x
    out = new_act(ctx.b, st, x.sizes, dim_order=_dim_order(ctx, x))
    ctx.b.call("dim_order_ops::_to_dim_order_copy.out", self=x.value, non_blocking=False, dim_order=None,
               out=out.value)
    return out


def _operands(ctx, n: Node, arity: int) -> List[Act]:
    """The node's operands in order: its Python ints (attrs scalars) as 0-d
    constants, its inputs as integer constants or the program's values
    (an int32 one of an int64 node cast to int64: torch's promotion)."""
    dtype = n.attrs["dtype"]
    scalars = {int(k): v for k, v in n.attrs.get("scalars", {}).items()}
    names = iter(n.inputs)
    out = []
    for k in range(arity):
        if k in scalars:
            out.append(_constant(ctx, scalars[k], dtype))
            continue
        name = next(names)
        node = ctx.g.node(name)
        if node.op == "constant":
            out.append(_constant(ctx, node.attrs["value"], dtype))
            continue
        x = ctx.get(name)
        if n.attrs["kind"] == "cast" or (x.dtype, SCALAR_TYPES[dtype]) == (ScalarType.INT, ScalarType.LONG):
            x = _cast(ctx, x, SCALAR_TYPES[dtype])
        out.append(x)
    return out


def _join(ctx, n: Node, xs: List[Act], st) -> Act:
    """aten::cat.out of the operands (stack: each viewed with the new dim)
    along attrs dim, on contiguous tensors, laid out after as n's rank wants."""
    rank = len(n.shape)
    dim = int(n.attrs["dim"]) % rank
    parts = []
    for x in xs:
        x = _contiguous(ctx, x)
        if n.attrs["kind"] == "stack":
            sizes = x.sizes[:dim] + [1] + x.sizes[dim:]
            x = raw_view(ctx.b, x, sizes, list(range(len(sizes))))
        parts.append(x.value)
    out = new_act(ctx.b, st, n.shape, dim_order=list(range(rank)))
    ctx.b.call("aten::cat.out", tensors=parts, dim=dim, out=out.value)
    return _laid_out(ctx, out)


def _laid_out(ctx, x: Act) -> Act:
    """A contiguous value in the layout every value of its rank has (4-D: channels-last)."""
    if layout(x.sizes) == list(range(len(x.sizes))):
        return x
    if needs_relayout(x.sizes):
        return clone_dim_order(ctx.b, x, CHANNELS_LAST)
    return raw_view(ctx.b, x, x.sizes, layout(x.sizes))


def op_int_math(ctx, n: Node):
    kind, st = n.attrs["kind"], SCALAR_TYPES[n.attrs["dtype"]]
    if kind == "take":
        return _take(ctx, n, st)
    xs = _operands(ctx, n, 2 if kind in _TWO else len(n.inputs)) if kind != "where" else []
    if any(x.dtype != st for x in xs) and kind not in ("sum", "prod"):     # their self: int32 or int64, out st
        return ctx.refuse(n, f"an operand is not an {n.attrs['dtype']} tensor")
    if kind == "cast":
        return xs[0]
    if kind == "where":
        return _where(ctx, n, st)
    if kind in _REDUCTIONS:
        return _reduce(ctx, n, xs[0], st)
    if kind in ("maximum", "minimum", "abs", "sign"):
        return _extreme(ctx, n, xs, st)
    if kind in ("cat", "stack"):
        return _join(ctx, n, xs, st)
    if kind == "view":
        return _laid_out(ctx, raw_view(ctx.b, _contiguous(ctx, xs[0]), n.shape, list(range(len(n.shape)))))
    if kind == "pow":
        return _power(ctx, n, xs[0], st)
    if kind == "permute":
        rank = len(n.shape)
        out = new_act(ctx.b, st, n.shape, dim_order=list(range(rank)))
        ctx.b.call("aten::permute_copy.out", self=_contiguous(ctx, xs[0]).value,
                   dims=[int(d) % rank for d in n.attrs["dims"]], out=out.value)
        return _laid_out(ctx, out)
    if kind == "slice":
        out = new_act(ctx.b, st, n.shape, dim_order=list(range(len(n.shape))))
        ctx.b.call("aten::slice_copy.Tensor_out", self=_contiguous(ctx, xs[0]).value, dim=int(n.attrs["dim"]),
                   start=int(n.attrs["start"]), end=int(n.attrs["end"]), step=1, out=out.value)
        return _laid_out(ctx, out)
    if kind == "clamp":
        x = xs[0]
        for bound, test in ((n.attrs["lo"], "lt"), (n.attrs["hi"], "gt")):
            if bound is None:
                continue
            beyond = _call(ctx, f"aten::{test}.Scalar_out", dict(self=x, other=int(bound)), ScalarType.BOOL,
                           n.shape)
            x = _call(ctx, "aten::where.self_out", dict(condition=beyond, self=_constant(ctx, bound, n.attrs["dtype"]),
                                                        other=x), st, n.shape)
        return x
    if kind in _DIVISIONS:
        return _call(ctx, _DIVISIONS[kind], dict(self=xs[0], other=xs[1]), st, n.shape)
    if kind == "trunc_divide":
        # a - fmod(a, b) is a multiple of b: its floor division is exact, torch's truncation
        shape = list(np.broadcast_shapes(tuple(xs[0].sizes), tuple(xs[1].sizes)))
        rest = _call(ctx, "aten::fmod.Tensor_out", dict(self=xs[0], other=xs[1]), st, shape)
        whole = _call(ctx, "aten::sub.out", dict(self=xs[0], other=rest, alpha=1), st, shape)
        return _call(ctx, "aten::floor_divide.out", dict(self=whole, other=xs[1]), st, n.shape)
    named = dict(self=xs[0], other=xs[1])
    if kind != "mul":
        named["alpha"] = int(n.attrs["alpha"])
    return _call(ctx, f"aten::{kind}.out", named, st, n.shape)


_REDUCTIONS = {"sum": "aten::sum.IntList_out", "amax": "aten::amax.out", "amin": "aten::amin.out",
               "argmax": "aten::argmax.out", "argmin": "aten::argmin.out", "cumsum": "aten::cumsum.out",
               "prod": "aten::prod.int_out"}


def _reduce(ctx, n: Node, x: Act, st) -> Act:
    """sum / prod / amax / amin / argmax / argmin / cumsum of a contiguous integer
    tensor (an int32 one of an int64 node already cast: torch's int64 sum),
    into a contiguous out of torch's shape, laid out after as n's rank wants."""
    kind, dims = n.attrs["kind"], n.attrs["dims"]
    x = _contiguous(ctx, x)
    out = new_act(ctx.b, st, n.shape, dim_order=list(range(len(n.shape))))
    named = dict(self=x.value, out=out.value)
    key = _REDUCTIONS[kind]
    if kind == "cumsum":
        named.update(dim=int(dims[0]), dtype=None)
    elif kind == "prod":
        key = "aten::prod.int_out" if dims else "aten::prod.out"
        named.update(dtype=None if st == ScalarType.LONG else int(st))
        if dims:
            named.update(dim=int(dims[0]), keepdim=bool(n.attrs["keepdim"]))
    elif kind in ("argmax", "argmin"):
        named.update(dim=int(dims[0]) if dims else None, keepdim=bool(n.attrs["keepdim"]))
    else:
        named.update(dim=[int(d) for d in dims or []], keepdim=bool(n.attrs["keepdim"]))
        if kind == "sum":
            named["dtype"] = None if st == ScalarType.LONG else int(st)
    ctx.b.call(key, **named)
    return _laid_out(ctx, out)


def _power(ctx, n: Node, x: Act, st) -> Act:
    """x ** k by repeated squaring with aten::mul.out (products wrap in the
    dtype, so any order gives torch's result); k = 0: 0 * x + 1, ones."""
    k, acc, base = int(n.attrs["exponent"]), None, x
    if k == 0:
        zero = _call(ctx, "aten::mul.out", dict(self=x, other=_constant(ctx, 0, n.attrs["dtype"])), st, n.shape)
        return _call(ctx, "aten::add.out", dict(self=zero, other=_constant(ctx, 1, n.attrs["dtype"]), alpha=1), st,
                     n.shape)
    while k:
        if k & 1:
            acc = base if acc is None else _call(ctx, "aten::mul.out", dict(self=acc, other=base), st, n.shape)
        k >>= 1
        if k:
            base = _call(ctx, "aten::mul.out", dict(self=base, other=base), st, n.shape)
    return acc


def _take(ctx, n: Node, st) -> Act:
    """i[j] of an int value i by an index j (capture's embedding: i's rows,
    a [rows, 1] view, looked up by j): aten::embedding.out copies rows of
    any dtype and checks every id against the table (an id outside it fails
    the run, as torch raises)."""
    ids, table = (_contiguous(ctx, ctx.get(name)) for name in n.inputs)
    if ids.dtype not in (ScalarType.INT, ScalarType.LONG) or table.dtype != st or len(table.sizes) != 2:
        return ctx.refuse(n, "ids that are not an integer tensor, or a table not of the result's dtype")
    out = new_act(ctx.b, st, n.shape, dim_order=list(range(len(n.shape))))
    ctx.b.call("aten::embedding.out", weight=table.value, indices=ids.value, padding_idx=-1,
               scale_grad_by_freq=False, sparse=False, out=out.value)
    return _laid_out(ctx, out)


def _where(ctx, n: Node, st) -> Act:
    """torch.where(m, a, b) of integers (masked_fill: where(m, v, i)):
    aten::where.self_out with the bool m picking between the two operands
    (Python ints: 0-d constants of the dtype)."""
    picked = Node(n.name, n.op, n.inputs[1:], n.attrs)
    a, b = _operands(ctx, picked, 2)
    if any(x.dtype != st for x in (a, b)):
        return ctx.refuse(n, f"an operand is not an {n.attrs['dtype']} tensor")
    cond = bool_value(ctx, n.inputs[0])
    return _call(ctx, "aten::where.self_out", dict(condition=cond, self=a, other=b), st, n.shape)


def _extreme(ctx, n: Node, xs: List[Act], st) -> Act:
    """maximum / minimum: where(a > b, a, b) / where(a < b, a, b); abs:
    where(x < 0, 0 - x, x) (the least value's negation wraps to itself, as
    torch's abs); sign: (x > 0) - (x < 0), the bools as 0 / 1."""
    kind, dtype = n.attrs["kind"], n.attrs["dtype"]
    if kind in ("maximum", "minimum"):
        a, b = xs
        shape = list(np.broadcast_shapes(tuple(a.sizes), tuple(b.sizes)))
        beyond = _call(ctx, f"aten::{'gt' if kind == 'maximum' else 'lt'}.Tensor_out", dict(self=a, other=b),
                       ScalarType.BOOL, shape)
        return _call(ctx, "aten::where.self_out", dict(condition=beyond, self=a, other=b), st, n.shape)
    x, zero = xs[0], _constant(ctx, 0, dtype)
    below = _call(ctx, "aten::lt.Tensor_out", dict(self=x, other=zero), ScalarType.BOOL, x.sizes)
    if kind == "abs":
        negated = _call(ctx, "aten::sub.out", dict(self=zero, other=x, alpha=1), st, x.sizes)
        return _call(ctx, "aten::where.self_out", dict(condition=below, self=negated, other=x), st, n.shape)
    above = _call(ctx, "aten::gt.Tensor_out", dict(self=x, other=zero), ScalarType.BOOL, x.sizes)
    up, down = (_bool_as(ctx, v, st) for v in (above, below))
    return _call(ctx, "aten::sub.out", dict(self=up, other=down, alpha=1), st, n.shape)


def _bool_as(ctx, b: Act, st) -> Act:
    """A bool value as 0 / 1 of the integer dtype st (_to_dim_order_copy)."""
    out = new_act(ctx.b, st, b.sizes, dim_order=_dim_order(ctx, b))
    ctx.b.call("dim_order_ops::_to_dim_order_copy.out", self=b.value, non_blocking=False, dim_order=None,
               out=out.value)
    return out


def int_compare(ctx, n: Node) -> Act:
    """A comparison of integers (capture_int_math's compare node, attrs
    integer): both operands in that dtype (an int32 one cast, a constant or
    Python int a constant of it: exact, where a Scalar would pass a double),
    aten::{kind}.Tensor_out into a bool."""
    dtype = n.attrs["integer"]
    st = SCALAR_TYPES[dtype]
    xs = []
    for name in n.inputs:
        node = ctx.g.node(name)
        if node.op == "constant":
            xs.append(_constant(ctx, node.attrs["value"], dtype))
            continue
        x = ctx.get(name)
        if x.dtype not in (ScalarType.INT, ScalarType.LONG):
            return ctx.refuse(n, "an operand is not an integer tensor")
        xs.append(_cast(ctx, x, st))
    if "int_scalar" in n.attrs:
        xs.append(_constant(ctx, int(n.attrs["int_scalar"]), dtype))
    return _call(ctx, f"aten::{n.attrs['kind']}.Tensor_out", dict(self=xs[0], other=xs[1]), ScalarType.BOOL,
                 n.shape)


LOWERINGS = {"int_math": op_int_math}
