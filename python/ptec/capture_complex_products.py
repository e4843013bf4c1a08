"""Products, contractions and comparisons of complex values (issue 15), on
the [..., 2] pair of real and imaginary parts ptec.capture_complex
carries, its dim kept last:

- torch.prod / Tensor.prod (of every element, or along a dim, keepdim)
  and torch.cumprod / Tensor.cumprod along a dim: the one-wide slices
  along the dim multiplied in order, each product capture_complex's
  (ac - bd, ad + bc) (four int8 muls, a sub, an add, a cat); cumprod the
  running products joined along the dim (as capture_rewrites' real prod,
  at most MAX_PRODUCT_TERMS terms);
- torch.einsum of complex operands (values or complex constants, any
  equation capture_rewrites' real einsum takes: letters, '...', the
  sublist form): the product of k operands split into the 2^k real
  einsums of their parts (k <= 3), each capture_rewrites' einsum; a term
  with m imaginary parts has the factor i^m, so the real part sums the
  terms of m = 0 (+), 2 (-), the imaginary part those of m = 1 (+), 3 (-);
  more operands contracted two at a time (capture_complex_rest);
- torch.dot / Tensor.dot, torch.vdot / Tensor.vdot, torch.inner /
  Tensor.inner: the einsums 'i,i->', the same with the first operand
  conjugated (its imaginary part negated), and '...k,...k->' over the
  last dims (A's other dims before B's). torch.dot / vdot of complex
  vectors give 0 in this torch 1.13 build's CPU kernels (its BLAS call),
  torch.inner the sum torch documents; ptec computes the documented sums
  (sum a_i b_i, sum conj(a_i) b_i), which the tests check against
  torch.inner;
- ==, !=, torch.eq / ne / not_equal of a complex value and a complex
  value, constant, number or real value (the real one as v + 0i): the
  parts compared (capture_bool's compare), eq the `and` of both parts',
  ne the `or`; torch.isclose of two complex values (or a value and a
  complex constant): torch's |a - b| <= atol + rtol |b| with the complex
  magnitudes (the fp32 hypot of each pair's parts), or a == b, or with
  equal_nan both NaN (capture_complex_rest);
- z[idx] / z[..., idx] / z[:, idx] with one index an int64 value
  computed in the program (argmax, x.long(), arithmetic on them:
  capture_indices.is_index) and ints or ':' elsewhere: capture_tensor_index's
  computed rows on the pair (the pair's dim is one more trailing dim of
  each row); several index tensors: capture_complex_rest.

torch refuses <, >, <=, >= on complex values ("lt_cpu" not implemented
for 'ComplexFloat'), einsum and inner of a complex and a float operand,
torch.cdist of complex values: quoted by capture_complex's torch_refusal.
torch.equal / torch.allclose (a Python bool) run as their 0-d bool tensor,
for real values too (capture_bool_calls)."""
from __future__ import annotations

import itertools
import operator
import types
from typing import Optional

import numpy as np
import torch

from .capture_calls import call_is, refuse_call
from .capture_complex_rest import nan_pairs, pairwise_einsum, several_computed_indices
from .capture_rewrites import MAX_PRODUCT_TERMS, _Steps

_PROD = (torch.prod, "prod")
_CUMPROD = (torch.cumprod, "cumprod")
_DOT = (torch.dot, "dot")
_VDOT = (torch.vdot, "vdot")
_INNER = (torch.inner, "inner")
_EQ = (operator.eq, torch.eq, "eq", "__eq__")
_NE = (operator.ne, torch.ne, "ne", torch.not_equal, "not_equal", "__ne__")
_ISCLOSE = (torch.isclose, "isclose")
_LETTERS = "abcdefghijklmnopqrstuvwxyz"
MAX_EINSUM_OPERANDS = 3         # 2^k real einsums; more: two at a time


def _int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _product(fn, s: _Steps, p: str, shape, out_shape) -> Optional[str]:
    """prod / cumprod of pair p (of S) along a dim, or of every element."""
    from .capture_complex import _mul
    cumulative = call_is(fn, _CUMPROD)
    names = ("input", "dim", "dtype") if cumulative else ("input", "dim", "keepdim", "dtype")
    args = dict(zip(names, fn.args))
    if set(fn.kwargs) - set(names) or set(args) & set(fn.kwargs):
        return None
    args.update(fn.kwargs)
    dim, keepdim = args.get("dim"), args.get("keepdim", False)
    if args.get("dtype") not in (None, torch.complex64, torch.complex128) or not isinstance(keepdim, bool):
        return None
    if dim is None:
        if cumulative or keepdim:
            return None
        n = int(np.prod(shape)) if shape else 1
        p, shape, dim = s("reshape", [p], target_shape=[n, 2]), [n], 0
    if not _int(dim) or not shape:
        return None
    dim %= len(shape)
    if not 1 <= shape[dim] <= MAX_PRODUCT_TERMS:
        return None
    one = list(shape)
    one[dim] = 1
    terms = [s("slice", [p], dim=dim, start=i, end=i + 1) for i in range(shape[dim])]
    running = [terms[0]]
    for term in terms[1:]:
        running.append(_mul(s, running[-1], one, ("pair", term, one), one))
    if cumulative:
        return s("cat", running, dim=dim) if len(running) > 1 else s("identity", running)
    return s("reshape", [running[-1]], target_shape=list(out_shape) + [2])


def _parts_of(s: _Steps, operand, conj=False) -> Optional[tuple]:
    """(re, im or None, shape) of a pair or complex constant, each part a
    real value of the operand's shape; None for any other operand."""
    from .capture_complex import _parts
    if operand is None:
        return None
    if operand[0] == "constant" and np.iscomplexobj(operand[1]):
        v = np.asarray(operand[1])
        im = np.imag(v) * (-1.0 if conj else 1.0)
        return (s.const(np.real(v).astype(np.float32)), s.const(im.astype(np.float32)) if im.any() else None,
                list(v.shape))
    if operand[0] != "pair":
        return None
    shape = list(operand[2])
    re, im = (s("reshape", [q], target_shape=shape) for q in _parts(s, operand[1], shape))
    return re, s("neg", [im]) if conj else im, shape


def _real_einsum(s: _Steps, args, names, shapes, k: int) -> Optional[str]:
    """capture_rewrites' real einsum of the call args (fn.args) with its
    operand nodes, in order, standing for real values `names` of `shapes`:
    a stand-in fx call whose operands are placeholders of those names and
    shapes; its nodes appended to s."""
    from .capture_rewrites import _einsum_nodes
    graph = torch.fx.Graph()
    stand = []
    for name, shape in zip(names, shapes):
        ph = graph.placeholder(f"ph{len(stand)}")
        ph.name = name
        ph.meta["tensor_meta"] = types.SimpleNamespace(shape=torch.Size(shape), dtype=torch.float32)
        stand.append(ph)
    order = iter(stand)             # operands in the order fx visits them (one stand-in per place: z twice too)
    call = graph.call_function(torch.einsum, torch.fx.node.map_arg(args, lambda a: next(order)))
    call.name = f"{s.name}__e{k}"
    nodes = _einsum_nodes(call, None)
    if nodes is None:
        return None
    s.nodes.extend(_folded(s.nodes, nodes))
    return call.name


def _folded(before, nodes):
    """nodes with each reshape / permute of a constant made the constant
    it gives (a complex constant's part: the program holds constants, not
    views of them)."""
    values = {n.name: np.asarray(n.attrs["value"]) for n in before if n.op == "constant"}
    for n in nodes:
        if n.op in ("reshape", "permute") and len(n.inputs) == 1 and n.inputs[0] in values:
            v = values[n.inputs[0]]
            v = v.reshape(n.attrs["target_shape"]) if n.op == "reshape" else np.transpose(v, n.attrs["dims"])
            n.op, n.inputs, n.attrs = "constant", [], dict(value=np.ascontiguousarray(v, np.float32))
        if n.op == "constant":
            values[n.name] = np.asarray(n.attrs["value"])
    return nodes


def _complex_einsum(s: _Steps, args, operands, out_shape) -> Optional[str]:
    """The pair of the einsum (call args `args`) of complex operands [(re, im or None, shape)]: the real einsums of
    each choice of parts, summed with i^m's signs."""
    from .capture_complex import _join
    if len(operands) > MAX_EINSUM_OPERANDS:
        return None
    sums = {0: [], 1: []}                   # part -> [(sign, name)]
    for k, choice in enumerate(itertools.product((0, 1), repeat=len(operands))):
        if any(c and o[1] is None for c, o in zip(choice, operands)):
            continue                        # a constant's zero imaginary part
        term = _real_einsum(s, args, [o[c] for c, o in zip(choice, operands)],
                            [o[2] for o in operands], k)
        if term is None:
            return None
        m = sum(choice)
        sums[m % 2].append((1 if m % 4 < 2 else -1, term))

    def total(terms):
        if not terms:
            return None
        terms = sorted(terms, key=lambda t: -t[0])          # a positive term first
        cur = terms[0][1] if terms[0][0] > 0 else s("neg", [terms[0][1]])
        for sign, name in terms[1:]:
            cur = s("add" if sign > 0 else "sub", [cur, name])
        return cur
    re, im = total(sums[0]), total(sums[1])
    whole = list(out_shape) + [1]
    if im is None:
        im = s("mul", [re, s.const(np.float32(0.0))])
    return _join(s, s("reshape", [re], target_shape=whole), s("reshape", [im], target_shape=whole), len(out_shape))


def _einsum(fn, by_name, s: _Steps, out_shape) -> Optional[str]:
    from .capture_complex import _operand, is_complex
    from .capture_rewrites import _einsum_parts
    parts = _einsum_parts(fn)
    if parts is None or not is_complex(fn):
        return None
    if isinstance(parts, str):
        refuse_call(fn, parts)
    ops = parts[2]
    operands = [_parts_of(s, _operand(o, by_name)) for o in ops]
    if any(o is None for o in operands):
        return None
    if len(ops) > MAX_EINSUM_OPERANDS:             # two at a time (capture_complex_rest)
        return pairwise_einsum(s, parts[0], parts[1], operands, parts[4], out_shape)
    return _complex_einsum(s, fn.args, operands, out_shape)


def _dots(fn, by_name, s: _Steps, out_shape) -> Optional[str]:
    """dot / vdot / inner of two complex operands as einsums."""
    from .capture_complex import _operand, is_complex
    if len(fn.args) != 2 or fn.kwargs or not is_complex(fn) or not all(isinstance(a, torch.fx.Node)
                                                                          for a in fn.args):
        return None
    conj = call_is(fn, _VDOT)
    a = _parts_of(s, _operand(fn.args[0], by_name), conj=conj)
    b = _parts_of(s, _operand(fn.args[1], by_name))
    if a is None or b is None or not a[2] or not b[2] or a[2][-1] != b[2][-1]:
        return None
    ra, rb = len(a[2]), len(b[2])
    if call_is(fn, _INNER):
        if ra + rb - 1 > len(_LETTERS):
            return None
        left, right = _LETTERS[:ra - 1], _LETTERS[ra - 1:ra + rb - 2]
        eq = f"{left}z,{right}z->{left}{right}"
    elif ra == rb == 1:
        eq = "z,z->"
    else:
        return None
    return _complex_einsum(s, (eq, fn.args[0], fn.args[1]), [a, b], out_shape)


def _sides(s: _Steps, operand, half) -> Optional[tuple]:
    """(re, im) of a comparison's operand at the full shape + [1]: each a
    node name or a float (compared as a scalar)."""
    from .capture_complex import _full_const, _parts, _real_wide, _wide
    kind = operand[0] if operand is not None else None
    if kind == "number":
        return float(operand[1].real), float(operand[1].imag)
    if kind == "constant":
        v = np.asarray(operand[1])
        return _full_const(s, np.real(v)[..., None], half), _full_const(s, np.imag(v)[..., None], half)
    if kind == "real":
        return _real_wide(s, operand, half), 0.0
    if kind == "pair":
        return tuple(_wide(s, q, list(operand[2]) + [1], half) for q in _parts(s, operand[1], operand[2]))
    return None


def _compare(s: _Steps, kind: str, a, b, out_shape) -> str:
    """a compared with b (a node or a float), both of out_shape + [1],
    viewed as out_shape first: the result is the bool op itself
    (capture_bool's readers, .all() and .float(), take it as a bool)."""
    a = s("reshape", [a], target_shape=list(out_shape))
    if isinstance(b, float):
        return s("compare", [a], kind=kind, scalar=b)
    return s("compare", [a, s("reshape", [b], target_shape=list(out_shape))], kind=kind)


def _comparison(fn, by_name, s: _Steps, out_shape) -> Optional[str]:
    from .capture_complex import _operand
    if len(fn.args) != 2 or fn.kwargs:
        return None
    a, b = (_operand(v, by_name) for v in fn.args)
    if a is None or b is None or "pair" not in (a[0], b[0]):
        return None
    if a[0] != "pair":
        a, b = b, a
    half = list(out_shape) + [1]
    x, y = _sides(s, a, half), _sides(s, b, half)
    if x is None or y is None:
        return None
    kind = "eq" if call_is(fn, _EQ) else "ne"
    return s("logical", [_compare(s, kind, x[0], y[0], out_shape), _compare(s, kind, x[1], y[1], out_shape)],
             kind="and" if kind == "eq" else "or")


def _isclose(fn, by_name, s: _Steps, out_shape) -> Optional[str]:
    """torch.isclose(a, b, rtol, atol, equal_nan) of complex values: a == b,
    or |a - b| <= atol + rtol |b|; with equal_nan, or both NaN (either part
    NaN: capture_complex_rest.nan_pairs)."""
    from .capture_complex import _add, _operand, _parts, _wide
    args = dict(zip(("input", "other", "rtol", "atol", "equal_nan"), fn.args))
    if set(args) & set(fn.kwargs):
        return None
    args.update(fn.kwargs)
    rtol, atol = args.get("rtol", 1e-05), args.get("atol", 1e-08)
    equal_nan = args.get("equal_nan", False)
    if set(args) - {"input", "other", "rtol", "atol", "equal_nan"} or not isinstance(equal_nan, bool) \
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 for v in (rtol, atol)):
        return None
    a, b = _operand(args.get("input"), by_name), _operand(args.get("other"), by_name)
    if a is None or b is None or a[0] != "pair" or b[0] not in ("pair", "constant") \
            or (equal_nan and b[0] == "constant" and np.isnan(np.asarray(b[1])).any()):
        return None
    half = list(out_shape) + [1]
    x, y = _sides(s, a, half), _sides(s, b, half)
    same = s("logical", [_compare(s, "eq", x[0], y[0], out_shape), _compare(s, "eq", x[1], y[1], out_shape)],
             kind="and")
    if equal_nan and b[0] == "pair":                # (a constant holding a NaN: refused above)
        same = s("logical", [same, nan_pairs(s, x, y, out_shape)], kind="or")     # (capture_complex_rest)
    diff = _add(s, a[1], a[2], b, out_shape, negate_other=True)
    if diff is None:
        return None
    error = s("binary_math", list(_parts(s, diff, out_shape)), fn="hypot")
    if b[0] == "pair":
        size = s("binary_math", list(_parts(s, _wide(s, b[1], list(b[2]) + [2], half[:-1] + [2]), out_shape)),
                 fn="hypot")
        allowed = s("elementwise", [size], fn="math", name="isclose_allowed", rtol=float(rtol), atol=float(atol))
    else:
        v = np.broadcast_to(np.abs(np.asarray(b[1])), tuple(out_shape))[..., None]
        allowed = s.const((atol + rtol * v).astype(np.float32))
    return s("logical", [same, _compare(s, "le", error, allowed, out_shape)], kind="or")


def _computed_index(fn, by_name, s: _Steps, x, out_shape) -> Optional[str]:
    """z[..., ids] with one index an int64 value computed in the program."""
    from .capture_indices import is_index
    from .capture_tensor_index import computed_rows_nodes
    if fn.target is not operator.getitem or len(fn.args) != 2 or x is None or x[0] != "pair":
        return None
    shape = list(x[2])
    idx = fn.args[1] if isinstance(fn.args[1], tuple) else (fn.args[1],)
    found = [d for d, i in enumerate(idx) if isinstance(i, torch.fx.Node)]
    if len(found) != 1 or not is_index(by_name.get(idx[found[0]].name)) or sum(i is Ellipsis for i in idx) > 1 \
            or any(i is not Ellipsis and i != slice(None) and not _int(i) for d, i in enumerate(idx) if d != found[0]):
        return several_computed_indices(fn, by_name, s, x[1], shape, out_shape)     # (capture_complex_rest)
    if Ellipsis in idx:
        e = idx.index(Ellipsis)
        idx = tuple(idx[:e]) + (slice(None),) * (len(shape) - len(idx) + 1) + tuple(idx[e + 1:])
    if len(idx) > len(shape):
        return None
    k = next(d for d, i in enumerate(idx) if isinstance(i, torch.fx.Node))
    ids = idx[k]
    meta = ids.meta.get("tensor_meta")
    if meta is None or not hasattr(meta, "shape"):
        return None
    cur = x[1]
    for d, i in enumerate(idx):
        if d != k and _int(i):
            if not -shape[d] <= i < shape[d]:
                return None
            cur = s("slice", [cur], dim=d, start=i % shape[d], end=i % shape[d] + 1)
            shape[d] = 1
    ids_shape = [int(v) for v in meta.shape] or [1]         # a 0-d index (x.argmax()): one row, its dim dropped
    rows = computed_rows_nodes(f"{s.name}__rows", cur, shape + [2], k, ids.name, ids_shape, list(out_shape) + [2])
    if rows is None:
        return None
    s.nodes.extend(rows)
    return s("identity", [rows[-1].name])


def product_nodes(fn, by_name, s: _Steps, x, out_shape) -> Optional[str]:
    """The result (a pair, or a bool value) of one product, contraction,
    comparison or computed index of complex values, or None."""
    from .capture_complex import is_complex
    if call_is(fn, _PROD + _CUMPROD):
        if x is None or x[0] != "pair" or not is_complex(fn):
            return None
        return _product(fn, s, x[1], list(x[2]), out_shape)
    if fn.target is torch.einsum:
        return _einsum(fn, by_name, s, out_shape)
    if call_is(fn, _DOT + _VDOT + _INNER):
        return _dots(fn, by_name, s, out_shape)
    if call_is(fn, _EQ + _NE):
        return _comparison(fn, by_name, s, out_shape)
    if call_is(fn, _ISCLOSE):
        return _isclose(fn, by_name, s, out_shape)
    return _computed_index(fn, by_name, s, x, out_shape)
