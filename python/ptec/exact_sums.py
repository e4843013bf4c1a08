"""Sums as one exact accumulation (a prepare pass).

Capture writes a sum over dims (`x.sum(d)`, `torch.sum(x, dims, keepdim)`,
`x.sum()`, einsum's summed letters, nansum, norms, trace) as the mean over
those dims times the count, and a user may write `x.mean(d) * c` himself.
In int8 that mean is rounded onto the INPUT's grid first, and the product
then multiplies its rounding error by the count: 0.5 input steps times n
(measured 30.7 output steps for the sum of 1024 linear outputs, 80.9 for
4096).

Here every `mean` whose one reader is a `mul` by a single constant c
(or a `div` by 1 / c)
becomes a fully-connected layer by a row of c / n over the n values
reduced (the dims moved last and flattened: x viewed as [K, n]). Its int8
weight is one code (127 at scale |c / n| / 127: exact), the kernel sums
the n codes in int32 and requantizes once onto the output's grid: within
half an output step of the exact sum of the values the program holds.
Against torch float the input's own rounding adds up too (about
sqrt(n / 12) input steps, std, for values of random sign); for the sum of
a linear layer's outputs, read by nothing else, the layer itself is
folded in (one linear by its summed rows), which leaves that rounding
out. A sum of fp32 values stays fp32 (the partitioner keeps the linear
marked exact_sum on the fp32 backend after an fp32 producer). A mean
alone is left as it is: one rounding onto a grid of its own size."""
from __future__ import annotations

import numpy as np

from .ir import Graph, Node

# sum_i |code_i - zp| * 127 must stay in the int32 accumulator: 255 * 127 * n < 2^31
MAX_TERMS = 65536
# a short sum keeps the mean times the count: its rounding, n / 2 input steps, is then about one
# output step, as the exact sum's (pairwise_distance over 8 values, an attention's softmax over
# 5 keys measured 1.32 / 1.18 steps that way and 1.74 / 1.74 rewritten: rounding noise either way)
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
    """Each mean(x, dims) * c (one reader, a scalar constant c) becomes
    permute (when the dims are not last) -> reshape [K, n] -> linear by
    full((1, n), c / n) -> reshape to the product's shape, in place."""
    for mean in list(g.nodes):
        # (another mark than the call's source: fp32, a dtype, a16 ... keeps its own path)
        if mean.op != "mean" or set(mean.attrs) - {"dim", "keepdim", "source"} or mean.name in g.outputs:
            continue
        users = g.users(mean.name)
        if len(users) != 1 or users[0].op not in ("mul", "div") or set(users[0].attrs) - {"source"} \
                or len(users[0].inputs) != 2 or (users[0].op == "div" and users[0].inputs[0] != mean.name):
            continue
        mul = users[0]
        other = [i for i in mul.inputs if i != mean.name]
        c = _scalar_constant(g, other[0]) if len(other) == 1 else None
        if c is not None and mul.op == "div":
            c = 1.0 / c                     # x.mean(d) / d': the mean times 1 / d'
            c = c if np.isfinite(c) else None
        src = g.node(mean.inputs[0])
        shape = list(src.shape or [])
        dims = sorted({int(d) % len(shape) for d in mean.attrs.get("dim") or []}) if shape else []
        if c is None or not dims or mul.shape is None or 0 in shape:
            continue
        rest = [d for d in range(len(shape)) if d not in dims]
        k, n = int(np.prod([shape[d] for d in rest])), int(np.prod([shape[d] for d in dims]))
        if not MIN_TERMS <= n <= MAX_TERMS or int(np.prod(mul.shape)) != k:
            continue
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
        g.remove(mean.name)
        if folded:
            g.remove(src.name)
        if not g.users(other[0]) and other[0] not in g.outputs:
            g.remove(other[0])


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
