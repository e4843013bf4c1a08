"""torch.bucketize / torch.searchsorted with boundaries computed in the
program (issue 15), as comparisons in float32 and an exact count.

Constant boundaries are capture_elementwise_math's (a LUT of the input's
codes). Computed ones are another value, on another int8 grid: an int8
composition would compare codes of two grids or an int8 difference, and
ties where torch's floats differ. Here each element is compared with every
boundary as the program holds them -- two int8 values on different grids
are compared as the float32 values they stand for, one grid's codes as
codes (capture_bool's `compare`) -- and the 0/1 results are summed by a
linear layer of ones (int32 accumulation) whose int8 grid is [0, m] (m the
boundaries' count, at most MAX_BOUNDARIES: a step below 1), rounded to whole
numbers by a LUT on a grid that holds them exactly, then made int64:

  bucketize(x, b, right=False)  = #{b < x}   (right=True: #{b <= x})
  searchsorted(s, v, side left) = #{s < v} along s's last dim (right: <=)

which is torch's index wherever the boundaries are sorted along the
searched dim, torch's own requirement (its result for unsorted boundaries
is that of its binary search, unspecified, and differs from the count). So
boundaries are taken only where capture sees they are sorted for every
input (sorted_boundaries: the values of an ascending sort along the last
dim, a cumsum along it of values never negative, either through steps
keeping order: a number added or a positive one multiplied, sigmoid, tanh,
exp, round, clamp, relu); others are refused in one line saying so. So the result is exactly
torch's on the values ptec's program holds (its dequantized int8 inputs);
an input rounding that moves an element across a boundary moves its index,
as it would in torch given those inputs. The count goes out as int64
(`to_index`), or int32 with out_int32=True. sorter= is declined (refused
as before, naming the call).
"""
from __future__ import annotations

import operator
from typing import List, Optional

import numpy as np
import torch
import torch.fx

from .capture_calls import _meta_shape
from .capture_rewrites import _Steps
from .ir import Node

# the count's int8 grid [0, m] (m / 255 a step) rounds to the right whole number while a step is below 1
MAX_BOUNDARIES = 254


def _bound(fn):
    from .capture_elementwise_math import PARAMS, _bind, _call_name
    name = _call_name(fn)
    if name not in ("bucketize", "searchsorted") or name not in PARAMS:
        return None, None
    return name, _bind(fn, name)


def _float_value(a, by_name) -> bool:
    meta = a.meta.get("tensor_meta") if isinstance(a, torch.fx.Node) else None
    node = by_name.get(a.name) if isinstance(a, torch.fx.Node) else None
    return meta is not None and meta.dtype == torch.float32 and node is not None and node.op != "constant"


# element-wise steps that keep ascending values ascending (a number operand as named below)
_MONOTONE = {torch.sigmoid, torch.tanh, torch.exp, torch.round, torch.floor, torch.ceil, torch.clamp, torch.relu,
             torch.nn.functional.relu, "sigmoid", "tanh", "exp", "round", "floor", "ceil", "clamp", "relu",
             "contiguous", "clone", "float"}
_NONNEGATIVE = {torch.sigmoid, torch.exp, torch.relu, torch.abs, torch.square, torch.softmax,
                torch.nn.functional.relu, torch.nn.functional.softmax, torch.nn.functional.sigmoid,
                "sigmoid", "exp", "relu", "abs", "square", "softmax"}
_SHIFTS = {operator.add, operator.sub, "add", "sub"}
_SCALES = {operator.mul, operator.truediv, "mul", "div"}


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _last_dim(fn, at: int, key: str, default) -> bool:
    d = fn.args[at] if len(fn.args) > at else fn.kwargs.get(key, default)
    shape = _meta_shape(fn.args[0]) if isinstance(fn.args[0], torch.fx.Node) else None
    return isinstance(d, int) and shape is not None and len(shape) > 0 and d % len(shape) == len(shape) - 1


def sorted_boundaries(a: torch.fx.Node, depth: int = 0) -> bool:
    """a is ascending along its last dim for every input: sort values (ascending, last dim), a cumsum
    along it of something never negative, or one of these through steps that keep order."""
    if not isinstance(a, torch.fx.Node) or depth > 16 or a.op not in ("call_function", "call_method"):
        return False
    t, args = a.target, a.args
    if t is operator.getitem and args[1] == 0 and isinstance(args[0], torch.fx.Node):
        s = args[0]
        if s.op in ("call_function", "call_method") and s.target in (torch.sort, "sort") \
                and _last_dim(s, 1, "dim", -1) and not s.kwargs.get("descending", False) \
                and not (len(s.args) > 2 and s.args[2]):
            return True
        return False
    if t in (torch.cumsum, "cumsum"):
        src = args[0]
        return _last_dim(a, 1, "dim", None) and isinstance(src, torch.fx.Node) \
            and src.op in ("call_function", "call_method") and src.target in _NONNEGATIVE
    if t in _MONOTONE:
        return isinstance(args[0], torch.fx.Node) and sorted_boundaries(args[0], depth + 1)
    if t in _SHIFTS and len(args) == 2 and not a.kwargs:
        x, c = args
        return _number(c) and sorted_boundaries(x, depth + 1) or \
            (t in (operator.add, "add") and _number(x) and sorted_boundaries(c, depth + 1))
    if t in _SCALES and len(args) == 2 and not a.kwargs:
        x, c = args
        return (_number(c) and c > 0 and sorted_boundaries(x, depth + 1)) or \
            (t in (operator.mul, "mul") and _number(x) and x > 0 and sorted_boundaries(c, depth + 1))
    return False


UNSORTED = ("{}: boundaries computed in the program are counted (the boundaries below each value), torch's "
            "answer only where they are sorted, and ptec cannot see that these are: make them the values of "
            "an ascending torch.sort along the last dim (or a cumsum of non-negative values), or constants")


def fp32_bucket_nodes(fn: torch.fx.Node, ins, by_name) -> Optional[List[Node]]:
    """The steps of a bucketize / searchsorted whose boundaries are computed, else None."""
    name, b = _bound(fn)
    if b is None:
        return None
    if name == "bucketize":
        x, seq, right = b.get("input"), b.get("boundaries"), b.get("right", False)
    else:
        x, seq, side = b.get("input"), b.get("sorted_sequence"), b.get("side")
        right = b.get("right", False)
        if b.get("sorter") is not None or side not in (None, "left", "right") or (side == "left" and right):
            return None
        right = right or side == "right"
    out32 = b.get("out_int32", False)
    if not isinstance(right, bool) or not isinstance(out32, bool) \
            or not (_float_value(x, by_name) and _float_value(seq, by_name)):
        return None
    xs, ss, out = _meta_shape(x), _meta_shape(seq), _meta_shape(fn)
    if xs is None or ss is None or out is None or len(ss) == 0 or not 0 < ss[-1] <= MAX_BOUNDARIES:
        return None
    if not sorted_boundaries(seq):
        from .capture import _function_node       # capture imports this module
        refused = _function_node(fn, ins)
        refused.attrs["why"] = UNSORTED.format(f"torch.{name}")
        return [refused]
    m = int(ss[-1])
    if len(ss) == 1:
        lead = list(xs)                     # every element against the same boundaries
        sv = [1] * len(xs) + [m]
    elif name == "searchsorted" and len(xs) == len(ss) and list(xs[:-1]) == list(ss[:-1]):
        lead = list(xs)                     # row by row: v [..., K] against s [..., M]
        sv = list(ss[:-1]) + [1, m]
    else:
        return None
    rows = int(np.prod(lead)) if lead else 1
    if rows == 0:
        return None
    s = _Steps(fn.name)
    src_x, src_s = by_name[x.name].name, by_name[seq.name].name
    xv = s("reshape", [src_x], target_shape=lead + [1])
    bv = s("reshape", [src_s], target_shape=sv)
    hit = s("compare", [xv, bv], kind="ge" if right else "gt")        # b <= x / b < x
    ones = s("bool_to", [hit], dtype="float32")
    flat = s("reshape", [ones], target_shape=[rows, m])
    count = s("linear", [flat], weight=np.ones((1, m), np.float32), bias=None, known_range=[0.0, float(m)])
    whole = s("elementwise", [count], fn="round")         # its grid: whole numbers (quantize)
    shaped = s("reshape", [whole], target_shape=list(out))
    s("to_index", [shaped], dtype="int32" if out32 else "int64")
    return s.done()
