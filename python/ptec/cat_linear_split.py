"""A Linear reading a torch.cat along its input features whose parts span
very different ranges (issue 15, probe R4): `fc(torch.cat([x, x**2,
x**3], 1))`.

cat copies int8 bytes, so its parts share the cat's grid (quantize's
_shared_cat_qparams): x (+-3) got the step of x**3 (+-27), nine times its
own, and the layer read x to within a few codes (sigmoid(fc(cat)) 9 to 29
output steps, seeds 0..2). The same weights as a sum of linears, a(x) +
b(x**2) + c(x**3), keep each part on its own grid (3 to 8 steps).

So when the calibrated spans of the parts (max(hi, 0) - min(lo, 0), the
span an int8 grid covers) differ by SPREAD or more, the layer becomes that
sum: one linear per part with the weight's columns of that part (the bias
on the first only), added in order, the layer's fused activation on the
last add; the cat goes when nothing else reads it. Parts of similar spans
(a U-Net skip, an LSTM's [x, h]) keep the one layer: their program is
unchanged byte for byte.

The partial layers and sums need calibrated ranges of their own, so before
calibration shadow_cat_linears adds them to the graph unread (each a
candidate's), and after it split_wide_cat_linears either puts them in the
layer's place or removes them, leaving the graph as it was. Only a linear
(no 1x1 conv), its one input the cat, the cat read by it alone, neither
fp32-marked, of plain int8 weights."""
from __future__ import annotations

from typing import Callable, List

import numpy as np

from .ir import Graph, Node

# the widest part's span over the narrowest's from which each part keeps its own grid: at 4 the narrow
# part had a quarter of its steps or fewer on the shared grid
SPREAD = 4.0
SHADOWS = "cat_split_shadows"      # attrs key on a candidate linear: the names of its unread partial steps
_KEPT_ATTRS = ("weight", "bias", "act", "source", "written")


def _candidate(g: Graph, n: Node):
    """The cat a linear n reads along its features, else None."""
    if n.op != "linear" or len(n.inputs) != 1 or n.attrs.get("fp32") \
            or set(n.attrs) - set(_KEPT_ATTRS):
        return None
    w = n.attrs.get("weight")
    c = g.node(n.inputs[0])
    if w is None or np.ndim(w) != 2 or c.op != "cat" or c.attrs.get("fp32") or c.attrs.get("act") \
            or c.name in g.outputs or len(g.users(c.name)) != 1 or len(c.inputs) < 2 or not c.shape:
        return None
    dim = c.attrs.get("dim", 0)
    if not isinstance(dim, int) or dim % len(c.shape) != len(c.shape) - 1:
        return None
    widths = []
    for p in c.inputs:
        shape = g.node(p).shape
        if not shape or len(shape) != len(c.shape):
            return None
        widths.append(int(shape[-1]))
    if sum(widths) != np.shape(w)[1] or 0 in widths:
        return None
    return c, widths


def shadow_cat_linears(g: Graph) -> None:
    """Before calibration: each candidate's partial linears and their sums,
    read by nothing (module doc)."""
    for n in list(g.nodes):
        found = _candidate(g, n)
        if found is None:
            continue
        c, widths = found
        w, bias = np.asarray(n.attrs["weight"]), n.attrs.get("bias")
        made: List[Node] = []
        at, total = 0, None
        for i, (p, k) in enumerate(zip(c.inputs, widths)):
            attrs = dict(weight=np.ascontiguousarray(w[:, at:at + k]), bias=bias if i == 0 else None,
                         source=n.attrs.get("source"))
            at += k
            part = Node(f"{n.name}__part{i}", "linear", [p], attrs, list(n.shape or []) or None)
            made.append(part)
            if total is not None:
                made.append(Node(f"{n.name}__sum{i}", "add", [total, part.name], dict(source=n.attrs.get("source")),
                                 part.shape))
                total = made[-1].name
            else:
                total = part.name
        if n.attrs.get("act") is not None:        # the layer's fused activation, on the last add
            made[-1].attrs["act"] = n.attrs["act"]
        for m in made:
            m.written = getattr(n, "written", None)
        at = g.nodes.index(n) + 1
        g.nodes[at:at] = made
        n.attrs[SHADOWS] = [m.name for m in made]


def _span(observer, name: str) -> float:
    lo, hi = observer.range(name)
    return float(max(hi, 0.0) - min(lo, 0.0))


def split_wide_cat_linears(g: Graph, observer, log: Callable[[str], None] = lambda s: None) -> None:
    """After calibration: a candidate whose cat parts' spans differ by SPREAD
    or more becomes its shadows' sum; every other's shadows go (module doc)."""
    for n in [n for n in g.nodes if n.attrs.get(SHADOWS)]:
        shadows = n.attrs.pop(SHADOWS)
        c = g.node(n.inputs[0])
        spans = [_span(observer, p) for p in c.inputs]
        live = [s for s in spans if np.isfinite(s) and s > 0]
        wide = len(live) == len(spans) and max(live) >= SPREAD * min(live)
        if not wide:
            for name in shadows:
                g.remove(name)
            continue
        g.replace_uses(n.name, shadows[-1])       # the last add: the layer's value
        g.remove(n.name)
        if not g.users(c.name) and c.name not in g.outputs:
            g.remove(c.name)
        log(f"{n.attrs.get('source', n.name)}: its torch.cat's parts span ranges {max(live) / min(live):.1f} "
            f"times apart (calibration): one linear per part, summed, each part on its own int8 grid")
