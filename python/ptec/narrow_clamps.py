"""A narrow clamp's grid handed to its producer (a pass after calibration).

A clamp that prepare did not fuse into its producer (hardtanh, relu6 or
x.clamp(lo, hi) of a product, of a table's output, of a program input)
keeps its input's grid: quantize's PASS_THROUGH. When the clamp's range
is much narrower than that grid, the clamped values are rounded onto the
wide grid, half an input step each, many steps of the clamp's own range:
hardtanh(x * y, -0.3, 0.7) of a product over +-36 was 56 output steps
from torch, hardtanh(x, -0.3, 0.7) of a program input over +-5.6 5.2.

Here the producer, when the clamp (or a chain of clamps) alone reads it,
it is no program output and its grid is free (quantize.FREE_QPARAMS, or a
program input), is calibrated to the clamp's range instead of its own:
its int8 output saturates at that grid's ends, and the clamp, which keeps
its input's grid, passes the values on a grid of the clamp's width. Only
float32 values (the observer's dtypes), only clamps with both bounds,
and only where the clamp's range is under 1 / NARROWER of the producer's.
A producer read by anything else keeps its grid (the others need it)."""
from __future__ import annotations

from typing import List

import torch

from .ir import Graph

NARROWER = 4.0


def _free(n) -> bool:
    from .quantize import FREE_QPARAMS
    return (n.op in FREE_QPARAMS or n.op == "input") and not n.attrs.get("act") \
        and not n.attrs.get("fp32") and not n.attrs.get("dtype")


def narrow_clamp_producers(g: Graph, observer) -> List[str]:
    """Sets the observed range of each such producer (and of the clamps
    between it and the last clamp) to the clamps' range within its own;
    returns the producers' names."""
    done = []
    for n in g.nodes:
        if n.op != "clamp" or n.attrs.get("fp32") or not n.inputs:
            continue
        if any(u.op == "clamp" and [w.name for w in g.users(n.name)] == [u.name] and n.name not in g.outputs
               for u in g.users(n.name)):
            continue                      # the last clamp of a chain decides
        chain, p = [n], g.node(n.inputs[0])
        while p.op == "clamp" and [u.name for u in g.users(p.name)] == [chain[-1].name] and p.name not in g.outputs:
            chain.append(p)
            p = g.node(p.inputs[0])
        if (not _free(p) or p.name in g.outputs or [u.name for u in g.users(p.name)] != [chain[-1].name]
                or any(observer.dtypes.get(v.name) != torch.float32 or v.name not in observer.lo for v in chain + [p])):
            continue
        plo, phi = observer.range(p.name)
        lo, hi = plo, phi
        for c in chain:
            lo = lo if c.attrs.get("lo") is None else max(lo, float(c.attrs["lo"]))
            hi = hi if c.attrs.get("hi") is None else min(hi, float(c.attrs["hi"]))
        bounded = (any(c.attrs.get("lo") is not None for c in chain)
                   and any(c.attrs.get("hi") is not None for c in chain))
        if not bounded or not hi > lo:
            continue
        width = max(hi, 0.0) - min(lo, 0.0)
        if not width * NARROWER < max(phi, 0.0) - min(plo, 0.0):
            continue
        for v in [p] + chain[1:]:
            observer.lo[v.name], observer.hi[v.name] = lo, hi
        done.append(p.name)
    return done
