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

ptec's runtime has no fp32 sin / cos kernel, so the function is computed
from kernels it has: the angle reduced by a period (aten::remainder of the
float32 2*pi, C: exact in float, r = x - C floor(x / C) in [0, C)), the
difference between C and 2*pi put back (r + (x - r) (C - 2 pi) / C: x - r
is a whole number of C's, each C - 2*pi = 1.7e-7 off), shifted by pi into
s in [-pi, pi) (sin x = -sin s, cos x = -cos s), and the Taylor series in
s (sin to s**17, cos to s**18: below 1e-6 on [-pi, pi]) by fp32 mul / add
in Horner's form: within 7e-7 of torch's float64 sin / cos of the same
float32 angle, angles up to 1e5 radians (test_periodic_inputs.py).

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

from .ir import Graph, Node, evaluate, origin
from .quantize import affine_qparams

# output steps the angle's int8 grid may cost before the chain runs in fp32
# (an int8 table of a smooth function is about one step off by itself)
LIMIT = 2.0
PERIODIC = ("sin", "cos")
CONST_BINARY = ("add", "sub", "mul", "div")
KERNEL = "aten::remainder.Tensor_out"
TWO_PI = float(np.float32(2.0 * math.pi))                   # C: the float32 nearest 2 pi
TWO_PI_FIX = float(np.float32((TWO_PI - 2.0 * math.pi) / TWO_PI))
PI = float(np.float32(math.pi))
REASON = ("this {fn} reads an angle spanning {periods:.0f} periods (calibration), {steps:.0f} output steps off on "
          "its int8 grid, so the chain runs in fp32 from the exact {what} and is quantized after it")


def _is_const(g: Graph, name: str) -> bool:
    return g.node(name).op == "constant"


def _computed(g: Graph, n: Node) -> List[str]:
    return [i for i in n.inputs if not _is_const(g, i)]


def _lead(g: Graph, n: Node) -> bool:
    """A step between the exact value and the function."""
    if len(_computed(g, n)) != 1 or n.attrs.get("act"):
        return False
    if n.op in ("reshape", "permute", "neg") or n.op in CONST_BINARY:
        return True
    if n.op == "linear":                # a constant weight (Fourier features: (2 pi x) @ B.T)
        return n.attrs.get("weight") is not None
    return n.op == "matmul" and len(n.inputs) == 2


def _chain(g: Graph, c: Node):
    """(source node, lead nodes in graph order) of function c, or None: the
    source an integer's float copy (index_to_float) or a program input."""
    lead, src = [], g.node(c.inputs[0])
    while src.op not in ("input", "index_to_float"):
        if not _lead(g, src):
            return None
        lead.append(src)
        src = g.node(_computed(g, src)[0])
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
    scale, zp = affine_qparams(lo, hi)
    fn = getattr(torch, c.attrs["fn"])
    exact = [fn(a) for a in angles]
    rounded = [fn((torch.clamp(torch.round(a / scale) + zp, -128, 127) - zp) * scale) for a in angles]
    out_step = affine_qparams(min(float(e.min()) for e in exact), max(float(e.max()) for e in exact))[0]
    err = max(float((e - r).abs().max()) for e, r in zip(exact, rounded))
    return err / out_step, (max(hi, 0.0) - min(lo, 0.0)) / (2.0 * math.pi)


def _fp32_nodes(c: Node, fn: str, reason: str) -> List[Node]:
    """c (sin or cos of one computed angle) as fp32 steps (module doc)."""
    nodes: List[Node] = []
    source = c.attrs.get("source", c.name)

    def step(op, inputs, **attrs) -> str:
        attrs.update(source=source, fp32=reason)
        nodes.append(Node(f"{c.name}__fp32_{len(nodes)}", op, list(inputs), attrs, list(c.shape)))
        return nodes[-1].name

    def const(v: float) -> str:
        nodes.append(Node(f"{c.name}__fp32_{len(nodes)}", "constant", [],
                          {"value": np.asarray(v, np.float32), "source": source}, []))
        return nodes[-1].name

    x = c.inputs[0]
    r = step("binary_math", [x, const(TWO_PI)], fn="remainder")             # [0, C): exact
    r = step("add", [r, step("mul", [step("sub", [x, r]), const(TWO_PI_FIX)])])     # the periods' 2 pi - C back
    s = step("sub", [r, const(PI)])                                          # [-pi, pi): f(x) = -f(s)
    z = step("mul", [s, s])
    if fn == "sin":
        coeffs = [(-1) ** k / math.factorial(2 * k + 1) for k in range(9)]      # to s**17
    else:
        coeffs = [(-1) ** k / math.factorial(2 * k) for k in range(10)]         # to s**18
    coeffs = [-v for v in coeffs]                                            # -f(s)
    p = const(coeffs[-1])
    for v in reversed(coeffs[:-1]):
        p = step("add", [step("mul", [p, z]), const(v)])
    if fn == "sin":
        step("mul", [p, s])
    out = nodes[-1]
    out.name, out.qparams = c.name, c.qparams
    return nodes


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
        if missing([KERNEL]):
            log(f"warning: {origin(c)}: this {fn} reads an angle spanning {periods:.0f} periods (calibration), "
                f"{steps:.0f} output steps off on its int8 grid; its fp32 form needs {KERNEL}, which the "
                f"runtime's kernels lack")
            continue
        what = "float input" if src.op == "input" else "integer value"
        reason = REASON.format(fn=fn, periods=periods, steps=steps, what=what)
        for n in lead:
            n.attrs.setdefault("fp32", reason)
            if n.op == "neg":           # the runtime has no fp32 neg kernel: a mul by -1
                minus = Node(f"{n.name}__fp32_minus_one", "constant", [],
                             {"value": np.asarray(-1.0, np.float32), "source": n.attrs.get("source", n.name)}, [])
                g.nodes.insert(g.nodes.index(n), minus)
                n.op, n.inputs = "mul", [n.inputs[0], minus.name]
        at = g.nodes.index(c)
        g.nodes[at:at + 1] = _fp32_nodes(c, fn, reason)
        log(f"{origin(c)}: {reason}" + (" (with " + ", ".join(origin(n) for n in lead) + ")" if lead else ""))
