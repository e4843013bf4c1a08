"""Divisions by an eps-guarded denominator that calibration saw at its
guard: `z / (z.sum(-1, keepdim=True) + 1e-6)`, `z / s.clamp_min(1e-6)`,
`z * torch.rsqrt((z * z).sum(-1, keepdim=True) + 1e-6)`,
`F.normalize(z)` (1 / max(||z||, eps)), `(z - m) / (z.std() + 1e-5)`, with
z a ReLU's output whose row may be all zero. torch gives 0 there (0 / eps).

In int8 the guard is lost: the denominator's grid spans its calibrated
range [eps, max], on which eps rounds to 0, so an fp32 division of the
dequantized operands is 0 / 0 = NaN; a reciprocal's (rsqrt's) own grid
reaches 1 / sqrt(eps) = 1000 and rounds every ordinary value to 0 (71,025
output steps measured), and F.normalize's 1 / eps = 1e12 makes the
product's requantization shift 35, outside what the kernel takes.

So when a guarded denominator's smallest calibrated value lies within one
step of 0 on its own int8 grid (the guard is what keeps it off 0), the
division (or the product by the reciprocal), the reciprocal, the guard
(the `+ eps` or the clamp, F.normalize's as a clamp at eps ** 2 before an
rsqrt) and the statistics between the guard and the values they reduce
(the sum / mean, the squares, the sqrt: the nodes read by nothing else)
run in fp32 on their float32 kernels: eps is kept exactly, 0 / eps is 0,
and the denominator is not rounded onto an int8 grid at all. The values
reduced (z) stay int8, dequantized for the fp32 steps. Runs after
calibration, before quantize; not with int8 inputs and outputs (no fp32
steps there).

F.normalize (p = 2 and the other p of capture_norms) of a layer's output
(not of the program's input: within 1.5 steps in int8) runs so whatever
its calibrated range (UNIT_REASON): its int8 form rounds the sum of squares of
a row onto one grid over all rows and looks its 1 / sqrt up in a LUT, so
a unit vector came out up to 5.7 output steps off after a Linear (7.7
after a conv's global pool), and a cosine-similarity matrix
F.normalize(a) @ F.normalize(b).T 15.5 (contrastive logits / 0.07: 9.8),
where torch.cosine_similarity (fp32: capture_fp32_distances) was 2.5. A
matmul whose two operands are both such fp32 unit vectors (through a
transpose / reshape read by nothing else) runs in fp32 too (the dot
products of unit vectors, in [-1, 1]; their int8 codes rounded each
element of both)."""
from __future__ import annotations

from typing import Callable, List, Optional, Set, Tuple

import numpy as np

from .ir import Graph, Node, float_math_name, origin
from .quantize import affine_qparams

REASON = ("an eps-guarded denominator that calibration saw at its guard (eps is below its int8 grid's "
          "step): the division and its denominator computed in fp32")
UNIT_REASON = ("an L2 (p-norm) normalisation, F.normalize, computed in fp32 (int8 sums of squares and their "
               "1 / sqrt LUT: up to 15 output steps on a cosine-similarity matrix)")
# reciprocals a product reads: mul(z, rsqrt(d)), mul(z, reciprocal(d)), F.normalize's factor
# 1 / max(||z||_p, eps) of the sum of |z|^p (inverse_norm: p = 2; lp_inverse_norm: capture_norms)
_RECIPROCALS = ("rsqrt", "reciprocal", "inverse_norm", "lp_inverse_norm")
_NORM_FACTORS = ("inverse_norm", "lp_inverse_norm")
# statistics between the guard and the values they reduce that have a float32 form
_STATISTICS = ("mean", "mul", "add", "sub", "div", "neg", "reshape", "permute", "cat", "clamp", "max_pool2d", "linear",
               "elementwise")


def _scalar(g: Graph, name: str) -> Optional[float]:
    node = g.node(name)
    if node.op != "constant":
        return None
    value = np.asarray(node.attrs["value"])
    if value.size != 1 or value.dtype.kind != "f":
        return None
    return float(value.reshape(()))


def _guard(g: Graph, observer, name: str) -> Optional[Node]:
    """The guard producing denominator `name`: x + eps (eps > 0 a constant,
    x >= 0 on calibration) or x.clamp(min=eps), eps > 0; else None."""
    n = g.node(name)
    if n.attrs.get("fp32") and not n.attrs.get("fp32_statistic"):
        return None
    if n.op == "add" and len(n.inputs) == 2:
        c = [_scalar(g, i) for i in n.inputs]
        if (c[0] is None) == (c[1] is None):
            return None
        eps, x = (c[1], n.inputs[0]) if c[1] is not None else (c[0], n.inputs[1])
        if eps > 0 and x in observer.lo and observer.range(x)[0] >= 0:
            return n
        return None
    if n.op == "clamp" and len(n.inputs) == 1 and n.attrs.get("lo") is not None \
            and float(n.attrs["lo"]) > 0:
        return n
    return None


def _near_zero(observer, name: str) -> bool:
    """The denominator's smallest calibrated value is within one step of 0
    on its own int8 grid (what the guard keeps it off is lost there)."""
    if name not in observer.lo:
        return False
    lo, hi = observer.range(name)
    return lo < affine_qparams(min(lo, 0.0), max(hi, 0.0))[0]


def _reciprocal(g: Graph, name: str) -> Tuple[Optional[Node], List[Node]]:
    """(the reciprocal node, the copies / reshapes between it and the
    product) when `name` is rsqrt / reciprocal / inverse_norm of something,
    seen through F.normalize's copies along dim (a cat of one value)."""
    between: List[Node] = []
    n = g.node(name)
    while n.op in ("cat", "reshape") and n.inputs and len(set(n.inputs)) == 1 and not n.attrs.get("fp32"):
        between.append(n)
        n = g.node(n.inputs[0])
    if n.attrs.get("fp32") or n.attrs.get("act"):
        return None, []
    if n.op == "elementwise" and n.attrs.get("fn") in _RECIPROCALS:
        return n, between
    if n.op == "div" and len(n.inputs) == 2 and _scalar(g, n.inputs[0]) is not None \
            and _scalar(g, n.inputs[1]) is None:
        return n, between                       # c / d
    return None, []


def _float_form(n: Node) -> bool:
    """n has a float32 kernel as it is (or square, as x * x)."""
    if n.op == "elementwise":
        return n.attrs.get("fn") in ("square", "abs_pow") or float_math_name(n) is not None
    if n.op == "linear":
        return bool(n.attrs.get("exact_sum"))        # a sum (ptec.exact_sums), not a layer
    return n.op in _STATISTICS


def _statistics(g: Graph, start: List[str], chain: Set[str]) -> List[Node]:
    """The nodes from `start` up that only the chain reads and that have a
    float32 form: the denominator's statistics, and the values they reduce
    when nothing else reads those (they join the chain). A reader already
    in fp32 (ptec.fp32_statistics' chain of the same std) counts as the
    chain's: it reads the value in float either way."""
    found: List[Node] = []
    todo = list(start)
    while todo:
        name = todo.pop()
        n = g.node(name)
        if name in chain or n.op in ("constant", "input") or n.attrs.get("fp32") or name in g.outputs \
                or not _float_form(n) or any(u.name not in chain and not u.attrs.get("fp32") for u in g.users(name)):
            continue
        chain.add(name)
        found.append(n)
        todo.extend(i for i in n.inputs if g.node(i).op != "constant")
    return found


def _constant(g: Graph, observer, before: Node, name: str, value: float) -> str:
    """A new float32 scalar constant, inserted before node `before`."""
    c = Node(name, "constant", [], dict(value=np.asarray(value, np.float32),
                                        source=before.attrs.get("source", before.name)), [])
    g.nodes.insert(g.nodes.index(before), c)
    observer.lo[c.name] = observer.hi[c.name] = float(np.float32(value))
    return c.name


def _mark(g: Graph, observer, n: Node, reason: str = REASON) -> None:
    n.attrs["fp32"] = reason
    if n.op == "elementwise" and n.attrs.get("fn") == "square":     # x * x: aten::mul.out
        n.op, n.inputs = "mul", [n.inputs[0], n.inputs[0]]
        n.attrs.pop("fn")
    elif n.op == "elementwise" and n.attrs.get("fn") == "abs_pow":  # |x| ** p: abs, then pow by a constant
        src = n.inputs[0]
        a = Node(f"{n.name}__abs", "elementwise", [src], dict(fn="abs", fp32=reason,
                                                              source=n.attrs.get("source", n.name)), list(n.shape or []))
        g.nodes.insert(g.nodes.index(n), a)
        if n.name in observer.lo:
            observer.lo[a.name], observer.hi[a.name] = 0.0, max(abs(v) for v in observer.range(src)) \
                if src in observer.lo else 1.0
        e = _constant(g, observer, n, f"{n.name}__exponent", float(n.attrs.pop("p")))
        n.op, n.inputs = "binary_math", [a.name, e]
        n.attrs["fn"] = "pow"


def guarded_denominators(g: Graph, observer, log: Callable[[str], None], int8_io: bool) -> None:
    if int8_io:
        return
    # products first: z * (1 / (s + eps)) takes its c / d as the reciprocal it multiplies by
    units: Set[str] = set()         # F.normalize products made fp32
    for n in [m for m in g.nodes if m.op == "mul"] + [m for m in g.nodes if m.op == "div"]:
        if n.op not in ("div", "mul") or len(n.inputs) != 2 or n.attrs.get("fp32"):
            continue
        steps: List[Node] = []
        reason = REASON
        if n.op == "div":
            if _scalar(g, n.inputs[1]) is not None:
                continue
            den = n.inputs[1]
            root = g.node(den)                  # a / sqrt(v + eps): the root of a guarded value
            root = root if root.op == "elementwise" and root.attrs.get("fn") == "sqrt" \
                and (not root.attrs.get("fp32") or root.attrs.get("fp32_statistic")) \
                and not root.attrs.get("act") else None
            guard = _guard(g, observer, root.inputs[0] if root is not None else den)
            if guard is None or not _near_zero(observer, den):
                continue
            steps = ([root] if root is not None else []) + [guard]
        else:
            found = [(i, *_reciprocal(g, i)) for i in n.inputs]
            found = [(i, r, between) for i, r, between in found if r is not None]
            if len(found) != 1:
                continue
            _, rec, between = found[0]
            if rec.attrs.get("fn") in _NORM_FACTORS:
                den = rec.inputs[0]
                if not _near_zero(observer, den):
                    z = [i for i in n.inputs if i != found[0][0]]
                    if len(z) != 1 or _program_input(g, z[0]):
                        continue                # of the program's input: its int8 form is within 1.5 steps
                    reason = UNIT_REASON        # of a layer's output: fp32 (its int8 form: 5-15 steps)
                steps = between + [rec]
            else:
                den = rec.inputs[-1]                # rsqrt(d), reciprocal(d), c / d
                guard = _guard(g, observer, den)
                if guard is None or not _near_zero(observer, den):
                    continue
                steps = between + [rec, guard]
        if any(len(g.users(s.name)) != 1 or s.name in g.outputs for s in steps):
            continue                            # a step read elsewhere too: left as it is
        chain = {n.name} | {s.name for s in steps}
        last = steps[-1]
        stats: List[Node] = []
        while True:     # to a fixed point: a value joins once all its readers have (z read by z - m and m)
            start = [i for m in [n] + steps + stats for i in m.inputs if g.node(i).op != "constant"]
            more = _statistics(g, start, chain)
            if not more:
                break
            stats += more
        for s in [n] + steps + stats:
            _mark(g, observer, s, reason)
        if last.op == "elementwise" and last.attrs.get("fn") in _NORM_FACTORS:
            _norm_factor_in_float(g, observer, last, reason)
            units.add(n.name)
        log(f"{origin(n)}: {reason}")
    _unit_products(g, units, log)


def _program_input(g: Graph, name: str) -> bool:
    """name is a program input, seen through data moves."""
    n = g.node(name)
    while n.op in ("reshape", "permute", "slice", "cat") and len(set(n.inputs)) == 1:
        n = g.node(n.inputs[0])
    return n.op == "input"


def _unit_products(g: Graph, units: Set[str], log: Callable[[str], None]) -> None:
    """A matmul of two F.normalize outputs made fp32 above (each seen
    through a transpose / reshape that only it reads): the matmul and those
    moves in fp32 too (a cosine-similarity matrix)."""
    for n in [m for m in g.nodes if m.op in ("matmul", "bmm") and len(m.inputs) == 2 and not m.attrs.get("fp32")]:
        moves: List[Node] = []
        ok = True
        for i in n.inputs:
            m = g.node(i)
            while m.op in ("permute", "reshape") and len(m.inputs) == 1 and not m.attrs.get("fp32") \
                    and len(g.users(m.name)) == 1 and m.name not in g.outputs:
                moves.append(m)
                m = g.node(m.inputs[0])
            ok = ok and m.name in units
        if not ok:
            continue
        for m in moves + [n]:
            m.attrs["fp32"] = UNIT_REASON
        log(f"{origin(n)}: {UNIT_REASON} (the matmul of two unit vectors)")


def _norm_factor_in_float(g: Graph, observer, rec: Node, reason: str = REASON) -> None:
    """F.normalize's 1 / max(s ** (1 / p), eps) of a sum s >= 0 of |z| ** p
    as max(s, eps ** p) ** (-1 / p) on float32 kernels: a clamp, then
    rsqrt (p = 2), reciprocal (p = 1: also p = inf's maximum) or pow by a
    constant exponent (a floor of 1e-37 where eps ** p underflows float32)."""
    eps, p = float(rec.attrs.pop("eps")), float(rec.attrs.pop("p", 2.0))
    src = rec.inputs[0]
    lo = max(float(np.float32(eps ** p)), 1e-37)
    source = rec.attrs.get("source", rec.name)
    floor = Node(f"{rec.name}_floor", "clamp", [src], dict(lo=lo, hi=None, fp32=reason, source=source),
                 list(g.node(src).shape or rec.shape or []))
    g.nodes.insert(g.nodes.index(rec), floor)
    if src in observer.lo:
        a, b = observer.range(src)
        observer.lo[floor.name], observer.hi[floor.name] = max(a, lo), max(b, lo)
    rec.inputs = [floor.name]
    if p in (1.0, 2.0):
        rec.attrs["fn"] = "reciprocal" if p == 1.0 else "rsqrt"
        return
    e = _constant(g, observer, rec, f"{rec.name}__exponent", -1.0 / p)
    rec.op, rec.inputs = "binary_math", [floor.name, e]
    rec.attrs["fn"] = "pow"
