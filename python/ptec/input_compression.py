"""A float model input compressed by its first element-wise steps: a
power spectrum read as `10 * torch.log10(p + 1e-10)` (dB), `torch.log(p +
1e-6)`, `torch.log1p(p)`, `p.clamp(min=1e-10).log()`, `torch.sqrt(p)`
(probe: keyword-spotting front ends), possibly after a constant filterbank
(`p @ mel_fb`, nn.Linear without bias) or other constant matmul/linear.

The input's int8 grid is linear: its step is max/255 of the calibrated
range, so every power below about one step reads as 0 (or one step), and
a compression that spreads those small values over most of its output range
(log of 1e-7 is -16, of 1e-3 is -7) gives them all one wrong value:
-23.9 dB where torch gives -66 dB, 107-194 output steps off, silently.

Here such a chain runs in fp32 on the float input (the program's input is
float anyway, and the steps are element-wise or one constant matmul) and is
quantized after it, on its own calibrated grid. The criterion is measured
on the calibration samples: the chain evaluated on the input as it is and
on the input rounded to its int8 grid; when the two differ by more than
LIMIT steps of the chain output's int8 grid and the input's nonzero
magnitudes span DECADES decades or more, the chain runs in fp32. So an
input whose values a linear grid holds well (a log of values in [0.5, 4],
1 / x on [0.2, 3]) keeps the int8 table path. The compile log says what ran in fp32 and by
how many steps the int8 input would have been off.

The chain may also pass through an STFT computed in the model from the
float input and its power spectrum (_spectral: the reflect pad, the DFT's
conv2d by a constant weight, the real and imaginary halves' slices, squares
and sum, view_as_real's cat and mean): a log spectrogram in the model, whose
int8 power spectrum read small bins as 0 (176 output steps, issue repro4).

The chain: from a program input, through clamp, add / sub / mul / div by a
constant, reshape, linear (constant weight) and a matmul by a constant
(each reading one computed value), to the compression (the element-wise
log, log2, log10, log1p, sqrt, rsqrt, reciprocal, or pow with an exponent
below 1), then on through its single readers among clamp and add / sub /
mul / div by a constant (the `10 *` of dB).

ptec's runtime has no fp32 log kernel, so the log family is computed from
torch.frexp's split x = m * 2**e (m in [0.5, 1)): log(x) = e * ln 2 +
2 * atanh(s), s = (m - 1) / (m + 1) in [-1/3, 0), the atanh series to s**15
(relative error below 1e-9) with fp32 mul/add/div; aten::frexp.Tensor_out is
a ptec-only kernel, so such a program runs on ptec's runtime only (the
compile log's "upstream ExecuTorch needs" line says so). The roots and the
reciprocal are aten::pow.Tensor_Tensor_out by a constant exponent. As
a chain that is NaN or infinite on a calibration sample (a log of 0 or of
a negative) is left as it was (calibration refuses it, or a where drops
it): the fp32 log here is for positive values (the models this is for add
an eps or clamp first); a run's value of 0 or below is taken as the
smallest normal float32 (log -87.3, below any calibrated grid, which an
int8 reader saturates as torch's -inf), like the int8 table (ir.ELEMENTWISE).

--int8-io: the caller hands the input already on its int8 grid, so nothing
can run before it: the log warns, with the measured steps."""
from __future__ import annotations

import math
from typing import Callable, Dict, List, Optional

import numpy as np
import torch

from .ir import Graph, Node, eval_node, origin
from .quantize import affine_qparams

# steps of the chain output's int8 grid that the input's int8 grid may cost
# before the chain runs in fp32 (an int8 table on an int8 input is off by
# about one step by itself)
LIMIT = 2.0
# and the input's largest magnitude over its smallest nonzero one at least
# 10**DECADES: below that every nonzero value is 2.5 or more input steps from
# 0, and what is lost is the ordinary rounding of a steep function (1 / x on
# [0.2, 3], 4.5 steps), which stays on its int8 table
DECADES = 2.0
LOGS = {"log": 1.0, "log2": 1.0 / math.log(2.0), "log10": 1.0 / math.log(10.0), "log1p": 1.0}
ROOTS = {"sqrt": 0.5, "rsqrt": -0.5, "reciprocal": -1.0}
CONST_BINARY = ("add", "sub", "mul", "div")
FREXP = "aten::frexp.Tensor_out"                   # the log family's kernel (ptec only)
KERNELS = {fn: "aten::pow.Tensor_Tensor_out" for fn in list(ROOTS) + ["pow"]}
REASON = ("this {fn} of a float program input spanning {decades:.1f} decades (calibration) would be {steps:.0f} "
          "output steps off on the input's int8 grid, so it runs in fp32 on the float input and is quantized after it")


def _is_const(g: Graph, name: str) -> bool:
    return g.node(name).op == "constant"


def _computed(g: Graph, n: Node) -> List[str]:
    return [i for i in n.inputs if not _is_const(g, i)]


def _lead(g: Graph, n: Node) -> bool:
    """A step the chain may pass through before the compression."""
    if len(_computed(g, n)) != 1:
        return False
    if n.op in ("clamp", "reshape", "permute") or n.op in CONST_BINARY:
        return True
    if n.op == "linear":
        return n.attrs.get("weight") is not None
    return n.op == "matmul" and len(n.inputs) == 2


def _tail(g: Graph, n: Node) -> bool:
    return (n.op == "clamp" or n.op in CONST_BINARY) and len(_computed(g, n)) == 1


def _compression(n: Node) -> Optional[str]:
    if n.op != "elementwise":
        return None
    fn = n.attrs.get("fn")
    if fn in LOGS or fn in ROOTS:
        return fn
    if fn == "pow":
        e = float(n.attrs.get("exponent", 1.0))
        return fn if e < 1.0 and e != 0.0 else None
    return None


def _chain(g: Graph, c: Node):
    """(input node, lead nodes in graph order, tail nodes) of compression c, or None."""
    lead, src = [], g.node(c.inputs[0])
    while src.op != "input":
        if not _lead(g, src) or src.attrs.get("fp32"):
            return None
        lead.append(src)
        src = g.node(_computed(g, src)[0])
    return src, lead[::-1], _chain_tail(g, c)


def _chain_tail(g: Graph, c: Node) -> List[Node]:
    tail, end = [], c
    while True:
        users = g.users(end.name)
        if len(users) != 1 or end.name in g.outputs or not _tail(g, users[0]) or users[0].attrs.get("fp32"):
            break
        end = users[0]
        tail.append(end)
    return tail


def _spectral(g: Graph, n: Node) -> bool:
    """A step of an STFT's power spectrum as capture lowers it
    (capture_complex: a reflect / replicate pad, the frames' DFT as one
    conv2d by a constant weight, real and imaginary halves sliced, squared
    and added), which the chain may pass through in fp32."""
    one = len(_computed(g, n)) == 1
    if n.op == "pad":
        return one and n.attrs.get("mode") in ("reflect", "replicate") and len(n.shape) == 3
    if n.op == "conv2d":
        return one and n.attrs.get("weight") is not None and not n.attrs.get("act")
    if n.op in ("slice", "identity"):
        return one
    if n.op == "elementwise":
        return one and (n.attrs.get("fn") == "square"
                        or (n.attrs.get("fn") == "pow" and float(n.attrs.get("exponent", 0.0)) == 2.0))
    if n.op == "mean":                      # view_as_real(s).pow(2).sum(-1): a mean times the count
        return one and not n.attrs.get("act")
    if n.op == "cat":                       # view_as_real's [..., 2]
        return len(_computed(g, n)) == len(n.inputs)
    return n.op == "add" and bool(n.attrs.get("power_spectrum")) and len(_computed(g, n)) == 2


def _dag(g: Graph, c: Node):
    """(input node, the steps before c in graph order) when every value c
    reads comes from one program input through chain steps or spectral
    ones (_spectral), each read only by those steps or c; else None."""
    seen, stack, src = set(), [c.inputs[0]], None
    while stack:
        name = stack.pop()
        n = g.node(name)
        if name in seen or n.op == "constant":
            continue
        if n.op == "input":
            if src is not None and src.name != name:
                return None
            src = n
            continue
        if n.attrs.get("fp32") or not (_lead(g, n) or _spectral(g, n)):
            return None
        seen.add(name)
        stack.extend(_computed(g, n))
    steps = [n for n in g.nodes if n.name in seen]
    if src is None or not any(n.op == "conv2d" for n in steps):           # an STFT's DFT among them
        return None
    for n in steps:
        if n.name in g.outputs or any(u.name not in seen and u is not c for u in g.users(n.name)):
            return None
    return src, steps


def _fp32_spectral(n: Node, reason: str) -> None:
    """A spectral step made an fp32 one: a square as x * x, an identity as a
    reshape to its own shape (ops with fp32 kernels)."""
    n.attrs["fp32"] = reason
    if n.op == "elementwise":
        n.op, n.inputs = "mul", [n.inputs[0], n.inputs[0]]
        n.attrs.pop("fn", None)
        n.attrs.pop("exponent", None)
    elif n.op == "identity":
        n.op = "reshape"
        n.attrs["shape"] = list(n.shape)


def _as_numpy(t) -> np.ndarray:
    return np.asarray(t.detach().numpy() if hasattr(t, "detach") else t, np.float64)


def _run(g: Graph, steps: List[Node], src: str, x: torch.Tensor) -> torch.Tensor:
    env: Dict[str, torch.Tensor] = {src: x}
    for n in steps:
        xs = [env[i] if i in env else eval_node(g.node(i), []) for i in n.inputs]
        env[n.name] = eval_node(n, xs)
    return env[steps[-1].name]


def _measure(g: Graph, steps: List[Node], src: Node, samples, position: int):
    """(steps the input's int8 grid costs, decades the input spans) on the samples, or None."""
    if not samples or any(not torch.as_tensor(s[position]).is_floating_point() for s in samples):
        return None
    xs = [torch.as_tensor(_as_numpy(s[position]), dtype=torch.float32) for s in samples]
    if any(not torch.isfinite(x).all() for x in xs):
        return None
    scale, zp = affine_qparams(min(float(x.min()) for x in xs), max(float(x.max()) for x in xs))
    exact, rounded = [], []
    with torch.no_grad():
        for x in xs:
            q = torch.clamp(torch.round(x / scale) + zp, -128, 127)
            exact.append(_as_numpy(_run(g, steps, src.name, x)))
            rounded.append(_as_numpy(_run(g, steps, src.name, (q - zp) * scale)))
    if not all(np.isfinite(e).all() for e in exact):
        return None         # a log of 0 or of a negative: NaN / inf, which calibration refuses or a where drops
    out_step = affine_qparams(min(float(e.min()) for e in exact), max(float(e.max()) for e in exact))[0]
    err = max(float(np.nan_to_num(np.abs(a - b), nan=0.0, posinf=0.0, neginf=0.0).max())
              for a, b in zip(exact, rounded))
    mags = np.concatenate([np.abs(x.numpy().ravel()) for x in xs])
    live = mags[mags > 0]
    decades = float(np.log10(live.max() / live.min())) if live.size else 0.0
    return err / out_step, decades


class _Steps:
    """fp32 nodes replacing compression c: named c__fp32_0, ...; the last takes c's name."""

    def __init__(self, c: Node, reason: str):
        self.c, self.reason, self.nodes = c, reason, []

    def __call__(self, op, inputs, fp32=True, **attrs) -> str:
        attrs.setdefault("source", self.c.attrs.get("source", self.c.name))
        if fp32:
            attrs["fp32"] = self.reason
        self.nodes.append(Node(f"{self.c.name}__fp32_{len(self.nodes)}", op, list(inputs), attrs, list(self.c.shape)))
        return self.nodes[-1].name

    def const(self, v: float) -> str:
        n = Node(f"{self.c.name}__fp32_{len(self.nodes)}", "constant", [],
                 {"value": np.asarray(v, np.float32), "source": self.c.attrs.get("source", self.c.name)}, [])
        self.nodes.append(n)
        return n.name


def _fp32_nodes(c: Node, fn: str, reason: str) -> List[Node]:
    """c (one computed input x) as fp32 steps (module doc)."""
    s, x = _Steps(c, reason), c.inputs[0]
    if fn in ROOTS or fn == "pow":
        e = ROOTS.get(fn, float(c.attrs.get("exponent", 1.0)))
        s("binary_math", [x, s.const(e)], fn="pow")
    else:
        k = LOGS[fn]
        if fn == "log1p":
            x = s("add", [x, s.const(1.0)])
        # 0 and below as the smallest normal float32: -87.3, where the output grid saturates as for -inf
        x = s("clamp", [x], lo=float(np.finfo(np.float32).tiny), hi=None)
        m = s("frexp_mantissa", [x], fp32=False)
        e = s("index_to_float", [s("frexp_exponent", [x], fp32=False)], fp32=False)
        t = s("div", [s("sub", [m, s.const(1.0)]), s("add", [m, s.const(1.0)])])
        z = s("mul", [t, t])
        p = s.const(1.0 / 15.0)
        for odd in (13, 11, 9, 7, 5, 3, 1):
            p = s("add", [s("mul", [p, z]), s.const(1.0 / odd)])
        s("add", [s("mul", [s("mul", [t, p]), s.const(2.0 * k)]), s("mul", [e, s.const(math.log(2.0) * k)])])
    out = s.nodes[-1]
    out.name, out.qparams = c.name, c.qparams
    if c.attrs.get("act"):
        out.attrs["act"] = c.attrs["act"]       # an activation prepare fused into c
    return s.nodes


def compress_inputs_in_fp32(g: Graph, calibration, log: Callable[[str], None] = lambda s: None,
                            int8_io: bool = False,
                            missing: Callable[[List[str]], List[str]] = lambda ops: []) -> None:
    """Runs in fp32 each compression chain of a float program input whose
    int8 input grid would cost more than LIMIT output steps on the
    calibration samples (module doc). Before calibration: the new steps are
    observed like the rest. missing: the given kernels the runtime lacks
    (a runtime built with fewer kernels keeps the int8 table, with a warning)."""
    inputs = [n.name for n in g.nodes if n.op == "input"]
    for c in list(g.nodes):
        fn = _compression(c)
        if fn is None or c.attrs.get("fp32") or not c.inputs:
            continue
        chain = _chain(g, c)
        if chain is None:
            # through an STFT's power spectrum (a log spectrogram computed in the model)
            dag = _dag(g, c)
            chain = None if dag is None else (dag[0], dag[1], _chain_tail(g, c))
        if chain is None or chain[0].name not in inputs:
            continue
        src, lead, tail = chain
        measured = _measure(g, lead + [c] + tail, src, calibration, inputs.index(src.name))
        if measured is None or measured[0] <= LIMIT or measured[1] < DECADES:
            continue
        steps, decades = measured
        if int8_io:
            log(f"warning: {origin(c)}: this {fn} of an int8 program input spanning {decades:.1f} decades "
                f"(calibration) is {steps:.0f} output steps off on the input's int8 grid (compile without --int8-io, "
                f"or compress the input before it)")
            continue
        lacking = missing([KERNELS.get(fn, FREXP)])
        if lacking:
            log(f"warning: {origin(c)}: this {fn} of a float program input spanning {decades:.1f} decades "
                f"(calibration) is {steps:.0f} output steps off on the input's int8 grid; its fp32 form needs "
                f"{lacking[0]}, which the runtime's kernels lack")
            continue
        reason = REASON.format(fn=fn, decades=decades, steps=steps)
        for n in lead + tail:
            _fp32_spectral(n, reason) if _spectral(g, n) else n.attrs.__setitem__("fp32", reason)
        at = g.nodes.index(c)
        g.nodes[at:at + 1] = _fp32_nodes(c, fn, reason)
        log(f"{origin(c)}: {reason}" + (" (with " + ", ".join(origin(n) for n in lead + tail) + ")"
                                        if lead or tail else ""))
