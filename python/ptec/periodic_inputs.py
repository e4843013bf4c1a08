"""torch.sin / torch.cos of an angle spanning many periods, made from a
program input: a diffusion model's timestep embedding (`t` an int64 input
in [0, 1000], `emb = t[:, None].float() * freqs[None]`, then
`torch.cat([emb.sin(), emb.cos()], -1)`), a float position or time times
frequencies (Fourier features, NeRF's positional encoding of an input).

sin / cos read their input's int8 grid: a calibrated angle range of
[0, 1000] radians has a step of 3.9 radians, more than half a period, so
the result is noise (the probe: 36 output steps off, 205 on the test's
embedding), silently. Here such a chain runs in fp32 from the exact value:
the integer's float copy (index_to_float, exact below 2^24) or the float
program input, through its steps (mul / add / sub / div by a constant, neg
(as a mul by -1), reshape, permute, a linear / matmul by a constant weight
as in Gaussian Fourier features: fp32, so the product is torch's float32
product), then
the periodic function in fp32, quantized after it on its own grid.

The function runs on its own float32 kernel (aten::sin.out / cos.out:
src/kernels/portable/op_float_unary_math.c, upstream ExecuTorch's too; the
C library's sinf / cosf, whose argument reduction holds any float32 angle:
within 2 ulps of torch's float64 sin / cos of the same float32 angle,
test_float_unary_math.py), the steps before it on fp32 ones
(fp32_input_chains, shared with input_compression). A runtime whose
kernels lack it keeps the int8 table, with a warning.

The criterion is measured on the calibration samples: the function of the
angle as it is against the function of the angle rounded to its int8 grid;
above LIMIT output steps of the function's grid, the chain runs in fp32,
and the compile log says so with the steps the int8 angle would have cost.
An angle a grid holds well (a rotary embedding of a few radians, sin of a
layer's output) keeps its int8 table. --int8-io with a float input: the
input arrives on its int8 grid, nothing can run before it: a warning. An
angle above LIMIT that is no such chain (sin(x * x)) stays on its int8
grid, with a warning naming the steps."""
from __future__ import annotations

import math
from typing import Callable, List, Optional

import numpy as np
import torch

from .fp32_input_chains import LIMIT, computed, constant_step, lacking, on_int8_grid, run_in_fp32, steps_lost
from .ir import Graph, Node, evaluate, origin

PERIODIC = ("sin", "cos")
REASON = ("this {fn} reads an angle spanning {periods:.0f} periods (calibration), {steps:.0f} output steps off on "
          "its int8 grid, so the chain runs in fp32 from the exact {what} and is quantized after it")


def _lead(g: Graph, n: Node) -> bool:
    """A step between the exact value and the function (a linear by a
    constant weight: Fourier features' (2 pi x) @ B.T)."""
    return not n.attrs.get("act") and constant_step(g, n, also=("neg",))


def _chain(g: Graph, c: Node):
    """(source node, lead nodes in graph order) of function c, or None: the
    source an integer's float copy (index_to_float) or a program input."""
    lead, src = [], g.node(c.inputs[0])
    while src.op not in ("input", "index_to_float"):
        if not _lead(g, src):
            return None
        lead.append(src)
        src = g.node(computed(g, src)[0])
    return src, lead[::-1]


def _function(c: Node) -> Optional[str]:
    if c.op == "elementwise" and c.attrs.get("fn") in PERIODIC and not c.attrs.get("fp32") and not c.attrs.get("act"):
        return c.attrs["fn"]
    return None


def _measure(g: Graph, c: Node, samples):
    """(output steps the angle's int8 grid costs, periods the angle spans) on the samples, or None."""
    angles = []
    with torch.no_grad():
        for s in samples:
            try:
                env = evaluate(g, list(s), keep_all=True)[1]
            except Exception:       # noqa: BLE001 - calibration names what fails; the int8 table stays
                return None
            angles.append(env[c.inputs[0]].detach().double())
    if not angles or any(not torch.isfinite(a).all() for a in angles):
        return None
    lo, hi = min(float(a.min()) for a in angles), max(float(a.max()) for a in angles)
    fn = getattr(torch, c.attrs["fn"])
    steps = steps_lost([fn(a) for a in angles], [fn(on_int8_grid(a, lo, hi)) for a in angles])
    return steps, (max(hi, 0.0) - min(lo, 0.0)) / (2.0 * math.pi)


def _neg_as_mul(g: Graph, n: Node) -> None:
    """A neg in the chain as a mul by -1 (the fp32 binary kernels' form)."""
    if n.op == "neg":
        minus = Node(f"{n.name}__fp32_minus_one", "constant", [],
                     {"value": np.asarray(-1.0, np.float32), "source": n.attrs.get("source", n.name)}, [])
        g.nodes.insert(g.nodes.index(n), minus)
        n.op, n.inputs = "mul", [n.inputs[0], minus.name]


def periodic_in_fp32(g: Graph, calibration, log: Callable[[str], None] = lambda s: None, int8_io: bool = False,
                     missing: Callable[[List[str]], List[str]] = lambda ops: []) -> None:
    """Runs in fp32 each sin / cos of an exact value's chain whose angle's
    int8 grid would cost more than LIMIT output steps on the calibration
    samples (module doc). Before calibration: the new steps are observed
    like the rest. missing: the given kernels the runtime lacks."""
    if not calibration:
        return
    for c in list(g.nodes):
        fn = _function(c)
        if fn is None:
            continue
        chain = _chain(g, c)
        if chain is None:
            measured = _measure(g, c, calibration)
            if measured is not None and measured[0] > LIMIT:
                log(f"warning: {origin(c)}: this {fn} reads an angle spanning {measured[1]:.0f} periods "
                    f"(calibration), {measured[0]:.0f} output steps off on its int8 grid; its angle is not "
                    "a chain of constant steps from a float input or an integer, so it stays on the int8 grid")
            continue
        src, lead = chain
        if src.op == "input" and not torch.as_tensor(calibration[0][g.inputs.index(src.name)]).is_floating_point():
            continue
        measured = _measure(g, c, calibration)
        if measured is None or measured[0] <= LIMIT:
            continue
        steps, periods = measured
        if src.op == "input" and int8_io:
            log(f"warning: {origin(c)}: this {fn} reads an angle spanning {periods:.0f} periods (calibration), "
                f"{steps:.0f} output steps off on its int8 grid (compile without --int8-io to run it in fp32)")
            continue
        lacks = lacking(c, missing)
        if lacks:
            log(f"warning: {origin(c)}: this {fn} reads an angle spanning {periods:.0f} periods (calibration), "
                f"{steps:.0f} output steps off on its int8 grid{lacks}")
            continue
        what = "float input" if src.op == "input" else "integer value"
        run_in_fp32(g, c, lead, REASON.format(fn=fn, periods=periods, steps=steps, what=what), log, _neg_as_mul)
