"""Sums as one exact accumulation (a prepare pass).

Capture writes a sum over dims (`x.sum(d)`, `torch.sum(x, dims, keepdim)`,
`x.sum()`, einsum's summed letters, nansum, norms, trace) as the mean over
those dims times the count, and a user may write `x.mean(d) * c` himself.
In int8 that mean is rounded onto the INPUT's grid first, and the product
then multiplies its rounding error by the count: 0.5 input steps times n
(measured 30.7 output steps for the sum of 1024 linear outputs, 80.9 for
4096).

Here every `mean` of MIN_TERMS (16) to MAX_TERMS values whose one reader
is a `mul` by a single constant c (or a `div` by 1 / c) becomes a
fully-connected layer by a row of c / n over the n values
reduced (the dims moved last and flattened: x viewed as [K, n]). Its int8
weight is one code (127 at scale |c / n| / 127: exact), the kernel sums
the n codes in int32 and requantizes once onto the output's grid: within
half an output step of the exact sum of the values the program holds.
Against torch float the input's own rounding adds up too (about
sqrt(n / 12) input steps, std, for values of random sign); for the sum of
a linear layer's outputs, read by nothing else, the layer itself is
folded in (one linear by its summed rows), which leaves that rounding
out. A sum of fp32 values stays fp32 (the partitioner keeps the linear
marked exact_sum on the fp32 backend after an fp32 producer).

A sum of fewer than MIN_TERMS values keeps the mean times the count here:
its mean is rounded onto the input's grid, n / 2 input steps of the sum.
A mean alone is left as a mean, which quantize keeps on its input's grid
(PASS_THROUGH), not one of its own.
After calibration narrow_sums_as_linear rewrites the same way the means
much narrower than their input and the short sums whose reader magnifies
that rounding (a sqrt, a division by a computed value)."""
from __future__ import annotations

from typing import List

import numpy as np

from .ir import Graph, Node

# sum_i |code_i - zp| * 127 must stay in the int32 accumulator: 255 * 127 * n < 2^31
MAX_TERMS = 65536
# a shorter sum keeps the mean times the count in prepare: its mean's rounding on the input's grid
# is n / 2 input steps of the sum (0.6 to 2.7 of its output steps by the calibrated ranges of the
# forms tried); narrow_sums_as_linear rewrites the short sums a sqrt or a division by a computed value
# reads (there it became 3.6 to 24 output steps: a masked mean pool, norms, std) and leaves the others
MIN_TERMS = 16


def _scalar_constant(g: Graph, name: str):
    node = g.node(name)
    if node.op != "constant" or node.attrs.get("fp32"):
        return None
    value = np.asarray(node.attrs["value"])
    if value.size != 1 or value.dtype.kind != "f":
        return None
    c = float(value.reshape(()))
    return c if np.isfinite(c) and c != 0.0 else None


def sums_as_linear(g: Graph) -> None:
    """Each mean(x, dims) * c (one reader, a scalar constant c) of
    MIN_TERMS to MAX_TERMS values becomes permute (when the dims are not
    last) -> reshape [K, n] -> linear by full((1, n), c / n) -> reshape to
    the product's shape, in place."""
    for mean in list(g.nodes):
        found = _mean_times_constant(g, mean)
        if found is not None and MIN_TERMS <= found[2] <= MAX_TERMS:
            _rewrite(g, mean, *found)


def _mean_times_constant(g: Graph, mean: Node):
    """(mul, c, n) when mean is a plain mean of n values (n >= 1) read by
    one mul by a scalar constant c (or a div by 1 / c), else None."""
    # (another mark than the call's source: fp32, a dtype, a16 ... keeps its own path)
    if mean.op != "mean" or set(mean.attrs) - {"dim", "keepdim", "source"} or mean.name in g.outputs:
        return None
    users = g.users(mean.name)
    if len(users) != 1 or users[0].op not in ("mul", "div") or set(users[0].attrs) - {"source"} \
            or len(users[0].inputs) != 2 or (users[0].op == "div" and users[0].inputs[0] != mean.name):
        return None
    mul = users[0]
    other = [i for i in mul.inputs if i != mean.name]
    c = _scalar_constant(g, other[0]) if len(other) == 1 else None
    if c is not None and mul.op == "div":
        c = 1.0 / c                     # x.mean(d) / d': the mean times 1 / d'
        c = c if np.isfinite(c) else None
    n = _terms(g, mean, mul)
    return None if c is None or n is None else (mul, c, n)


def _terms(g: Graph, mean: Node, out: Node):
    """How many values the mean reduces, when its dims and shapes allow the
    rewrite onto out's shape (K values, one per row), else None."""
    shape = list(g.node(mean.inputs[0]).shape or [])
    dims = sorted({int(d) % len(shape) for d in mean.attrs.get("dim") or []}) if shape else []
    if not dims or out.shape is None or 0 in shape:
        return None
    rest = [d for d in range(len(shape)) if d not in dims]
    k, n = int(np.prod([shape[d] for d in rest])), int(np.prod([shape[d] for d in dims]))
    return n if int(np.prod(out.shape)) == k else None


def _rewrite(g: Graph, mean: Node, mul: Node, c: float, n: int) -> List[Node]:
    """mean(x, dims) * c (mul is mean itself when c = 1 and nothing
    multiplies) as one linear by a row of c / n; the new nodes, the last
    named as mul."""
    src = g.node(mean.inputs[0])
    shape = list(src.shape)
    dims = sorted({int(d) % len(shape) for d in mean.attrs.get("dim") or []})
    rest = [d for d in range(len(shape)) if d not in dims]
    k = int(np.prod([shape[d] for d in rest]))
    other = [i for i in mul.inputs if i != mean.name] if mul is not mean else []
    steps, cur = [], mean.inputs[0]

    def step(op, inputs, out_shape, **attrs):
        if "source" in mul.attrs:
            attrs["source"] = mul.attrs["source"]
        steps.append(Node(f"{mul.name}__sum{len(steps)}", op, list(inputs), attrs, shape=list(out_shape)))
        return steps[-1].name

    folded = _sum_of_linear(g, src, mean, dims, c / n, step, mul)
    if not folded and rest + dims != list(range(len(shape))):
        cur = step("permute", [cur], [shape[d] for d in rest + dims], dims=rest + dims)
    if not folded:
        if [shape[d] for d in rest + dims] != [k, n]:
            cur = step("reshape", [cur], [k, n], shape=[k, n])
        cur = step("linear", [cur], [k, 1], weight=np.full((1, n), c / n, np.float32), bias=None,
                   exact_sum=True)
        step("reshape", [cur], list(mul.shape), shape=list(mul.shape))
    steps[-1].name, steps[-1].written = mul.name, mul.written
    at = g.nodes.index(mul)
    g.nodes[at:at + 1] = steps
    if mul is not mean:
        g.remove(mean.name)
    if folded:
        g.remove(src.name)
    if other and not g.users(other[0]) and other[0] not in g.outputs:
        g.remove(other[0])
    return steps


# After calibration (narrow_sums_as_linear) a mean alone is rewritten when its input's rounding, half
# an input step, would be over NARROWER / 2 steps of its own range's grid (4.5 to 8 times narrower broke
# 8 tests rewritten: losses' means in their finer steps, var, a unique-slice mean, placed means); a short sum (mean x c) read by a sqrt or a
# division by a computed value when that rounding times |c| is over SHORT_WIDER / 2 of its output's
# (pairwise distances whose kept rounding was 1.1 to 1.4 steps of the sum measured worse rewritten:
# 1.32 -> 1.74 output steps, test_function_coverage.py; the forms of test_narrow_grids.py are 1.6 to 1.9)
NARROWER = 10.0
SHORT_WIDER = 3.0


def _amplified(g: Graph, out: Node) -> bool:
    """A short sum whose one reader magnifies its rounding: a sqrt (norms,
    std, pairwise distances: steep near 0) or a division by a computed
    value (a masked mean pool's sum / the mask's count, down to 1). Other
    short sums keep the mean times the count (a softmax's denominator, a
    sum that is an output: rewritten they measured no better, or worse)."""
    users = g.users(out.name)
    if len(users) != 1 or out.name in g.outputs:
        return False
    u = users[0]
    if u.op == "elementwise":
        return u.attrs.get("fn") == "sqrt"
    return (u.op == "div" and len(u.inputs) == 2 and u.inputs[0] == out.name and u.inputs[1] != out.name
            and g.node(u.inputs[1]).op != "constant")


def narrow_sums_as_linear(g: Graph, observer) -> List[str]:
    """After calibration, in place: a mean whose int8 result is much
    narrower than its input, and a short sum (mean x c over fewer than
    MIN_TERMS values), become the same one linear by a row of c / n as
    sums_as_linear's, onto a grid of their own. On the input's grid (the
    mean passes it through) an anomaly score ((x - r) ** 2).mean(-1) was
    13.65 output steps from torch, a masked mean pool's short sum 11.11.
    Only float32 values (observer.dtypes) with no other mark; the global
    average pool (rank 4 over H and W) keeps its avg pool; a short sum only
    when _amplified. The thresholds: the input's observed width times |c|
    over NARROWER (a mean alone) or SHORT_WIDER (a short sum) times the
    output's observed width. The new nodes' ranges are
    set in the observer (a view keeps its input's, the linear takes the
    output's). Returns the names of the rewritten outputs."""
    import torch

    def width(name):
        lo, hi = observer.range(name)
        return max(hi, 0.0) - min(lo, 0.0)

    def f32(name):
        node = g.node(name)
        return (observer.dtypes.get(name) == torch.float32 and name in observer.lo
                and not node.attrs.get("fp32") and not node.attrs.get("dtype"))
    done = []
    for mean in list(g.nodes):
        if mean.op != "mean" or set(mean.attrs) - {"dim", "keepdim", "source"}:
            continue
        src = g.node(mean.inputs[0])
        shape = list(src.shape or [])
        if not shape or (len(shape) == 4 and sorted(int(d) % 4 for d in mean.attrs.get("dim") or []) == [2, 3]):
            continue
        found = _mean_times_constant(g, mean)
        if found is not None and found[2] >= MIN_TERMS:
            continue                      # (sums_as_linear's, or over MAX_TERMS)
        if found is None:
            n = _terms(g, mean, mean)
            found = None if n is None else (mean, 1.0, n)
        if found is None or not 2 <= found[2] <= MAX_TERMS:
            continue
        out, c, n = found
        if not (f32(src.name) and f32(mean.name) and f32(out.name)) or (out is not mean and not _amplified(g, out)):
            continue
        if not width(src.name) * abs(c) > (NARROWER if out is mean else SHORT_WIDER) * width(out.name) > 0.0:
            continue
        for s in _rewrite(g, mean, out, c, n):
            if s.name != out.name:
                ref = out.name if s.op == "linear" else src.name
                observer.lo[s.name], observer.hi[s.name] = observer.range(ref)
                observer.dtypes[s.name] = torch.float32
        done.append(out.name)
    return done


def _sum_of_linear(g: Graph, src: Node, mean: Node, dims, w: float, step, mul: Node) -> bool:
    """The sum over the last dim of a linear layer's outputs, read by the
    sum alone, is one linear: sum_j (W_j x + b_j) = (sum_j W_j) x + sum_j b_j
    (the rows of W summed in float64, times w = c / n). That leaves out the
    rounding of every output onto the layer's grid, which the sum would
    add up (measured 1.9 to 2.3 output steps for 64 to 4096 outputs; folded
    0.9 to 1.2, the input's own rounding)."""
    if (src.op != "linear" or set(src.attrs) - {"weight", "bias", "source"} or src.name in g.outputs
            or dims != [len(src.shape) - 1] or [u.name for u in g.users(src.name)] != [mean.name]
            or np.asarray(src.attrs["weight"]).ndim != 2):
        return False
    weight = np.asarray(src.attrs["weight"], np.float64)
    bias = src.attrs.get("bias")
    row = weight.sum(axis=0, keepdims=True) * w
    total = None if bias is None else np.asarray([np.asarray(bias, np.float64).sum() * w], np.float32)
    if not np.any(row):
        return False                        # a zero row has no int8 grid of its own
    cur = step("linear", [src.inputs[0]], list(src.shape[:-1]) + [1], weight=row.astype(np.float32), bias=total)
    step("reshape", [cur], list(mul.shape), shape=list(mul.shape))
    return True
