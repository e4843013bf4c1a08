"""F.interpolate modes ptec builds from int8 ops it has (capture's stand-ins):
mode "linear" on [N, C, L], and "nearest" and "trilinear" on [N, C, D, H, W].

Linear interpolation along one axis is a constant matrix A [out, in] with at
most two non-zero weights a row (lambda0, lambda1), so "linear" is a linear
layer without bias over the last dim: the two-tap sum is one int8
accumulator (8-bit weights even under --w4: attrs["resize_weights"]).
"trilinear" is separable: the same along W, then H, then D, each axis
brought last by a permute and the rest flattened so every linear sees a
[N, M, L] tensor. "nearest" picks input indices: H and W by
the 4-D nearest resize on [N, C * D, H, W], D by slices of dim 2 joined by
a cat, each a byte copy on the input's int8 grid.

The source indices follow torch's rules (ATen's UpSample.h) in float32:
scale = (in - 1) / (out - 1) with align_corners (0 when out is 1), else
1 / scale_factor when the call gave one and did not ask to recompute it,
else in / out; the linear source is scale * (dst + 0.5) - 0.5, at least 0
(scale * dst with align_corners), i0 its floor, i1 = i0 + 1 except at the
last input, lambda1 = src - i0; nearest is min(floor(dst * scale), in - 1).
"""
from __future__ import annotations

from typing import List, Optional, Sequence

import numpy as np

from .ir import Node


def _scale(n_in: int, n_out: int, align_corners: bool, factor: Optional[float]) -> np.float32:
    if align_corners:
        return np.float32((n_in - 1) / (n_out - 1)) if n_out > 1 else np.float32(0.0)
    if factor is not None and factor > 0:
        return np.float32(1.0 / factor)
    return np.float32(n_in) / np.float32(n_out)


def linear_matrix(n_in: int, n_out: int, align_corners: bool, factor: Optional[float]) -> np.ndarray:
    """[n_out, n_in] float32: row j holds torch's two linear weights for output j."""
    s = _scale(n_in, n_out, align_corners, factor)
    a = np.zeros((n_out, n_in), np.float32)
    for j in range(n_out):
        if align_corners:
            src = s * np.float32(j)
        else:
            src = max(s * (np.float32(j) + np.float32(0.5)) - np.float32(0.5), np.float32(0.0))
        i0 = int(src)
        i1 = i0 + 1 if i0 < n_in - 1 else i0
        l1 = np.float32(src - np.float32(i0))
        a[j, i0] += np.float32(1.0) - l1
        a[j, i1] += l1
    return a


def nearest_indices(n_in: int, n_out: int, factor: Optional[float]) -> List[int]:
    s = _scale(n_in, n_out, False, factor)
    return [min(int(np.floor(np.float32(j) * s)), n_in - 1) for j in range(n_out)]


def _factors(scale_factor, recompute, rank: int) -> List[Optional[float]]:
    """The scale factor of each spatial dim torch's kernel gets: none when
    the call gave a size or asked to recompute the factor."""
    if scale_factor is None or recompute:
        return [None] * rank
    if isinstance(scale_factor, (tuple, list)):
        return [float(f) for f in scale_factor]
    return [float(scale_factor)] * rank


def _along_last(name: str, x: str, shape: Sequence[int], a: np.ndarray) -> List[Node]:
    """A applied along the last dim of x (shape): a linear over [N, M, L]
    between reshapes; the last node is named `name`."""
    lead = int(np.prod(shape[1:-1])) if len(shape) > 2 else 1
    out_shape = list(shape[:-1]) + [int(a.shape[0])]
    return [Node(f"{name}_rows", "reshape", [x], dict(target_shape=[int(shape[0]), lead, int(shape[-1])])),
            Node(f"{name}_mix", "linear", [f"{name}_rows"], dict(weight=a, bias=None, resize_weights=True)),
            Node(name, "reshape", [f"{name}_mix"], dict(target_shape=out_shape))]


def interpolate_nodes(name: str, mode: str, align_corners, scale_factor, recompute, ins: List[str],
                      in_shape, out_shape) -> Optional[List[Node]]:
    """The nodes for the modes above (the last one named `name`), or None
    for any other mode or rank (the call stays what capture made of it)."""
    if in_shape is None or out_shape is None:
        return None
    rank = len(in_shape)
    x = ins[0]
    if mode == "linear" and rank == 3:
        a = linear_matrix(int(in_shape[2]), int(out_shape[2]), bool(align_corners),
                          _factors(scale_factor, recompute, 1)[0])
        return [Node(name, "linear", [x], dict(weight=a, bias=None, resize_weights=True))]
    if mode == "trilinear" and rank == 5:
        f = _factors(scale_factor, recompute, 3)
        n, c, d, h, w = (int(v) for v in in_shape)
        d2, h2, w2 = (int(v) for v in out_shape[2:])
        mats = [linear_matrix(i, o, bool(align_corners), s) for i, o, s in zip((d, h, w), (d2, h2, w2), f)]
        nodes = _along_last(f"{name}_w", x, [n, c, d, h, w], mats[2])
        # H last: [N, C * D, H, W'] -> [N, C * D, W', H]
        nodes += [Node(f"{name}_h_in", "reshape", [f"{name}_w"], dict(target_shape=[n, c * d, h, w2])),
                  Node(f"{name}_h_t", "permute", [f"{name}_h_in"], dict(dims=[0, 1, 3, 2]))]
        nodes += _along_last(f"{name}_h", f"{name}_h_t", [n, c * d, w2, h], mats[1])
        # D last: [N, C, D, H' * W'] -> [N, C, H' * W', D]
        nodes += [Node(f"{name}_h_back", "permute", [f"{name}_h"], dict(dims=[0, 1, 3, 2])),
                  Node(f"{name}_d_in", "reshape", [f"{name}_h_back"], dict(target_shape=[n, c, d, h2 * w2])),
                  Node(f"{name}_d_t", "permute", [f"{name}_d_in"], dict(dims=[0, 1, 3, 2]))]
        nodes += _along_last(f"{name}_d", f"{name}_d_t", [n, c, h2 * w2, d], mats[0])
        nodes += [Node(f"{name}_d_back", "permute", [f"{name}_d"], dict(dims=[0, 1, 3, 2])),
                  Node(name, "reshape", [f"{name}_d_back"], dict(target_shape=[n, c, d2, h2, w2]))]
        return nodes
    if mode == "nearest" and rank == 5 and not align_corners:
        f = _factors(scale_factor, recompute, 3)
        n, c, d, h, w = (int(v) for v in in_shape)
        d2, h2, w2 = (int(v) for v in out_shape[2:])
        if [nearest_indices(h, h2, f[1]), nearest_indices(w, w2, f[2])] != [
                nearest_indices(h, h2, None), nearest_indices(w, w2, None)]:
            return None     # the 4-D resize picks by in / out: a factor that picks otherwise is not taken
        nodes = [Node(f"{name}_planes", "reshape", [x], dict(target_shape=[n, c * d, h, w])),
                 Node(f"{name}_hw", "upsample_nearest", [f"{name}_planes"], dict(size=[h2, w2])),
                 Node(f"{name}_hw5", "reshape", [f"{name}_hw"], dict(target_shape=[n, c, d, h2, w2]))]
        picks = nearest_indices(d, d2, f[0])
        if picks == list(range(d)):
            nodes[-1].name = name
            return nodes
        for i in sorted(set(picks)):
            nodes.append(Node(f"{name}_d{i}", "slice", [f"{name}_hw5"], dict(dim=2, start=i, end=i + 1)))
        nodes.append(Node(name, "cat", [f"{name}_d{i}" for i in picks], dict(dim=2)))
        return nodes
    return None
