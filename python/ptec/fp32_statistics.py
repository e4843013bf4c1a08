"""Second-moment statistics whose int8 steps lose what they compute run in
fp32 (issue 15): a standard deviation over a short row or a rolling window
(x.std(-1), torch.std(x, dim), x.unfold(-1, k, s).std(-1), .var(-1).sqrt(),
unbiased or not), a variance, a root of a mean of squares.

In int8 each step of `sqrt(mean((x - mean(x)) ** 2) * n / (n - c))`
(capture_rewrites._var_nodes) is rounded onto its own grid, and the last
one magnifies the rounding of the one before: the variance's grid, sized
by the largest variance, holds a small one to half a step, whose root is
sqrt(S^2 / 510) = S / 22.6 for a largest deviation S, 11 of the root's
output steps. Over a window of 4 to 16 values or a row of 5 many rows sit
there (measured 6 to 26 output steps from torch). In fp32 the chain is
torch's function of the values it reads, then one rounding onto the
output's grid.

The chain: from a root (an elementwise sqrt, a mean, a linear sum, a
constant factor after them) up through the steps of a sum of squares
(mean, a linear layer by a constant weight, add / sub / mul / div, the
square, cat, reshape, permute, slice), each read only by the chain, to the
values it reads (a program input, read in fp32 as it is; any other value
keeps its int8 grid and is dequantized), when it squares something and
reduces something. The criterion is measured on the calibration samples:
the chain with each step rounded onto the int8 grid of its calibrated
range (the view steps keep their input's) against the chain in float, in
steps of the root's int8 grid; over LIMIT, and when the chain in fp32
from the values it reads is within half of that, the chain runs in fp32
(attrs["fp32"], each step on its float32 kernel; a square as x * x).
Only the outermost root of nested chains is tried, measured in the root's
steps and, for a sqrt, also in those of the sum or mean of squares under
it (_radicand_lost): the root of a statistic that goes fp32 alone goes
fp32 too (`((x - ae(x)) ** 2).sum(-1).sqrt()`, torch.linalg.norm of a
residual: 4.66 -> 0.18 output steps; F.pdist of 8 values 1.65 -> 0.00).
Chains that lose less in both keep their int8 program byte for byte. --int8-io: nothing
changes. A runtime lacking aten::sqrt.out keeps the int8 sqrt, with a
warning."""
from __future__ import annotations

from typing import Callable, Dict, List, Optional, Set

import numpy as np
import torch

from .fp32_input_chains import LIMIT, on_int8_grid, steps_lost
from .input_compression import identity_as_reshape, square_as_mul
from .ir import Graph, Node, eval_node, origin
from .narrow_statistics import spread_factor

REASON = ("a second-moment statistic (a sum of squares, its root) that would be {steps:.1f} output steps off "
          "with its steps on int8 grids (a root magnifies the rounding of a small variance), computed in fp32")
# steps whose int8 value keeps its input's grid (no rounding of their own)
_VIEWS = ("reshape", "permute", "slice", "identity")
_ARITH = ("add", "sub", "mul", "div")


def _square(g: Graph, n: Node) -> bool:
    if n.op == "elementwise":
        fn = n.attrs.get("fn")
        return fn == "square" or (fn == "pow" and float(n.attrs.get("exponent", 0.0)) == 2.0)
    return n.op == "mul" and len(n.inputs) == 2 and n.inputs[0] == n.inputs[1]


def _reduces(n: Node) -> bool:
    """A mean, or a sum as a linear layer by one row of a constant (ptec.exact_sums)."""
    if n.op == "linear" and n.attrs.get("weight") is not None and not n.attrs.get("act"):
        w = np.asarray(n.attrs["weight"])
        return w.ndim == 2 and w.shape[0] == 1 and bool(np.all(w == w.flat[0]))
    return n.op == "mean"


def _step(g: Graph, n: Node, root: bool = False) -> bool:
    """A step a chain may hold: one of the float steps of a sum of squares
    (the root may be an output)."""
    if n.attrs.get("fp32") or n.attrs.get("dtype") or (n.name in g.outputs and not root) \
            or n.op in ("input", "constant"):
        return False
    if set(n.attrs) & {"act", "a16", "scale16"}:
        return False
    if n.op == "mean" or _square(g, n) or n.op in _VIEWS or n.op == "cat":
        return True
    if n.op == "linear":
        return _reduces(n)
    return n.op in _ARITH and len(n.inputs) == 2


def _root(g: Graph, n: Node) -> bool:
    """Where a chain may end: a sqrt, a reduction, a factor after one."""
    if n.op == "elementwise" and n.attrs.get("fn") == "sqrt" and len(n.inputs) == 1:
        return not n.attrs.get("fp32")
    return _step(g, n, True) and (_reduces(n) or n.op in ("mul", "div"))


def _chain(g: Graph, root: Node) -> Optional[List[Node]]:
    """The steps above root (root included) that only the chain reads, in
    graph order, when they square and reduce something, else None."""
    seen: Set[str] = {root.name}
    stack = [i for i in root.inputs]
    while stack:
        n = g.node(stack.pop())
        if n.name in seen or not _step(g, n):
            continue
        seen.add(n.name)
        stack.extend(n.inputs)
    changed = True
    while changed:              # a step read outside the chain is a value the chain reads
        changed = False
        for name in list(seen):
            if name != root.name and any(u.name not in seen for u in g.users(name)):
                seen.discard(name)
                changed = True
        for name in list(seen):     # a step no longer under the root (its reader left) leaves too
            if name != root.name and not _reaches(g, name, root.name, seen):
                seen.discard(name)
                changed = True
    steps = [n for n in g.nodes if n.name in seen]
    if not any(_square(g, n) for n in steps) or not any(_reduces(n) for n in steps):
        return None
    return steps


def _reaches(g: Graph, name: str, root: str, within: Set[str]) -> bool:
    cur = [name]
    done = set()
    while cur:
        x = cur.pop()
        if x == root:
            return True
        if x in done:
            continue
        done.add(x)
        cur.extend(u.name for u in g.users(x) if u.name in within)
    return False


def _reads(g: Graph, steps: List[Node]) -> List[str]:
    inside = {n.name for n in steps}
    out: List[str] = []
    for n in steps:
        for i in n.inputs:
            if i not in inside and g.node(i).op != "constant" and i not in out:
                out.append(i)
    return out


def _run(g: Graph, steps: List[Node], env: Dict[str, torch.Tensor], grids=None, out=None) -> torch.Tensor:
    local = dict(env)
    for n in steps:
        xs = [local[i] if i in local else eval_node(g.node(i), []) for i in n.inputs]
        y = eval_node(n, xs)
        if grids is not None and n.op not in _VIEWS:
            y = on_int8_grid(y.float(), *grids[n.name])
        local[n.name] = y
    return local[out or steps[-1].name]


def _is_root(n: Node) -> bool:
    return n.op == "elementwise" and n.attrs.get("fn") == "sqrt" and len(n.inputs) == 1


def _radicand_lost(g: Graph, steps: List[Node], envs, reads: List[str], grids) -> float:
    """What the statistic under a root (its sum or mean of squares) loses
    with its steps on int8 grids, in steps of its own grid: the root of a
    statistic that runs in fp32 alone runs in fp32 too. In the root's own
    grid the loss is about halved (d sqrt(s) = ds / (2 sqrt(s))), and that
    grid holds 0, which a norm seldom nears: ((x - ae(x)) ** 2).sum(-1)
    .sqrt() of 64 values spans 6.7 to 9.8, 1.27 simulated steps of the
    root's grid, 4.66 of torch's range / 255 (issue 15's output step)."""
    under = steps[:-1]
    name = steps[-1].inputs[0]
    if not under or name not in {n.name for n in under}:
        return 0.0
    exact = [e[name].double().numpy() for e in envs]
    rounded = [_run(g, under, {r: on_int8_grid(e[r].float(), *grids[r]) for r in reads}, grids, name)
               .double().numpy() for e in envs]
    if not all(np.isfinite(r).all() for r in rounded):
        return 0.0
    return steps_lost(exact, rounded)


def _fp32_form(g: Graph, n: Node) -> None:
    """A step in a form with a float32 kernel: a square as x * x, an identity as a reshape."""
    if n.op == "elementwise" and _square(g, n):
        square_as_mul(n)
    elif n.op == "identity":
        identity_as_reshape(n)


def statistics_in_fp32(g: Graph, calibration, log: Callable[[str], None] = lambda s: None,
                       int8_io: bool = False, missing: Callable[[List[str]], List[str]] = lambda ops: []) -> None:
    """Runs in fp32 each chain of a sum of squares whose int8 steps cost
    more than LIMIT output steps on the calibration samples (module doc)."""
    if int8_io or not calibration:
        return
    found = []
    for n in g.nodes:
        if _root(g, n):
            steps = _chain(g, n)
            if steps is not None and len(steps) > 1:
                found.append(steps)
    # a chain inside another (a variance under its root) is not tried alone: its grid is not the output's
    inner = {n.name for steps in found for n in steps[:-1]}
    found = [steps for steps in found if steps[-1].name not in inner]
    if not found:
        return
    from .quantize import evaluate
    names = {i for steps in found for i in _reads(g, steps)} | {n.name for steps in found for n in steps}
    envs: List[Dict[str, torch.Tensor]] = []
    with torch.no_grad():
        for sample in calibration:
            _, env = evaluate(g, sample, keep_all=True)
            envs.append({k: env[k].detach() for k in names if k in env})
    inputs = set(g.inputs)
    for steps in found:
        root = steps[-1]
        reads = _reads(g, steps)
        if any(r not in envs[0] for r in reads) or any(e[r].dtype != torch.float32 for e in envs for r in reads) \
                or any(e[n.name].dtype != torch.float32 or not torch.isfinite(e[n.name]).all()
                       for e in envs for n in steps):
            continue                # float32 values only (a float64 sum keeps its own path)
        grids = {}
        for name in reads + [n.name for n in steps]:
            grids[name] = (min(float(e[name].min()) for e in envs), max(float(e[name].max()) for e in envs))
        with torch.no_grad():
            exact = [e[root.name].double().numpy() for e in envs]
            held = [{r: (e[r] if r in inputs else on_int8_grid(e[r].float(), *grids[r])) for r in reads} for e in envs]
            rounded = [_run(g, steps, {r: on_int8_grid(e[r].float(), *grids[r]) for r in reads}, grids).double().numpy()
                       for e in envs]
            in_fp32 = [_run(g, steps, h).double().numpy() for h in held]
        if not all(np.isfinite(r).all() for r in rounded + in_fp32):
            continue
        spread = spread_factor(exact)      # a score far from 0: its loss in steps of its spread (narrow_statistics)
        own = steps_lost(exact, rounded) * spread
        # the statistic under a root decides for it too (_radicand_lost)
        under = _radicand_lost(g, steps, envs, reads, grids) if _is_root(root) else 0.0
        lost = max(own, under)
        if lost <= LIMIT or steps_lost(exact, in_fp32) * spread > own / 2:
            continue
        sqrt = [n for n in steps if n.op == "elementwise" and n.attrs.get("fn") == "sqrt"]
        gone = missing(["aten::sqrt.out"]) if sqrt else []
        if gone:
            log(f"warning: {origin(root)}: this statistic is {lost:.0f} output steps off on int8 grids; its fp32 "
                f"form needs {gone[0]}, which the runtime's kernels lack")
            continue
        reason = REASON.format(steps=own) + (f" (the sum of squares under its root {under:.1f} steps of its own "
                                             f"grid)" if under > own else "")
        for n in steps:
            _fp32_form(g, n)
            n.attrs["fp32"] = reason
            n.attrs["fp32_statistic"] = True    # ptec.guarded_denominators may extend the chain
        log(f"{origin(root)}: {reason} (with " + ", ".join(origin(n) for n in steps[:-1]) + ")")
