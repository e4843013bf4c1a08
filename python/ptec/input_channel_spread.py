"""A model input whose channels have very different scales, normalized by
the model's first layer (probe finding 6): nn.BatchNorm1d / BatchNorm2d (or
any per-channel affine ptec folds into a depthwise 1x1 conv) reading the
input, e.g. features in the thousands next to features in the hundredths.

One int8 grid for the whole input (its step set by the widest channel)
leaves the narrow channels a few steps or none: their information is lost
before the layer that would have scaled them up, and the output is off by
tens of steps with no word of it. Written as (x - mu) / sd with buffers,
the same arithmetic falls back to fp32 and comes out right.

Here the per-channel affine that reads a program input (through reshapes
only) runs in fp32 (attrs["fp32"], the portable convolution) when the
calibration samples' per-channel ranges of that input differ by more than
SPREAD: the normalized values are quantized after it, on one grid that
suits them all. The compile log says so, with the ratio."""
from __future__ import annotations

from typing import Callable, Optional

import numpy as np

from .ir import Graph, Node

# the widest channel's range over the narrowest's above which the narrow one
# keeps fewer than 256 / SPREAD = 8 steps of the input's int8 grid
SPREAD = 32.0
REASON = ("its input's channels span ranges {ratio:.0f} times apart (calibration): one int8 grid would lose the "
          "narrow ones, so this per-channel normalization of the input runs in fp32 before quantizing")


def _affine_of_input(g: Graph, n: Node) -> Optional[int]:
    """The graph-input position an affine depthwise 1x1 conv2d n reads
    through reshapes only (with its channels at dim 1 of that input), else None."""
    if n.op != "conv2d" or not n.inputs:
        return None
    w = n.attrs.get("weight")
    groups = n.attrs.get("groups", 1)
    if w is None or np.ndim(w) != 4 or tuple(np.shape(w)[1:]) != (1, 1, 1) or groups != np.shape(w)[0]:
        return None
    src = g.node(n.inputs[0])
    while src.op == "reshape" and src.inputs:
        src = g.node(src.inputs[0])
    if src.op != "input":
        return None
    inputs = [m.name for m in g.nodes if m.op == "input"]
    return inputs.index(src.name) if src.name in inputs else None


def _channel_ranges(samples, position: int, channels: int) -> Optional[np.ndarray]:
    """max - min of each channel (dim 1) of input `position` over the samples."""
    lo = hi = None
    for sample in samples:
        x = np.asarray(sample[position].detach().numpy() if hasattr(sample[position], "detach")
                       else sample[position], np.float64)
        if x.ndim < 2 or x.shape[1] != channels:
            return None
        flat = np.moveaxis(x, 1, 0).reshape(channels, -1)
        a, b = flat.min(1), flat.max(1)
        lo = a if lo is None else np.minimum(lo, a)
        hi = b if hi is None else np.maximum(hi, b)
    return None if lo is None else hi - lo


def spread_inputs_in_fp32(g: Graph, calibration, log: Callable[[str], None] = lambda s: None,
                          int8_io: bool = False) -> None:
    """Marks each per-channel affine of a program input whose channels'
    calibration ranges differ by more than SPREAD to run in fp32 (module
    docstring). int8_io: the caller quantizes the input on one grid, so
    nothing runs before it: the log warns, with the ratio."""
    for n in g.nodes:
        position = _affine_of_input(g, n)
        if position is None or n.attrs.get("fp32"):
            continue
        ranges = _channel_ranges(calibration, position, int(np.shape(n.attrs["weight"])[0]))
        if ranges is None or not np.all(np.isfinite(ranges)):
            continue
        # a constant channel (range 0) needs no steps; the rest are compared
        live = ranges[ranges > 0]
        if live.size < 2:
            continue
        ratio = float(live.max() / live.min())
        if ratio > SPREAD and int8_io:
            log(f"warning: {n.attrs.get('source', n.name)}: its int8 input's channels span ranges {ratio:.0f} times "
                f"apart (calibration): one int8 grid loses the narrow ones (compile without --int8-io, or "
                f"normalize the input before it)")
        elif ratio > SPREAD:
            n.attrs["fp32"] = REASON.format(ratio=ratio)
            src = g.node(n.inputs[0])
            while src.op == "reshape":      # the input's views before it: float too (no int8 copy of the input)
                src.attrs["fp32"] = n.attrs["fp32"]
                src = g.node(src.inputs[0])
            log(f"{n.attrs.get('source', n.name)}: {n.attrs['fp32']}")
