"""The lowering of bool values (ptec.capture_bool): comparisons into bool
tensors (aten::{gt,ge,lt,le,eq,ne}.Tensor_out / Scalar_out), logical ops
(aten::logical_*.out), torch.where / masked_fill (aten::where.self_out) and
casts of a bool (dim_order_ops::_to_dim_order_copy.out).

Exactness. An int8 value with code q on grid (s, z) stands for the float
D(q) = fl32(fl32(q - z) * fl32(s)): what cortex_m::dequantize_per_tensor
gives, and what PyTorch computes for the dequantized tensor. A comparison
gives torch's answer on those D values, exactly:

* A number c against an int8 tensor: torch compares in float32, c first
  rounded to float32. All 256 codes are tried at compile time with that
  float32 comparison (numpy), and the set of codes where it holds is
  written as one integer comparison of the raw codes (`q >= k`, `q <= k`,
  `q == k`, `q != k`, or never / always as `q < -128` / `q >= -128`). Such
  a form always exists because D is strictly increasing in q: k = q - z
  has |k| <= 255, so D's rounding error (at most 255 * s * 2^-24) is far
  below the step s, and a monotone set of codes is a threshold (eq: at most
  one code; ne: its complement). Ties and equality are decided by the
  enumeration itself, not by a rounded threshold.
* Two int8 tensors on one grid: D strictly increasing, so the raw codes
  compare as their D values do.
* Two int8 tensors on different grids (or one fp32 from the fallback):
  both dequantized (D, exact as above) and compared in float32, which is
  torch's comparison of those same float32 values.

torch.where picks a or b as int8 bytes on the output's grid (each operand
requantized onto it, within half an output step; a number operand is a
constant quantized on it). A bool read as a number (`mask * x`, as torch
promotes) is converted to float32 first (lower.py's q and f).

Layouts: ptec's kernels broadcast over any dim orders, upstream's only over
row-major ones, so when shapes differ the call is made on contiguous
tensors (a 4-D channels-last value cloned to contiguous where its bytes
differ) and its 4-D result made channels-last after."""
from __future__ import annotations

from typing import List

import numpy as np

from ... import quant_math as qm
from ...ir import Node
from ...lowered import Act, clone_dim_order, layout, needs_relayout, new_act, raw_view
from ...pte.program_builder import CHANNELS_LAST
from ...pte.schema import ScalarType, TensorShapeDynamism

BOOL = ScalarType.BOOL
QMIN, QMAX = -128, 127


def dequantized_codes(scale: float, zp: int) -> np.ndarray:
    """D(q) for q = -128..127, as cortex_m::dequantize_per_tensor computes it."""
    q = np.arange(QMIN, QMAX + 1, dtype=np.int32)
    return (q - np.int32(zp)).astype(np.float32) * np.float32(scale)


_TORCH_FLOAT = {"gt": np.greater, "ge": np.greater_equal, "lt": np.less, "le": np.less_equal,
                "eq": np.equal, "ne": np.not_equal}


def code_comparison(kind: str, c: float, scale: float, zp: int):
    """(kind', k): the comparison of the raw int8 code with the integer k
    that holds for exactly the codes q where torch's `D(q) kind c` (in
    float32) holds."""
    with np.errstate(over="ignore", invalid="ignore"):
        holds = _TORCH_FLOAT[kind](dequantized_codes(scale, zp), np.float32(c))
    codes = np.arange(QMIN, QMAX + 1)
    where = codes[holds]
    if where.size == 0:
        return "lt", QMIN
    if where.size == codes.size:
        return "ge", QMIN
    if where.size == 1:
        return "eq", int(where[0])
    if where.size == codes.size - 1:
        return "ne", int(codes[~holds][0])
    if holds[-1] and (holds == (codes >= where[0])).all():
        return "ge", int(where[0])
    if holds[0] and (holds == (codes <= where[-1])).all():
        return "le", int(where[-1])
    raise ValueError(f"{kind} {c}: the codes where it holds are no threshold (grid {scale}, {zp})")


def _dim_order(ctx, a: Act) -> List[int]:
    return list(ctx.b.values[a.value].val.dim_order)


def _contiguous(ctx, a: Act) -> Act:
    order = list(range(len(a.sizes)))
    if _dim_order(ctx, a) == order:
        return a
    if needs_relayout(a.sizes):
        return clone_dim_order(ctx.b, a, order)
    return raw_view(ctx.b, a, a.sizes, order)


def _call(ctx, key: str, named: dict, dtype, shape, scale=None, zp=None) -> Act:
    """One call of `key` whose tensor arguments are `named` (Acts; others
    plain values), into a new out of `shape`: on the values' own layouts
    when every tensor has out's shape and layout, else on contiguous ones
    (see the module's note)."""
    shape = [int(d) for d in shape]
    acts = {k: v for k, v in named.items() if isinstance(v, Act)}
    direct = all(a.sizes == shape and _dim_order(ctx, a) == layout(shape) for a in acts.values())
    if direct:
        out = new_act(ctx.b, dtype, shape, scale, zp)
    else:
        named = {k: (_contiguous(ctx, v) if isinstance(v, Act) else v) for k, v in named.items()}
        out = new_act(ctx.b, dtype, shape, scale, zp, dim_order=list(range(len(shape))))
    ctx.b.call(key, **{k: (v.value if isinstance(v, Act) else v) for k, v in named.items()}, out=out.value)
    if direct or layout(shape) == list(range(len(shape))):
        return out
    if needs_relayout(shape):
        return clone_dim_order(ctx.b, out, CHANNELS_LAST)
    return raw_view(ctx.b, out, shape, layout(shape))


def bool_value(ctx, name: str) -> Act:
    """A bool input of a node: computed (a compare or logical node's value)
    or a bool constant (a buffer mask), stored as bool bytes."""
    node = ctx.g.node(name)
    if node.op == "constant":
        return Act(ctx.b.constant(np.ascontiguousarray(np.asarray(node.attrs["value"], np.bool_))),
                   list(np.shape(node.attrs["value"])), BOOL)
    a = ctx.get(name)
    if a.dtype != BOOL:
        raise ValueError(f"{name}: not a bool value")
    return a


def is_bool_input(ctx, name: str) -> bool:
    node = ctx.g.node(name)
    if node.op == "constant":
        return np.asarray(node.attrs["value"]).dtype == np.bool_
    return ctx.get(name).dtype == BOOL


def nonfinite_tested(ctx, n: Node):
    """A compare that tests a value for NaN / inf (x != x, x == +-inf:
    isnan, isinf, isfinite, nan_to_num, nansum, fmax's tests) where that
    value held NaN or inf on the calibration inputs: its fp32 form (an fp32
    layer's own value), or a refusal when it exists only as int8 codes,
    which hold no NaN or inf (the test would answer False everywhere: a
    silently wrong result). None for any other compare."""
    if not _tests_nonfinite(n):
        return None
    src = ctx.g.node(n.inputs[0])
    what = src.attrs.get("nonfinite")
    if not what:
        return None
    a = ctx.env_f.get(src.name) or ctx.get(src.name)
    if a.dtype == ScalarType.FLOAT:
        return a
    from ...ir import origin
    from ...lower import LoweringError
    raise LoweringError(
        f"{origin(n)} tests {origin(src)} for NaN / inf, but {origin(src)} is computed in int8, "
        f"which holds no NaN or inf (it gives {what.replace(' dropped later', '')} on the calibration "
        "inputs): keep its input inside the function's domain, or calibrate with the inputs the "
        "model will meet" + ("; or give nan_to_num's posinf and neginf as moderate numbers (its defaults, float32's "
                             "extremes, no int8 grid holds beside the other values): it then runs as one table"
                             if origin(n).startswith("nan_to_num") else ""))


def _tests_nonfinite(n: Node) -> bool:
    if len(n.inputs) == 2:
        return n.inputs[0] == n.inputs[1] and n.attrs["kind"] in ("ne", "eq")
    return np.isinf(float(n.attrs.get("scalar", 0.0)))


def op_compare(ctx, n: Node):
    if "integer" in n.attrs:                  # of int64 / int32 values (capture_int_math)
        from .lowering_int import int_compare
        return int_compare(ctx, n)
    kind = n.attrs["kind"]
    if "scalar" in n.attrs:
        c = float(n.attrs["scalar"])
        if is_bool_input(ctx, n.inputs[0]):
            # torch compares a bool with a number in float32: 0/1 against c rounded to float32
            return _call(ctx, f"aten::{kind}.Scalar_out", dict(self=bool_value(ctx, n.inputs[0]),
                                                              other=float(np.float32(c))), BOOL, n.shape)
        tested = nonfinite_tested(ctx, n)
        src = tested if tested is not None else ctx.own(n.inputs[0])
        if src.dtype == ScalarType.FLOAT:
            return _call(ctx, f"aten::{kind}.Scalar_out", dict(self=src, other=c), BOOL, n.shape)
        x = ctx.q(n.inputs[0])
        code_kind, k = code_comparison(kind, c, float(x.scale), int(x.zp))
        return _call(ctx, f"aten::{code_kind}.Scalar_out", dict(self=x, other=int(k)), BOOL, n.shape)
    a, b = n.inputs
    tested = nonfinite_tested(ctx, n)
    if tested is not None:                     # x != x: torch.isnan on the fp32 value
        return _call(ctx, f"aten::{kind}.Tensor_out", dict(self=tested, other=tested), BOOL, n.shape)
    if is_bool_input(ctx, a):
        x, y = bool_value(ctx, a), bool_value(ctx, b)
    else:
        x, y = ctx.own_all((a, b))             # (x < x.flip(2): both int8 codes, not fp32 against int8)
        if not (x.dtype == ScalarType.CHAR and y.dtype == ScalarType.CHAR
                and (float(x.scale), int(x.zp)) == (float(y.scale), int(y.zp))):
            x, y = ctx.f(a), ctx.f(b)          # D of each, compared in float32
    return _call(ctx, f"aten::{kind}.Tensor_out", dict(self=x, other=y), BOOL, n.shape)


def op_logical(ctx, n: Node):
    kind = n.attrs["kind"]
    if kind == "not":
        return _call(ctx, "aten::logical_not.out", dict(self=bool_value(ctx, n.inputs[0])), BOOL, n.shape)
    return _call(ctx, f"aten::logical_{kind}.out", dict(self=bool_value(ctx, n.inputs[0]),
                                                       other=bool_value(ctx, n.inputs[1])), BOOL, n.shape)


def _on_grid(ctx, name: str, scale: float, zp: int, rank: int) -> Act:
    node = ctx.g.node(name)
    if node.op == "constant":
        value = np.asarray(node.attrs["value"], np.float32)
        # a number as a [1, ..., 1] tensor of out's rank, stored contiguous
        # (a view of a constant has no bytes, so _contiguous could not make one)
        q8 = qm.quantize_to_int8(value.reshape([1] * rank) if value.size == 1 else value, scale, zp)
        return Act(ctx.b.constant(np.ascontiguousarray(q8)), list(q8.shape), ScalarType.CHAR, scale, zp)
    from .lowering import _requantize
    return _requantize(ctx, ctx.q(name), scale, zp)


def op_where(ctx, n: Node):
    s, z = n.qparams
    cond = bool_value(ctx, n.inputs[0])
    a, b = (_on_grid(ctx, v, s, z, len(n.shape)) for v in n.inputs[1:])
    return _call(ctx, "aten::where.self_out", dict(condition=cond, self=a, other=b), ScalarType.CHAR, n.shape,
                 s, z)


def fp32_where(ctx, n: Node) -> Act:
    """where on fp32 values (a where marked fp32: nonfinite_in_fp32's
    replacement of NaN / inf, whose values int8 cannot hold): the chosen
    float32 bytes as they are (aten::where.self_out copies elements)."""
    cond = bool_value(ctx, n.inputs[0])
    ab = []
    for v in n.inputs[1:]:
        node = ctx.g.node(v)
        if node.op == "constant":
            value = np.asarray(node.attrs["value"], np.float32)
            value = value.reshape([1] * len(n.shape)) if value.size == 1 else value
            ab.append(Act(ctx.b.constant(np.ascontiguousarray(value)), list(value.shape), ScalarType.FLOAT))
        else:
            ab.append(ctx.f(v))
    return _call(ctx, "aten::where.self_out", dict(condition=cond, self=ab[0], other=ab[1]), ScalarType.FLOAT,
                 n.shape)


_CAST = {"float32": ScalarType.FLOAT, "int32": ScalarType.INT, "int64": ScalarType.LONG}


def op_bool_to(ctx, n: Node):
    x = bool_value(ctx, n.inputs[0])
    out = new_act(ctx.b, _CAST[n.attrs["dtype"]], x.sizes, dim_order=_dim_order(ctx, x))
    ctx.b.call("dim_order_ops::_to_dim_order_copy.out", self=x.value, non_blocking=False, dim_order=None,
               out=out.value)
    return out


def bool_to_float(ctx, a: Act) -> Act:
    """A bool value as float32 0/1 (torch's promotion when a bool meets a number)."""
    out = new_act(ctx.b, ScalarType.FLOAT, a.sizes, dim_order=_dim_order(ctx, a))
    ctx.b.call("dim_order_ops::_to_dim_order_copy.out", self=a.value, non_blocking=False, dim_order=None,
               out=out.value)
    return out


def _narrow_cast(ctx, name: str) -> bool:
    from ...capture_int_casts import narrow_dtype
    return narrow_dtype(ctx.g.node(name)) in ("int16", "uint8", "int8")


def op_masked_select(ctx, n: Node):
    """x[mask] / torch.masked_select: a program output only (capture_masked_select),
    or x[mask] of a mask over x's leading dims (attrs rows: its rows kept),
    in the output's dtype (int8 on x's grid with int8_io, float32 otherwise),
    so no kernel after it sees its variable length. out is planned at the
    bound (n.shape) and marked DYNAMIC_BOUND; the kernel sets its length."""
    # row-major self and mask: upstream's kernel wants one dim order for all
    # three (out is 1-D) and reads unbroadcast operands linearly
    mask = _contiguous(ctx, bool_value(ctx, n.inputs[1]))
    table = ctx.g.node(n.inputs[0])
    if table.op == "constant" and np.asarray(table.attrs["value"]).dtype.kind in "iu":
        # an integer table (torch.nonzero's coordinates: capture_nonzero), selected as int64 bytes
        value = np.ascontiguousarray(np.asarray(table.attrs["value"], np.int64))
        x = Act(ctx.b.constant(value), list(value.shape), ScalarType.LONG)
    else:
        src = ctx.get(n.inputs[0])
        # int64 positions (capture_selection_mix: a sort's indices picked), and unique's counts' integer
        # and bool readers (capture_counts_readers: `counts.int()`, `counts > 1`) are copied as they are
        kept = src.dtype in (ScalarType.LONG, ScalarType.INT, ScalarType.BOOL)
        # unique's sorted int16 / uint8 / int8 values (capture_unique_narrow): copied as they are
        kept = kept or _narrow_cast(ctx, n.inputs[0])
        x = _contiguous(ctx, src if kept else ctx.q(n.inputs[0]) if ctx.int8_io else ctx.f(n.inputs[0]))
    # ([1, 1, 1, bound] of a row (capture_selection_row_output) row-major too, as self and mask)
    out = new_act(ctx.b, x.dtype, n.shape, x.scale, x.zp,
                  dim_order=list(range(len(n.shape))) if n.attrs.get("row") or n.attrs.get("at") else None)
    ctx.b.values[out.value].val.shape_dynamism = TensorShapeDynamism.DYNAMIC_BOUND
    if n.attrs.get("rows"):
        # a mask over x's leading dims: x[mask] keeps the rows (aten::index
        # with the one bool index), out [rows bound, x's other dims]
        # after `at` whole dims (x[:, :, mask]: capture_unique_slices) None indices first, as torch's
        ctx.b.call("aten::index.Tensor_out", self=x.value, indices=[None] * int(n.attrs.get("at", 0)) + [mask.value],
                   out=out.value)
    else:
        ctx.b.call("aten::masked_select.out", self=x.value, mask=mask.value, out=out.value)
    return out


LOWERINGS = {"compare": op_compare, "logical": op_logical, "where": op_where, "bool_to": op_bool_to,
             "masked_select": op_masked_select}
