"""Values a NaN / inf test reads that calibration saw NaN or inf in (issue
15): a division, `torch.nan_to_num(a / b)` where b is 0 in some sample
(other producers of NaN / inf, a log of a negative, keep the non-finite
refusal of calibration). An int8 value holds no NaN or inf, so the tested
value is computed in fp32 (attrs["fp32"], its float32 kernel), the test
reads it as torch does, and the replacement (nan_to_num's wheres, whose
values hold float32's extremes by default) runs in fp32 too, to the first
value that is finite on every calibration sample and within an int8 grid's
reach of the rest; calibration's ranges skip the NaN and inf elements
(quantize.RangeObserver). Runs after calibration, before quantize.

The division's denominator is made in fp32 too, with its producers back
to the first one that has no float32 kernel (_denominator_in_fp32): a
zero's sign is the infinity's (x / -0.0 is -inf), and an int8 grid holds
0 only as +0.0, so `x / (y * 0)` with y < 0 gave +inf where torch gives
-inf. A zero made by an int8-only layer (a convolution, a LUT without a
float32 kernel) is +0.0 still."""
from __future__ import annotations

import math
from typing import Callable

from .ir import Graph, Node, float_math_name, origin

REASON = "holds NaN or inf on the calibration inputs, which a NaN / inf test reads: computed in fp32"
DENOMINATOR = "the denominator of a division computed in fp32: a zero keeps its sign (x / -0.0 is -inf)"
# producers of a denominator with a float32 kernel when marked fp32 (capture_dtype_view's chain; a float
# math function by float_math_name); the walk stops at anything else, the program's inputs and constants
_SIGNED_ZERO_OPS = ("add", "sub", "mul", "div", "binary_math", "clamp", "reshape", "permute", "identity")
# ops with a float32 form the lowering takes when marked fp32
_FP32_OPS = ("div", "mul", "add", "sub", "where")


def _tests(n: Node, name: str) -> bool:
    """n asks whether value `name` is NaN (name != name) or infinite (== +-inf)."""
    if n.op != "compare":
        return False
    return n.inputs == [name, name] or (n.inputs == [name] and math.isinf(float(n.attrs.get("scalar", 0.0))))


def nonfinite_in_fp32(g: Graph, observer, log: Callable[[str], None], int8_io: bool) -> None:
    if int8_io:
        return
    for n in g.nodes:
        if n.op not in ("div",) or n.attrs.get("fp32") or not observer.nonfinite(n.name):
            continue
        users = g.users(n.name)
        if not any(_tests(u, n.name) for u in users):
            continue
        n.attrs["fp32"] = REASON
        log(f"{origin(n)}: {REASON}")
        _denominator_in_fp32(g, n, log)
        # the wheres that replace the NaN / inf: fp32 too (their values are float32's extremes by default)
        chain = {n.name}
        for m in g.nodes[g.nodes.index(n) + 1:]:
            if m.op == "where" and m.inputs[1:] and any(i in chain for i in m.inputs[1:]):
                m.attrs["fp32"] = REASON
                chain.add(m.name)


def _denominator_in_fp32(g: Graph, div: Node, log: Callable[[str], None]) -> None:
    """div's denominator and its producers with float32 kernels run in fp32
    (attrs["fp32"]), so a -0.0 torch computes reaches the division as -0.0."""
    if len(div.inputs) < 2:
        return                                  # a number denominator: its sign is in the attrs
    todo, seen = [div.inputs[1]], set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        m = g.node(name)
        if m.op not in _SIGNED_ZERO_OPS and float_math_name(m) is None:
            continue                            # an input, a constant, an int8-only layer: stays as it is
        if not m.attrs.get("fp32"):
            m.attrs["fp32"] = DENOMINATOR
            log(f"{origin(m)}: {DENOMINATOR}")
        todo.extend(m.inputs)
