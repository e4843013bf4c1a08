"""Float operands beside int values of the program (issue 15): `i + x`,
`i * 0.5`, `i / 2`, `torch.true_divide(i, 3)`, `i < 2.5`, `0.5 - i`,
`i ** 0.5`, `torch.where(m, i, x)`, `torch.maximum(i, x)`, `torch.clamp(i, min=x, max=y)`, where i is an
int64 / int32 value a program computes (an argmax, `x.long()`, integer
arithmetic on them) and x a float tensor.

Torch promotes: the int value's float32 copy (the nearest float32, as its
`.to(torch.float32)`) meets the float operand in float32 math; true
division of two ints gives float32 too. So the model is read as if it
spelled the copy itself: before capture reads the fx graph, each such int
operand gets a `.float()` node of its own (whose traced value is torch's
copy), and capture lowers `i.float() + x` as it always has
(capture_indices' index_to_float, then the float call).

Only calls whose traced result is float32 (arithmetic, where, maximum /
minimum, pow, clamp) or bool with a float operand (comparisons) are changed, and
only operands whose value depends on the model's inputs (an integer
constant beside a float is capture's own business). Integer results
(`i + 1`, `i // 2`) stay capture_int_math's."""
from __future__ import annotations

import operator

import torch
import torch.fx

_ARITHMETIC = {operator.add, operator.sub, operator.mul, operator.truediv, operator.pow,
               torch.add, torch.sub, torch.mul, torch.div, torch.true_divide, torch.pow, torch.where,
               torch.maximum, torch.minimum, torch.subtract, torch.multiply, torch.divide,
               "add", "sub", "mul", "div", "true_divide", "pow", "where", "maximum", "minimum",
               "subtract", "multiply", "divide", "__add__", "__radd__", "__sub__", "__rsub__", "__mul__",
               "__rmul__", "__truediv__", "__rtruediv__", "__pow__"}
_COMPARE = {operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne,
            torch.lt, torch.le, torch.gt, torch.ge, torch.eq, torch.ne,
            "lt", "le", "gt", "ge", "eq", "ne", "__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__"}
# clamp of an int value by float bounds (tensors or numbers): torch's float32 result, clamp of i.float()
_CLAMPS = {torch.clamp, torch.clip, torch.clamp_min, torch.clamp_max, "clamp", "clip", "clamp_min", "clamp_max",
           "clamp_", "clip_"}
_INTS = (torch.int64, torch.int32)


def _dtype(a):
    meta = a.meta.get("tensor_meta") if isinstance(a, torch.fx.Node) else None
    return getattr(meta, "dtype", None)


def _is(target, table) -> bool:
    try:
        return target in table
    except TypeError:           # an unhashable target is none of these
        return False


def _floating(a) -> bool:
    return (isinstance(a, float) or (_dtype(a) is not None and _dtype(a).is_floating_point))


def promote_int_operands(gm: torch.fx.GraphModule) -> None:
    """A `.float()` node before each int operand (of the model's inputs) of
    a float32 arithmetic call or a comparison with a float operand."""
    graph = gm.graph
    computed = set()
    for fn in graph.nodes:
        if fn.op == "placeholder" or any(a in computed for a in fn.all_input_nodes):
            computed.add(fn)
    for fn in list(graph.nodes):
        if fn.op not in ("call_function", "call_method"):
            continue
        operands = list(fn.args) + [v for k, v in fn.kwargs.items() if k in ("other", "input", "exponent")]
        if _is(fn.target, _ARITHMETIC):
            if _dtype(fn) is not torch.float32 or fn.kwargs.get("rounding_mode") is not None:
                continue
            if fn.target in (torch.where, "where"):
                operands = list(fn.args[1:3])
        elif _is(fn.target, _CLAMPS):
            if _dtype(fn) is not torch.float32:
                continue
            operands = [fn.args[0] if fn.args else fn.kwargs.get("input")]
        elif _is(fn.target, _COMPARE):
            if _dtype(fn) is not torch.bool or not any(_floating(a) for a in operands):
                continue
        else:
            continue
        ints = {a for a in operands if isinstance(a, torch.fx.Node) and _dtype(a) in _INTS and a in computed}
        for a in ints:
            with graph.inserting_before(fn):
                copy = graph.call_method("float", (a,))
            copy.meta["tensor_meta"] = a.meta["tensor_meta"]._replace(dtype=torch.float32)
            fn.replace_input_with(a, copy)
    if graph.nodes:
        gm.recompile()
