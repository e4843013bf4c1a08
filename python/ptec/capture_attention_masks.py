"""Attention masks written in forward (issue 15): a softmax over the last
dim of scores whose masked positions were first set to -inf or a very
negative number:

    scores.masked_fill(mask, float("-inf")).softmax(-1)     (or -1e9, -1e4, finfo.min)
    torch.where(mask, float("-inf"), scores)   torch.where(keep, scores, -1e9)
    torch.softmax(scores + mask_bias, -1)      (a constant bias of 0 and -inf / -1e9)

No int8 grid holds -inf (and a -1e9 spreads the grid so wide that the
scores are lost), so the masked positions are kept out of the softmax
itself: the masked value is never made. The masked_fill (where, add) is
read only by these softmaxes, so capture makes nothing for it
(`feeds_masked_softmax`), and each softmax reads the scores and the mask
(`masked_softmax_nodes`):

* A constant mask (a buffer, `torch.triu(torch.ones(T, T, dtype=bool), 1)`
  made in forward, `M[:T, :T]`): ptec's masked softmax op
  (ptec::quantized_softmax_masked, docs/kernels.md "masked softmax"), on
  rank-3 rows (a rank-4 [B, H, T, S] score tensor is viewed as
  [B * H, T, S] around it).
* A mask computed from the input (`x < t`): the softmax of the kept
  positions spelled in ops ptec lowers in int8. The masked positions are
  first moved to the row's minimum (z = where(mask, min, x): the grid
  stays the scores'), m = the row maximum of z (the kept maximum), then
  e = where(mask, 0, exp(z - m)), and e / max(sum(e), 1). The kept maximum
  gives exp(0) = 1, so the sum is at least 1 and the division never
  magnifies the rounding of e.

Masked positions get probability exactly 0. A row masked entirely: torch
gives NaN for -inf (no int8 value holds it; ptec gives 0 there, as its
masked softmax op does), and 1/n everywhere for a finite value (every
position equal): ptec gives 1/n too. A finite additive bias that masks a
whole row is refused in one line (torch's result there is the softmax of
the rounded sums scores + bias, which depends on the bias's size).

A value counts as masking when it is -inf or at most -1e4: exp(-1e4 + s)
is 0 in float32 for any score s below 9000, so torch's softmax gives the
masked positions exactly 0 too."""
from __future__ import annotations

import operator
from typing import List, Optional

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from .capture_bool import bool_valued
from .capture_calls import _meta_shape, _reduce_max_nodes, _scalar_arg
from .capture_rewrites import _constant_of, _Steps
from .ir import Node

MASKING = -1e4          # a fill at or below this takes no part in a softmax (float32's exp underflows)

_SOFTMAX = (torch.softmax, F.softmax, "softmax")
_ADD = (operator.add, torch.add, "add", "__add__", "__radd__")


def _fill(v, by_name) -> Optional[float]:
    """A masking fill: a number or a float constant holding one number
    (HF GPT-2's `torch.full([], torch.finfo(dtype).min)`, a full_like) at or
    below MASKING, else None."""
    c = _constant_value(v, by_name)
    if c is not None and c.size >= 1 and c.dtype.kind == "f" and (c == c.reshape(-1)[0]).all():
        # one number, or a tensor filled with it: torch.full_like(x, -1e9), torch.ones_like(x) * -1e4,
        # torch.full((T, T), -1e9) made in forward (the masked_fill form; one grid with the scores loses them)
        v = float(c.reshape(-1)[0])
    if isinstance(v, (int, float)) and not isinstance(v, bool) and v <= MASKING:
        return float(v)
    return None


_FOLDED = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}


def _constant_value(v, by_name) -> Optional[np.ndarray]:
    """The value of fx argument v when capture holds it as a constant, or
    as the arithmetic of constants capture left as ops (`torch.ones_like(x)
    * -1e4`: a constant times a constant number), else None."""
    return _folded(by_name.get(v.name) if isinstance(v, torch.fx.Node) else None, by_name, 4)


def _folded(node, by_name, depth: int) -> Optional[np.ndarray]:
    if node is None:
        return None
    if node.op == "constant":
        return np.asarray(node.attrs["value"])
    if depth == 0 or not (node.op == "neg" and len(node.inputs) == 1 or node.op in _FOLDED
                          and len(node.inputs) == 2) or set(node.attrs) - {"source"}:
        return None
    ins = [_folded(by_name.get(i), by_name, depth - 1) for i in node.inputs]
    if any(i is None or i.dtype.kind != "f" for i in ins):
        return None
    with np.errstate(all="ignore"):
        return (np.negative(ins[0]) if node.op == "neg" else _FOLDED[node.op](ins[0], ins[1])).astype(np.float32)


class _Masked:
    """What a masked_fill / where / add before a softmax does: scores (fx
    node), the mask (a constant bool array or the name of a computed bool
    node), invert (the mask's True positions are the kept ones), value
    (the fill: -inf or a finite number; of an additive mask its largest
    masking value, finite if any is), and bias (an additive mask's other,
    finite part, or None)."""

    def __init__(self, scores, mask, invert=False, value=None, bias=None):
        self.scores, self.mask, self.invert, self.value, self.bias = scores, mask, invert, value, bias


def _mask_of(a, by_name):
    """A constant bool array, the name of a bool computed in the program, or None."""
    c = _constant_of(a, by_name)
    if c is not None:
        return c if c.dtype == np.bool_ else None
    if isinstance(a, torch.fx.Node) and by_name.get(a.name) is not None and bool_valued(by_name[a.name]):
        return a.name
    return None


def _masked(fn, by_name) -> Optional[_Masked]:
    """The masking of call fn (a masked_fill, where or add of a constant
    bias), or None for any other call."""
    if fn.op not in ("call_function", "call_method") or fn.kwargs.get("out") is not None:
        return None
    t, args = fn.target, fn.args
    if t in ("masked_fill", torch.masked_fill) and len(args) + len(fn.kwargs) == 3 \
            and set(fn.kwargs) <= {"value"} and isinstance(args[0], torch.fx.Node):
        value = _fill(args[2] if len(args) > 2 else fn.kwargs["value"], by_name)
        mask = _mask_of(args[1], by_name)
        if mask is not None and value is not None:
            return _Masked(args[0], mask, value=value)
        return None
    if t is torch.where and len(args) == 3 and not fn.kwargs:
        cond, a, b = args
        mask = _mask_of(cond, by_name)
        if mask is None:
            return None
        if _fill(a, by_name) is not None and isinstance(b, torch.fx.Node) and _constant_of(b, by_name) is None:
            return _Masked(b, mask, value=_fill(a, by_name))
        if _fill(b, by_name) is not None and isinstance(a, torch.fx.Node) and _constant_of(a, by_name) is None:
            return _Masked(a, mask, invert=True, value=_fill(b, by_name))
        return None
    try:
        is_add = t in _ADD
    except TypeError:
        is_add = False
    computed_bias = _computed_bias(fn, by_name, is_add)
    if computed_bias is not None:
        return computed_bias
    if is_add and len(args) == 2 and not fn.kwargs:
        for scores, bias in (args, args[::-1]):
            c = _constant_of(bias, by_name)
            if isinstance(scores, torch.fx.Node) and _constant_of(scores, by_name) is None and c is not None \
                    and c.dtype.kind == "f" and (c <= MASKING).any() and (np.isfinite(c) | (c <= MASKING)).all():
                blocked = c <= MASKING
                return _Masked(scores, blocked, bias=np.where(blocked, 0.0, c).astype(np.float32),
                               value=float(c[blocked].max()))
    return None


_SUB = (operator.sub, torch.sub, "sub", "__sub__")


def _computed_bias(fn, by_name, is_add: bool) -> Optional[_Masked]:
    """scores + (1 - keep.float()) * -1e9, scores - 1e9 * (1 - keep.float()),
    scores + (~keep).float() * -1e9: an additive mask of a bool computed in
    the program (a 0/1 factor times a masking number), the masked_fill form
    of that bool; else None."""
    try:
        is_sub = fn.target in _SUB
    except TypeError:
        is_sub = False
    if not (is_add or is_sub) or len(fn.args) != 2 or fn.kwargs:
        return None
    pairs = [tuple(fn.args)] if is_sub else [tuple(fn.args), tuple(fn.args[::-1])]
    for scores, bias in pairs:
        if not isinstance(scores, torch.fx.Node) or not isinstance(bias, torch.fx.Node) \
                or _constant_value(scores, by_name) is not None or _meta_shape(bias) != _meta_shape(scores):
            continue
        found = _zero_one_times(by_name.get(bias.name), by_name)
        if found is None:
            continue
        mask, invert, coef = found
        coef = -coef if is_sub else coef
        if coef <= MASKING:
            return _Masked(scores, mask, invert=invert, value=coef)
    return None


def _zero_one_times(node, by_name):
    """(bool name, invert, c) of a node that is c where the bool is True
    (invert: where it is False) and 0 elsewhere: b.float() * c, (1 -
    b.float()) * c, (b.float() - 1) * -c; else None."""
    if node is None or node.op != "mul" or len(node.inputs) != 2 or set(node.attrs) - {"source"}:
        return None
    for factor, number in (node.inputs, node.inputs[::-1]):
        c = _folded(by_name.get(number), by_name, 2)
        f = by_name.get(factor)
        if c is None or c.size != 1 or not np.isfinite(c).all() or f is None:
            continue
        c = float(c.reshape(-1)[0])
        picked = _zero_one(f, by_name)
        if picked is not None:
            mask, invert, sign = picked
            return mask, invert, sign * c
    return None


def _zero_one(node, by_name):
    """(bool name, invert, sign): b.float() is (b, False, 1), 1 - b.float()
    is (b, True, 1), b.float() - 1 is (b, True, -1); else None."""
    def cast(n):
        if n is not None and n.op == "bool_to" and n.attrs.get("dtype") == "float32" and len(n.inputs) == 1:
            b = by_name.get(n.inputs[0])
            return n.inputs[0] if b is not None and bool_valued(b) else None
        return None
    if cast(node) is not None:
        return cast(node), False, 1.0
    if node.op == "sub" and len(node.inputs) == 2 and not set(node.attrs) - {"source"}:
        first, second = (by_name.get(i) for i in node.inputs)
        one = [_folded(n, by_name, 1) for n in (first, second)]
        if one[0] is not None and one[0].size == 1 and float(one[0].reshape(-1)[0]) == 1.0 and cast(second):
            return cast(second), True, 1.0
        if one[1] is not None and one[1].size == 1 and float(one[1].reshape(-1)[0]) == 1.0 and cast(first):
            return cast(first), True, -1.0
    return None


def _softmax_dim(fn, mods) -> Optional[int]:
    """The dim of a softmax call (function, method or nn.Softmax), or None."""
    if fn.op == "call_module":
        m = mods.get(fn.target) if mods is not None else None
        return m.dim if isinstance(m, nn.Softmax) and m.dim is not None else None
    if fn.op not in ("call_function", "call_method") or fn.target not in _SOFTMAX or len(fn.args) > 3 \
            or set(fn.kwargs) - {"dim", "dtype", "_stacklevel"} or fn.kwargs.get("dtype") not in (None, torch.float32):
        return None
    dim = _scalar_arg(fn, 1, "dim")
    dtype = fn.args[2] if len(fn.args) > 2 else None
    return dim if isinstance(dim, int) and not isinstance(dim, bool) and dtype in (None, torch.float32) else None


def _over_last(fn, mods) -> bool:
    shape, dim = _meta_shape(fn), _softmax_dim(fn, mods)
    return shape is not None and dim is not None and len(shape) >= 1 and dim % len(shape) == len(shape) - 1


def _masking_scores(fn, by_name) -> Optional[_Masked]:
    """The masking of fn when it keeps the scores' shape (the mask broadcasts to it)."""
    m = _masked(fn, by_name)
    if m is None or _meta_shape(fn) is None or _meta_shape(m.scores) != _meta_shape(fn):
        return None
    if not isinstance(m.mask, str):
        try:
            np.broadcast_to(m.mask, _meta_shape(fn))
        except ValueError:
            return None
    return m


def _reads_masked(u, fn, mods) -> bool:
    return _over_last(u, mods) and bool(u.args) and u.args[0] is fn


def feeds_masked_softmax(fn, mods, by_name) -> bool:
    """fn masks scores (masked_fill, where or a bias add with -inf or a
    number <= MASKING) and is read only by softmaxes over the last dim,
    which take the scores and the mask themselves: capture makes nothing
    for fn. (Read by others too, it is made as before for them.)"""
    return _masking_scores(fn, by_name) is not None and bool(fn.users) \
        and all(_reads_masked(u, fn, mods) for u in fn.users)


def masked_softmax_nodes(fn, mods, by_name, error, source: str) -> Optional[List[Node]]:
    """The nodes of a softmax over the last dim of a masking call (see the
    module's note), else None."""
    if not fn.args or not isinstance(fn.args[0], torch.fx.Node) or not _reads_masked(fn, fn.args[0], mods):
        return None
    m = _masking_scores(fn.args[0], by_name)
    if m is None:
        return None
    s = _Steps(fn.name)
    shape = _meta_shape(fn)
    scores = m.scores.name
    if m.bias is not None and m.bias.any():
        # the bias's finite part (a relative position bias beside the mask): an int8 add
        scores = s("add", [scores, s.const(np.broadcast_to(m.bias, shape).copy())])
    if isinstance(m.mask, str):
        mask = s("logical", [m.mask], kind="not") if m.invert else m.mask
        _computed(s, scores, mask, shape, uniform=np.isfinite(m.value))
        return s.done()
    mask = np.broadcast_to(~m.mask if m.invert else m.mask, shape)
    whole = mask.all(-1)
    if whole.any() and m.bias is not None and np.isfinite(m.value):
        raise error(f"{source}: a finite additive mask ({m.value:g}) that masks whole rows: torch's softmax there "
                    "is of the rounded sums scores + mask; mask with float('-inf') or masked_fill")
    _constant(s, scores, mask, shape)
    if whole.any() and np.isfinite(m.value):
        # every position of the row holds the same fill: torch gives 1/n there (the masked softmax gives 0)
        s("add", [s.nodes[-1].name, s.const(np.where(whole[..., None], 1.0 / shape[-1], 0.0) * np.ones(shape))])
    return s.done()


def _constant(s: _Steps, scores: str, mask: np.ndarray, shape: List[int]) -> None:
    """ptec's masked softmax op over rows of rank <= 3 (its kernel's)."""
    if not mask.any():
        s("softmax", [scores], dim=-1)
        return
    rows = shape if len(shape) <= 3 else [int(np.prod(shape[:-2])), shape[-2], shape[-1]]
    flat = mask.reshape(rows)
    if len(rows) == 3 and (flat == flat[:1]).all():
        flat = flat[:1]                 # one [T, S] mask for every head: the kernel's mask_rows
    if rows != shape:
        scores = s("reshape", [scores], target_shape=rows)
    s("masked_softmax", [scores], dim=-1, mask=np.array(flat, dtype=bool))
    if rows != shape:
        s("reshape", [s.nodes[-1].name], target_shape=list(shape))


def _computed(s: _Steps, scores: str, mask: str, shape: List[int], uniform: bool) -> None:
    """The softmax of the kept positions, mask a bool computed in the
    program (see the module's note); uniform: a row masked entirely gives
    1/n (a finite fill), else 0."""
    last, kept = len(shape) - 1, list(shape[:-1]) + [1]

    def reduce(src: str, what: str, negate: bool) -> str:
        made = _reduce_max_nodes(f"{s.name}__{what}", src, shape, [last], True, negate)
        s.nodes.extend(made)
        return made[-1].name
    low = reduce(scores, "low", True)
    z = s("where", [mask, low, scores])                 # masked: the row's minimum, on the scores' grid
    top = s.widen(reduce(z, "top", False), kept, shape)
    e = s("elementwise", [s("sub", [z, top])], fn="exp")
    e = s("where", [mask, s.const(0.0), e])
    # the row sums on [rows, n] (ptec's int8 mean takes ranks 2 and 3), viewed back as [..., 1]
    rows = e if len(shape) in (2, 3) else s("reshape", [e], target_shape=[int(np.prod(shape[:-1])), shape[-1]])
    total = s("mul", [s("mean", [rows], dim=[1 if rows != e else last], keepdim=True), s.const(float(shape[-1]))])
    denominator = s("clamp", [total], lo=1.0, hi=None)
    if rows != e:
        denominator = s("reshape", [denominator], target_shape=kept)
    p = s("div", [e, s.widen(denominator, kept, shape)])
    if uniform:
        empty = s("compare", [total], kind="eq", scalar=0.0)             # no kept position: a sum of 0
        if rows != e:
            empty = s("reshape", [empty], target_shape=kept)
        s("where", [empty, s.const(1.0 / shape[-1]), p])


_LOG_SOFTMAX = (torch.log_softmax, F.log_softmax, "log_softmax", F.cross_entropy)
MINUS_INF_FP32 = "the -inf of a masked_fill read by log_softmax stays fp32 (an int8 value holds no -inf)"


def _reads_log_probabilities(u, fn, mods) -> bool:
    """u is log_softmax (any dim) or cross_entropy of fn as its first operand only."""
    if u.op == "call_module":
        m = mods.get(u.target) if mods is not None else None
        ok = isinstance(m, nn.LogSoftmax)
    else:
        try:
            ok = u.op in ("call_function", "call_method") and u.target in _LOG_SOFTMAX
        except TypeError:
            ok = False
    return ok and bool(u.args) and u.args[0] is fn and not any(
        a is fn for a in list(u.args[1:]) + list(u.kwargs.values()))


def minus_inf_log_softmax_nodes(fn, mods, by_name) -> Optional[List[Node]]:
    """scores.masked_fill(mask, float("-inf")) (or torch.where(mask, -inf,
    scores)) by a constant mask, read only by log_softmax / cross_entropy
    (SimCLR's NT-Xent logits with the diagonal masked): the masked scores
    are an fp32 add of a constant bias, -inf where masked and 0 elsewhere
    (exactly torch's value), which ptec's fp32 log_softmax reads as it is:
    -inf at the masked positions, torch's log-probabilities at the others
    (a row masked entirely: NaN, as torch's). Else None."""
    m = _masking_scores(fn, by_name)
    if m is None or isinstance(m.mask, str) or m.bias is not None or m.value != -np.inf or not fn.users \
            or not all(_reads_log_probabilities(u, fn, mods) for u in fn.users):
        return None
    shape = _meta_shape(fn)
    mask = np.broadcast_to(~m.mask if m.invert else m.mask, shape)
    s = _Steps(fn.name)
    s("add", [m.scores.name, s.const(np.where(mask, -np.inf, 0.0))], fp32=MINUS_INF_FP32)
    return s.done()


def minus_inf_elsewhere(fn, mods, by_name) -> Optional[str]:
    """Why a -inf fill by a constant mask that no softmax / log_softmax /
    cross_entropy alone reads is refused (its refusal's reason), else None."""
    m = _masking_scores(fn, by_name)
    if m is None or isinstance(m.mask, str) or m.bias is not None or m.value != -np.inf or not fn.users:
        return None
    others = [u for u in fn.users if not _reads_log_probabilities(u, fn, mods) and not _reads_masked(u, fn, mods)]
    if not others:
        return None
    u = others[0]
    name = u.target if isinstance(u.target, str) else getattr(u.target, "__name__", str(u.target))
    who = u.name if u.name == name else f"{u.name} ({name})"
    return (f"its -inf fill is read by {who}: no int8 value holds -inf; ptec runs such a fill read "
            f"only by softmax, log_softmax or cross_entropy (or fill with a finite value such as -1e4)")
