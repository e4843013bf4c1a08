"""A value multiplied by a constant mask (issue 15): the naive
selective scan `(exp(cs[:, :, None] - cs[:, None]) * tril(ones(T, T))).sum(2)`.

The positions the mask zeroes (there s > t, exp of a large positive
difference) never reach the product, but they set the value's calibrated
range: exp's int8 grid spanned [0, 28284] for kept values of at most 1, a
step of 111, and every kept value was one code (212 output steps off, a
tiny Mamba-style model 68, with --a16 too, in silence).

So such a value's grid covers only the positions the mask keeps: the
observer records the kept elements' range beside the whole one
(RangeObserver.kept) and the value takes it after calibration. A masked
position then holds whatever its grid clips it to, a finite code, times 0:
0, as torch's finite value times 0 is. Where torch's masked value is not
finite in a calibration sample (exp overflowing to inf, inf * 0 = NaN in
torch), the whole range stays and the existing non-finite handling takes
the value (nonfinite_in_fp32), since no int8 grid holds torch's NaN.

The same holds backward through position-wise steps whose one reader is
such a value (the exp's argument, the difference): their masked positions
only reach the mask's zeros too, so they take the kept range as well.

A value counts as masked when every reader multiplies it by a constant
holding a 0 (a 0/1 mask, or a mask times a number) broadcast to the
value's shape (not a smaller value the product broadcasts); its kept
positions are those where any reader's constant is not 0."""
from __future__ import annotations

from typing import Callable, Dict, Optional

import numpy as np

from .ir import UNARY, Graph, Node

# one output element from the same position of each same-shaped operand
_POSITIONWISE_UNARY = tuple(UNARY) + ("clamp",)
_POSITIONWISE_BINARY = ("add", "sub", "mul", "div")


def _zeroing_constant(g: Graph, name: str) -> Optional[np.ndarray]:
    """Where a constant is not 0, when it holds a 0 (a 0/1 mask, or one
    scaled: the product's other positions are the value's times it)."""
    c = g.node(name)
    if c.op != "constant" or "value" not in c.attrs:
        return None
    v = np.asarray(c.attrs["value"])
    if v.dtype.kind not in "fiub" or v.size == 0 or v.all():
        return None
    return v != 0


def _kept_by_reader(g: Graph, name: str, u: Node) -> Optional[np.ndarray]:
    """Where reader u keeps value `name`: u = name * k (either order), k a
    constant holding a 0, broadcast to the value's shape."""
    if u.op != "mul" or len(u.inputs) != 2 or name not in u.inputs or u.inputs[0] == u.inputs[1] \
            or u.attrs.get("act"):
        return None
    other = u.inputs[1] if u.inputs[0] == name else u.inputs[0]
    mask = _zeroing_constant(g, other)
    shape = g.node(name).shape
    if mask is None or shape is None or list(u.shape or []) != list(shape):
        return None
    try:
        return np.broadcast_to(mask, tuple(shape))
    except ValueError:
        return None


def masked_values(g: Graph) -> Dict[str, np.ndarray]:
    """{value name: where it is kept (bool, the value's shape)} for every
    value only ever read through a constant mask (a constant holding a 0), and the position-wise
    steps before one whose one reader it is (the module doc)."""
    kept: Dict[str, np.ndarray] = {}
    for n in g.nodes:
        if n.op == "constant" or n.name in g.outputs or n.shape is None:
            continue
        users = g.users(n.name)
        masks = [_kept_by_reader(g, n.name, u) for u in users]
        if users and all(m is not None for m in masks):
            kept[n.name] = np.logical_or.reduce(masks) if len(masks) > 1 else masks[0]
    todo = list(kept)
    while todo:
        name = todo.pop()
        n = g.node(name)
        if n.op in _POSITIONWISE_UNARY and not n.attrs.get("fp32"):
            operands = n.inputs[:1]
        elif n.op in _POSITIONWISE_BINARY and not n.attrs.get("fp32"):
            operands = n.inputs
        else:
            continue
        for i in operands:
            p = g.node(i)
            if i in kept or p.op in ("constant", "input") or i in g.outputs \
                    or list(p.shape or []) != list(n.shape) or [u.name for u in g.users(i)] != [name]:
                continue
            kept[i] = kept[name]
            todo.append(i)
    return kept


def watch_masked_values(g: Graph, observer) -> None:
    """Before calibration: the observer records each masked value's kept range too."""
    observer.kept = {k: v.reshape(-1) for k, v in masked_values(g).items()}


def kept_ranges(g: Graph, observer, log: Callable[[str], None] = lambda s: None) -> int:
    """After calibration: each masked value whose masked positions stayed
    finite takes its kept positions' range (the module doc). Returns how
    many did."""
    from .ir import origin
    done = 0
    for name in observer.kept:
        readers = g.users(name)
        if name not in observer.kept_lo or name in observer.infinite or name in observer.nan \
                or any(u.name in observer.nan or u.name in observer.infinite for u in readers):
            continue
        lo, hi = observer.range(name)
        observer.restrict(name)
        klo, khi = observer.range(name)
        if (klo, khi) != (lo, hi):
            done += 1
            n = g.node(name)
            if any(_kept_by_reader(g, name, u) is not None for u in readers):    # (once, not per step before it)
                log(f"{origin(n)}: multiplied by a constant mask, its grid spans the kept positions' "
                    f"range [{klo:.4g}, {khi:.4g}], not [{lo:.4g}, {hi:.4g}]")
    return done
