"""A log of a magnitude of a float program input's values:
`20 * torch.log10(torch.hypot(re, im) + 1e-3)` where re / im are slices of
the input (a dB spectrum from re / im planes, a complex spectrum's .abs(),
a hand-written sqrt(re ** 2 + im ** 2): capture_hand_hypot).

The hypot is an fp32 kernel (capture_binary_math), but it read re and im
on the input's int8 grid and its value was quantized on its own linear
int8 grid before the log's int8 table: every magnitude below half a step
read as 0, and the log spread those over most of its output range (7.2
output steps off, the hand-written form 120; probe 9). Here the whole
chain runs in fp32 from the float input, as input_compression does for a
log of an input (fp32_input_chains.run_in_fp32): the steps from the input
to the hypot (slices, reshapes, a complex pair's cat, an inner hypot of a
constant), the hypot, the constant steps to the log (add / sub / mul / div
by a constant, clamp, reshape), the log and its single constant readers
after it (the `20 *` of dB), quantized after it on their own calibrated
grid.

The criterion is measured on the calibration samples: the chain evaluated
on the hypot's value as it is and rounded to its int8 grid (calibrated
over the samples); when the two differ by more than LIMIT steps of the
chain output's int8 grid, the chain runs in fp32. A magnitude whose small
values the log does not magnify (a log of hypot + 1 over [0, 2]) keeps the
int8 table. The steps from the input may be layers by constant weights
(re / im a linear's or a conv's outputs, 32 output steps on the int8
chain), and the magnitude a power re ** 2 + im ** 2 (10 * log10 of it:
118 steps), both run in fp32 too. A power of parts computed from other
int8 values runs its squares onward in fp32 from the parts' int8 values
(_squares_of_values); a hypot of such parts keeps its chain (their int8
grids lose the small magnitudes before the hypot). Between the magnitude
and the log the chain may also pass through clamp(min=eps) (fused into a
power's add or not), torch.maximum(., eps), a square (|S| * |S|) and a
mask's product |S| * w by a value w computed otherwise (a sigmoid's gain,
read on its int8 grid: log(|S| * w + eps) 31-65 output steps off on the
magnitude's grid, 0.8-2.1 so); steps before the magnitude that other steps
read too get an fp32 copy (log_spectrum_readers). --int8-io: nothing runs before the input's
int8 grid, so nothing changes. A runtime whose kernels lack the log's
keeps the int8 table, with a warning. Before calibration: the new steps
are observed like the rest."""
from __future__ import annotations

from typing import Callable, Dict, List, Optional

import numpy as np
import torch

from .fp32_input_chains import LIMIT, computed, lacking, on_int8_grid, run_in_fp32, steps_lost
from .input_compression import LOGS, _chain_tail, _fp32_form, _lead
from .ir import Graph, Node, eval_node, origin
from .log_spectrum_readers import split_shared

REASON = ("this {fn} of a magnitude computed in fp32 (hypot) would be {steps:.0f} output steps off on the "
          "magnitude's int8 grid (its small values read as 0), so it runs in fp32 and is quantized after it")


def _squared(g: Graph, n: Node) -> bool:
    """x ** 2, torch.square(x), x * x of a computed x, read by one step."""
    if len(g.users(n.name)) != 1 or n.attrs.get("fp32") or n.name in g.outputs:
        return False
    if n.op == "elementwise" and len(computed(g, n)) == 1:
        fn = n.attrs.get("fn")
        return fn == "square" or (fn == "pow" and float(n.attrs.get("exponent", 0.0)) == 2.0)
    return n.op == "mul" and len(n.inputs) == 2 and n.inputs[0] == n.inputs[1] and g.node(n.inputs[0]).op != "constant"


def _magnitude(n: Node, g: Optional[Graph] = None) -> bool:
    """A hypot, or (with g) a power re ** 2 + im ** 2: an add of two squares read by it alone (its
    clamp(min=eps) fused in as an activation or not)."""
    if n.op == "binary_math" and n.attrs.get("fn") == "hypot":
        return True
    return g is not None and n.op == "add" and len(n.inputs) == 2 and not n.attrs.get("fp32") \
        and all(_squared(g, g.node(i)) for i in n.inputs)


def _step(g: Graph, n: Node) -> bool:
    """A step between the magnitude and the log: a constant one (input_compression's lead: + eps,
    clamp(min=eps), a filterbank), torch.maximum(., eps) and a square (|S| * |S|, |S| ** 2)."""
    return _lead(g, n) or (n.op == "maximum" and len(n.inputs) == 2 and len(computed(g, n)) == 1) \
        or _squared(g, n)


def _layer(g: Graph, n: Node) -> bool:
    """A convolution by a constant weight of one computed value (re / im from conv layers)."""
    return n.op == "conv2d" and n.attrs.get("weight") is not None and len(computed(g, n)) == 1


def _reaches(g: Graph, n: Node) -> bool:
    """n is a magnitude, or _step steps read by one step lead from one to n."""
    while not _magnitude(n, g):
        if not _step(g, n) or n.attrs.get("fp32") or n.name in g.outputs or len(g.users(n.name)) != 1:
            return False
        n = g.node(computed(g, n)[0])
    return True


def _mask(g: Graph, n: Node) -> Optional[int]:
    """A mask's product m * w of two computed values, m leading to a
    magnitude (_reaches) and w not: m's position, else None. w (a sigmoid's
    gain) is read on its int8 grid, dequantized, and m in fp32."""
    if n.op != "mul" or len(n.inputs) != 2 or len(computed(g, n)) != 2 or n.inputs[0] == n.inputs[1] \
            or n.attrs.get("act"):
        return None
    sides = [i for i in (0, 1) if _reaches(g, g.node(n.inputs[i]))]
    return sides[0] if len(sides) == 1 else None


def _chain(g: Graph, c: Node):
    """(the hypot, lead steps in graph order, tail steps) of log c, else None."""
    lead, src = [], g.node(c.inputs[0])
    while not _magnitude(src, g):
        if src.attrs.get("fp32") or src.name in g.outputs or len(g.users(src.name)) != 1:
            return None
        side = None if _step(g, src) else _mask(g, src)
        if side is None and not _step(g, src):
            return None
        lead.append(src)
        src = g.node(computed(g, src)[0] if side is None else src.inputs[side])
    return src, lead[::-1], _chain_tail(g, c)


def _masks(g: Graph, lead: List[Node]) -> List[str]:
    """The values the chain's masks multiply by (_mask: read as they are)."""
    return [n.inputs[1 - _mask(g, n)] for n in lead if not _step(g, n)]


def _upstream(g: Graph, src: Node, done: Optional[Dict[str, str]] = None) -> List[Node]:
    """The steps from one float program input to the hypot (slices,
    reshapes, permutes, a complex pair's cat, constant steps, an inner
    hypot), in graph order, when every value it reads comes from that input
    so; else []. In fp32 from the float input the operands keep their small
    values too (on the input's int8 grid a magnitude of 0.1 was 5 output
    steps off a dB). Steps other steps read too get an fp32 copy when the
    chain switches (log_spectrum_readers); done: the steps an earlier chain
    switched to fp32, by the input they come from (a second log of one
    magnitude reads them as they are)."""
    return _walk(g, src, done or {})[0]


def _walk(g: Graph, src: Node, done: Dict[str, str]):
    """(_upstream's steps, the program input they come from), else ([], None)."""
    seen, stack, inputs = set(), list(computed(g, src)), set()
    while stack:
        n = g.node(stack.pop())
        if n.name in seen:
            continue
        if n.op == "input" or n.name in done:
            inputs.add(done.get(n.name, n.name))
            continue
        if n.attrs.get("fp32") \
                or not (_lead(g, n) or (n.op in ("slice", "identity") and len(computed(g, n)) == 1) or _magnitude(n)
                        or (n.op == "cat" and len(computed(g, n)) == len(n.inputs)) or _squared(g, n)
                        or _layer(g, n)):
            return [], None
        seen.add(n.name)
        stack.extend(computed(g, n))
    if len(inputs) != 1:
        return [], None
    return [n for n in g.nodes if n.name in seen], next(iter(inputs))


def _squares_of_values(g: Graph, src: Node) -> List[Node]:
    """A power re ** 2 + im ** 2 whose parts do not all come from a program
    input (re / im after a tanh, a pool): its two squares, which then read
    the parts' int8 values, dequantized; [] for a hypot (already fp32 from
    its int8 parts). On the power's int8 grid small powers read as 0 (a dB
    of linear parts after a tanh 102-120 output steps, 29-37 so: what is
    left is the parts' int8 grids, as a hypot of them, 24-41; the layers
    in fp32 too measured no better, 18 -> 21 on one seed)."""
    if _magnitude(src):
        return []
    return [g.node(i) for i in src.inputs]


def _run(g: Graph, steps: List[Node], src: str, x: torch.Tensor,
         given: Optional[Dict[str, torch.Tensor]] = None) -> np.ndarray:
    env: Dict[str, torch.Tensor] = {src: x, **(given or {})}
    for n in steps:
        xs = [env[i] if i in env else eval_node(g.node(i), []) for i in n.inputs]
        env[n.name] = eval_node(n, xs)
    return np.asarray(env[steps[-1].name].detach().numpy(), np.float64)


def magnitude_logs_in_fp32(g: Graph, calibration, log: Callable[[str], None] = lambda s: None,
                           int8_io: bool = False, missing: Callable[[List[str]], List[str]] = lambda ops: []) -> None:
    """Runs in fp32 each log of an fp32 hypot whose int8 grid would cost
    more than LIMIT output steps on the calibration samples (module doc)."""
    found = []
    for c in list(g.nodes):
        if c.op == "elementwise" and c.attrs.get("fn") in LOGS and not c.attrs.get("fp32") and c.inputs:
            chain = _chain(g, c)
            up = [] if chain is None or int8_io else (_upstream(g, chain[0]) or _squares_of_values(g, chain[0]))
            if up:
                found.append((c, chain, up))
    if not found or not calibration:
        return
    from .quantize import evaluate
    values: Dict[str, List[torch.Tensor]] = {}
    with torch.no_grad():
        for sample in calibration:
            _, env = evaluate(g, sample, keep_all=True)
            for name in {m for _, (src, lead, _), _ in found for m in [src.name] + _masks(g, lead)}:
                values.setdefault(name, []).append(env[name].detach().float())
    copies: Dict[str, str] = {}              # a step other steps read -> its fp32 copy (log_spectrum_readers)
    done: Dict[str, str] = {}                # steps switched to fp32 -> the program input they come from
    for c, (src, lead, tail), up in found:
        xs = values[src.name]
        if any(not torch.isfinite(x).all() for x in xs):
            continue
        lo, hi = min(float(x.min()) for x in xs), max(float(x.max()) for x in xs)
        steps = lead + [c] + tail
        given = [{m: values[m][k] for m in _masks(g, lead)} for k in range(len(xs))]
        with torch.no_grad():
            exact = [_run(g, steps, src.name, x, w) for x, w in zip(xs, given)]
            rounded = [_run(g, steps, src.name, on_int8_grid(x, min(lo, 0.0), hi), w) for x, w in zip(xs, given)]
        if not all(np.isfinite(e).all() for e in exact):
            continue            # a log of 0: -inf, which calibration refuses or a where drops
        lost = steps_lost(exact, rounded)
        if lost <= LIMIT:
            continue
        fn = c.attrs["fn"]
        lacks = lacking(c, missing)
        if lacks:
            log(f"warning: {origin(c)}: this {fn} of a magnitude is {lost:.0f} output steps off on the magnitude's "
                f"int8 grid{lacks}")
            continue
        up, source = _walk(g, src, done)           # (the graph as earlier chains left it)
        if source is not None:
            up = split_shared(g, up, {src.name, c.name} | {n.name for n in lead + tail}, copies)
            done.update((n.name, source) for n in up + [src] + lead + [c] + tail)
        else:
            up = _squares_of_values(g, src)
            if not up:
                continue
        lead = ([] if _magnitude(src) else [src]) + lead      # re ** 2 + im ** 2: its add too
        run_in_fp32(g, c, up + lead + tail, REASON.format(fn=fn, steps=lost), log, _fp32_form)
