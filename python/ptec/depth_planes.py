"""What nn.Conv3d and nn.ConvTranspose3d's stand-ins (python/ptec/conv3d.py,
conv_transpose3d.py) share: a 3-D layer as one 2-D node per output depth.

Both read [N, C, D, H, W] as depth slices [N, C, H, W] (one slice and one
squeeze per input depth, made when first read and shared by every output
depth that reads it), join an output depth's slices along channels, run
one 2-D node over them, unsqueeze its result at dim 2 and join the output
depths along dim 2. Both take constant weights only, from the module or
from F.conv3d / F.conv_transpose3d's arguments.

A grouped 2-D node needs its input channels group by group, so with
groups G each read depth slice is cut into its G channel groups and the
slices are joined group-major (group 0 of every read depth, then group 1
...): group g's channels then sit tap-major, as the depth-tap weight has
them. A pad in H and W that the 2-D node cannot do itself (an edge mode,
or more at one end than the other) pads each depth slice once, before any
output depth reads it.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch

from .circular_pad import circular_pad_nodes
from .ir import Node


def triple(v) -> List[int]:
    return [int(v)] * 3 if isinstance(v, int) else [int(x) for x in v]


def zero_padding_only(what: str, m, error) -> None:
    if m.padding_mode != "zeros":
        raise error(f"{what}: padding_mode {m.padding_mode} is not supported")


def constant_weights(what: str, weight, bias, in_shape, error) -> Tuple[np.ndarray, Optional[np.ndarray]]:
    """The weight and bias as float32 arrays, once the layer is one these
    stand-ins take (a traced 5-D input); else `error` in one line."""
    if in_shape is None or len(in_shape) != 5:
        raise error(f"{what}: an input of shape {list(in_shape or [])} is not supported ([N, C, D, H, W] is: "
                    "add the batch dim)")
    w3 = torch.as_tensor(weight).detach().cpu().numpy().astype(np.float32)
    return w3, None if bias is None else torch.as_tensor(bias).detach().cpu().numpy().astype(np.float32)


def bind_constant_call(names: Sequence[str], defaults: Dict[str, object], args, kwargs,
                       constants) -> Optional[Tuple[str, object, object, Dict[str, object]]]:
    """A functional call's arguments bound to `names`: (input node name,
    weight value, bias value or None, all arguments), or None when the
    weight (or a given bias) is not a constant (`constants`: node name to
    value), so the call stays what it was."""
    bound = {**defaults, **dict(zip(names, args)), **kwargs}
    ref = [getattr(bound.get(k), "name", None) for k in ("input", "weight", "bias")]
    if ref[0] is None or ref[1] not in constants or (bound["bias"] is not None and ref[2] not in constants):
        return None
    return ref[0], constants[ref[1]], None if bound["bias"] is None else constants[ref[2]], bound


class DepthPlanes:
    """The nodes of one 3-D layer named `name` over node x, built plane by
    plane (see the module docstring); nodes() ends with the node `name`."""

    def __init__(self, name: str, x: str, out_depth: int, hw_pad: Optional[Dict[str, object]] = None,
                 slice_shape: Optional[Sequence[int]] = None, what: str = "", error=ValueError):
        """hw_pad: a pad node's attrs (F.pad order, [W lo, W hi, H lo, H hi])
        for every depth slice of shape slice_shape [N, C, H, W]; mode
        circular is the wrapped slices of python/ptec/circular_pad.py."""
        self.name, self.x, self.out_depth = name, x, out_depth
        self.hw_pad, self.slice_shape, self.what, self.error = hw_pad, slice_shape, what, error
        self._nodes: List[Node] = []
        self._sliced: Dict[int, str] = {}
        self._grouped: Dict[Tuple[int, int], str] = {}
        self._planes: List[str] = []

    def depth_slice(self, i: int) -> str:
        if i not in self._sliced:
            cut, flat = f"{self.name}_d{i}_slice", f"{self.name}_d{i}"
            self._nodes.append(Node(cut, "slice", [self.x], dict(dim=2, start=i, end=i + 1)))
            self._nodes.append(Node(flat, "reshape", [cut], dict(squeeze=2)))
            if self.hw_pad is not None:
                padded = f"{self.name}_d{i}_padded"
                if self.hw_pad["mode"] == "circular":
                    self._nodes.extend(circular_pad_nodes(padded, flat, self.hw_pad["pad"], self.slice_shape,
                                                          self.what, self.error))
                else:
                    self._nodes.append(Node(padded, "pad", [flat], dict(self.hw_pad)))
                flat = padded
            self._sliced[i] = flat
        return self._sliced[i]

    def group_slice(self, i: int, g: int, per: int) -> str:
        """Channels g * per .. (g + 1) * per of input depth i's slice."""
        if (i, g) not in self._grouped:
            cut = f"{self.name}_d{i}_g{g}"
            self._nodes.append(Node(cut, "slice", [self.depth_slice(i)], dict(dim=1, start=g * per,
                                                                              end=(g + 1) * per)))
            self._grouped[(i, g)] = cut
        return self._grouped[(i, g)]

    def plane(self, d: int, depths: Sequence[int], op: str, attrs: Dict[str, object],
              groups: int = 1, per_group: int = 0) -> None:
        """Output depth d: node `op` (attrs) over the slices of input
        `depths` joined along channels (group-major when groups > 1, each
        group per_group channels wide)."""
        if groups > 1 and len(depths) > 1:
            slices = [self.group_slice(i, g, per_group) for g in range(groups) for i in depths]
        else:
            slices = [self.depth_slice(i) for i in depths]
        if len(slices) == 1:
            joined = slices[0]
        else:
            joined = f"{self.name}_o{d}_in"
            self._nodes.append(Node(joined, "cat", slices, dict(dim=1)))
        conv = f"{self.name}_o{d}"
        self._nodes.append(Node(conv, op, [joined], attrs))
        plane = f"{self.name}_o{d}_5d" if self.out_depth > 1 else self.name
        self._nodes.append(Node(plane, "reshape", [conv], dict(unsqueeze=2)))
        self._planes.append(plane)

    def nodes(self) -> List[Node]:
        if self.out_depth > 1:
            return self._nodes + [Node(self.name, "cat", self._planes, dict(dim=2))]
        return self._nodes
