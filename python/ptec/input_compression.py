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
The same holds for a learnable filterbank's output y (a conv, nn.Linear or
a matmul by constant weights, after Tensor.unfold's frames or not)
compressed as log(y ** 2 + eps), log(|y| + eps), log(relu(y) + eps) (the
relu fused into the conv), sqrt(|y|), |y| ** 0.3: on the int8 grid of
y ** 2 or |y| every magnitude below half a step read as 0 (18-160 output
steps, issue 15). At least one such layer must be among the steps (a power
of the input's own re / im planes is magnitude_logs'); steps that other
steps read too get an fp32 copy for the chain (log_spectrum_readers).

The chain: from a program input, through clamp (a relu), abs, add / sub /
mul / div by a constant, reshape, linear (constant weight) and a matmul by
a constant (each reading one computed value), to the compression (the
element-wise log, log2, log10, log1p, sqrt, rsqrt, reciprocal, or pow with an exponent
below 1), then on through its single readers among clamp and add / sub /
mul / div by a constant (the `10 *` of dB).

The compression runs on its own float32 kernel (aten::log.out, log2,
log10, log1p, sqrt, rsqrt, reciprocal: src/kernels/portable/
op_float_unary_math.c, upstream ExecuTorch's too; x ** e, e < 1, on
aten::pow.Tensor_Tensor_out by a constant exponent), the steps around it on
fp32 ones (fp32_input_chains, shared with periodic_inputs). A chain that
is NaN or infinite on a calibration sample (a log of 0 or of a negative) is
left as it was (calibration refuses it, or a where drops it); a run's log
of 0 is torch's -inf (of a negative NaN), which the output's quantize
saturates at the grid's lowest value, as the int8 table gives it. A
runtime whose kernels lack the function's keeps the int8 table, with a
warning.

--int8-io: the caller hands the input already on its int8 grid, so nothing
can run before it: the log warns, with the measured steps."""
from __future__ import annotations

from typing import Callable, Dict, List, Optional

import numpy as np
import torch

from .fp32_input_chains import CONST_BINARY, LIMIT, computed, constant_step, lacking, on_int8_grid, run_in_fp32, \
    steps_lost
from .ir import Graph, Node, eval_node, origin
from .log_spectrum_readers import split_shared

# and the input's largest magnitude over its smallest nonzero one at least
# 10**DECADES (besides more than LIMIT steps lost): below that every nonzero
# value is 2.5 or more input steps from 0, and what is lost is the ordinary
# rounding of a steep function (1 / x on [0.2, 3], 4.5 steps), which stays
# on its int8 table
DECADES = 2.0
LOGS = ("log", "log2", "log10", "log1p")
ROOTS = ("sqrt", "rsqrt", "reciprocal")
REASON = ("this {fn} of a float program input spanning {decades:.1f} decades (calibration) would be {steps:.0f} "
          "output steps off on the input's int8 grid, so it runs in fp32 on the float input and is quantized after it")


def _lead(g: Graph, n: Node) -> bool:
    """A step the chain may pass through before the compression: a constant
    one, a clamp (a relu, clamp(min=eps)) or an abs (a magnitude |y|)."""
    return constant_step(g, n, also=("clamp",)) or _abs(g, n)


def _abs(g: Graph, n: Node) -> bool:
    """y.abs() of one computed value (aten::abs.out in fp32)."""
    return n.op == "elementwise" and n.attrs.get("fn") == "abs" and len(computed(g, n)) == 1


def _layer(g: Graph, n: Node) -> bool:
    """A layer by a constant weight (an STFT's DFT or a filterbank: a conv,
    nn.Linear, a matmul by a constant), its fused relu / clamp or not."""
    return n.op == "conv2d" and n.attrs.get("weight") is not None \
        or (n.op in ("linear", "matmul") and constant_step(g, n))


def _tail(g: Graph, n: Node) -> bool:
    return (n.op == "clamp" or n.op in CONST_BINARY) and len(computed(g, n)) == 1


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
        src = g.node(computed(g, src)[0])
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
    one = len(computed(g, n)) == 1
    if n.op == "pad":
        return one and n.attrs.get("mode") in ("reflect", "replicate") and len(n.shape) == 3
    if n.op == "conv2d":                    # (a fused relu: a filterbank's log(relu(y) + eps))
        return one and n.attrs.get("weight") is not None
    if n.op in ("slice", "identity"):
        return one
    if n.op == "elementwise":
        return one and (n.attrs.get("fn") == "square"
                        or (n.attrs.get("fn") == "pow" and float(n.attrs.get("exponent", 0.0)) == 2.0))
    if n.op == "mean":                      # view_as_real(s).pow(2).sum(-1): a mean times the count
        return one and not n.attrs.get("act")
    if n.op == "cat":                       # view_as_real's [..., 2]
        return len(computed(g, n)) == len(n.inputs)
    return n.op == "add" and bool(n.attrs.get("power_spectrum")) and len(computed(g, n)) == 2


def _dag(g: Graph, c: Node):
    """(input node, the steps before c in graph order) when every value c
    reads comes from one program input through chain steps or spectral
    ones (_spectral); else None. Steps that other steps read too (or that
    the program returns: `y = fb(x); log(y.abs() + eps) + y`) get an fp32
    copy when the chain switches (log_spectrum_readers.split_shared)."""
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
        stack.extend(computed(g, n))
    steps = [n for n in g.nodes if n.name in seen]
    if src is None or not any(_layer(g, n) for n in steps):     # an STFT's DFT or a filterbank among them
        return None
    return src, steps


def _fp32_form(g: Graph, n: Node) -> None:
    """A spectral step in a form with an fp32 kernel: a square as x * x, an
    identity as a reshape to its own shape."""
    if not _spectral(g, n):
        return
    if n.op == "elementwise":
        square_as_mul(n)
    elif n.op == "identity":
        identity_as_reshape(n)


def square_as_mul(n: Node) -> None:
    """An elementwise square (fn square, or pow by 2) as x * x: aten::mul.out."""
    n.op, n.inputs = "mul", [n.inputs[0], n.inputs[0]]
    n.attrs.pop("fn", None)
    n.attrs.pop("exponent", None)


def identity_as_reshape(n: Node) -> None:
    """An identity as a reshape to its own shape (a float32 kernel's form)."""
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


def _decades(values) -> float:
    """Decades from the smallest nonzero magnitude among values to the largest."""
    mags = np.concatenate([np.abs(np.asarray(v, np.float64).ravel()) for v in values])
    live = mags[mags > 0]
    return float(np.log10(live.max() / live.min())) if live.size else 0.0


def _measure(g: Graph, steps: List[Node], src: Node, samples, position: int, lead: int = 0):
    """(steps the input's int8 grid costs, decades the input spans) on the
    samples, or None. The decades are also those of the compression's
    argument (after the `lead` first steps), when fewer: log(|x| + 0.5)
    of a signed x reads values from 0.5 up, which a linear grid holds (the
    ordinary rounding of a steep function), however near 0 x comes."""
    if not samples or any(not torch.as_tensor(s[position]).is_floating_point() for s in samples):
        return None
    xs = [torch.as_tensor(_as_numpy(s[position]), dtype=torch.float32) for s in samples]
    if any(not torch.isfinite(x).all() for x in xs):
        return None
    lo, hi = min(float(x.min()) for x in xs), max(float(x.max()) for x in xs)
    with torch.no_grad():
        exact = [_as_numpy(_run(g, steps, src.name, x)) for x in xs]
        rounded = [_as_numpy(_run(g, steps, src.name, on_int8_grid(x, lo, hi))) for x in xs]
        argument = [_as_numpy(_run(g, steps[:lead], src.name, x)) for x in xs] if lead else []
    if not all(np.isfinite(e).all() for e in exact):
        return None         # a log of 0 or of a negative: NaN / inf, which calibration refuses or a where drops
    decades = _decades([x.numpy() for x in xs])
    return steps_lost(exact, rounded), min(decades, _decades(argument)) if argument else decades


def compress_inputs_in_fp32(g: Graph, calibration, log: Callable[[str], None] = lambda s: None,
                            int8_io: bool = False,
                            missing: Callable[[List[str]], List[str]] = lambda ops: []) -> None:
    """Runs in fp32 each compression chain of a float program input whose
    int8 input grid would cost more than LIMIT output steps on the
    calibration samples (module doc). Before calibration: the new steps are
    observed like the rest. missing: the given kernels the runtime lacks
    (a runtime built with fewer kernels keeps the int8 table, with a warning)."""
    inputs = [n.name for n in g.nodes if n.op == "input"]
    copies: Dict[str, str] = {}          # a step other steps read -> its fp32 copy (log_spectrum_readers)
    for c in list(g.nodes):
        fn = _compression(c)
        if fn is None or c.attrs.get("fp32") or not c.inputs:
            continue
        chain, dag = _chain(g, c), None
        if chain is None:
            # through an STFT's power spectrum or a filterbank (a log spectrogram computed in the model)
            dag = _dag(g, c)
            chain = None if dag is None else (dag[0], dag[1], _chain_tail(g, c))
        if chain is None or chain[0].name not in inputs:
            continue
        src, lead, tail = chain
        measured = _measure(g, lead + [c] + tail, src, calibration, inputs.index(src.name), len(lead))
        if measured is None or measured[0] <= LIMIT or measured[1] < DECADES:
            continue
        steps, decades = measured
        if int8_io:
            log(f"warning: {origin(c)}: this {fn} of an int8 program input spanning {decades:.1f} decades "
                f"(calibration) is {steps:.0f} output steps off on the input's int8 grid (compile without --int8-io, "
                f"or compress the input before it)")
            continue
        lacks = lacking(c, missing)
        if lacks:
            log(f"warning: {origin(c)}: this {fn} of a float program input spanning {decades:.1f} decades "
                f"(calibration) is {steps:.0f} output steps off on the input's int8 grid{lacks}")
            continue
        if dag is not None:
            lead = split_shared(g, lead, {c.name}, copies)      # steps other steps read: an fp32 copy
        run_in_fp32(g, c, lead + tail, REASON.format(fn=fn, decades=decades, steps=steps), log, _fp32_form)
