"""Max pools' return_indices and max_unpool (issue 15; capture's stand-ins).

A max pool called with return_indices=True (nn.MaxPool1d/2d/3d,
nn.AdaptiveMaxPool1d/2d/3d, nn.FractionalMaxPool2d/3d with fixed samples,
and their functional forms) gives a pair. Its values are the pool without
the indices (the nodes ptec already builds). Its indices are one
`window_argmax` node: every output's window listed as rows [start, end,
step] per spatial dim (`windows`, int32 [N' (1 or N), C' (1 or C),
sum of the output sizes, 3]), lowered to ptec::window_max.out into an
int64 tensor: the flat position of the first maximum of the window in
its input plane, torch's index. One table holds every kind of window:
a regular pool's (stride, padding: the first tap inside the input,
dilation: the step), an adaptive pool's (floor / ceil bounds) and a
fractional pool's (starts per channel, and per batch element when the
samples differ between elements). In int8 the positions are those of the
int8 codes, the same as the floats' wherever the input's quantization
keeps its order (equal floats stay equal, distinct ones distinct when
they are a step apart or more).

A `window_max` node is the values of such a table: the fractional pool
whose samples differ between batch elements (its regions are per
element, which the one-hot pick of fractional_max_pool.py, shared by the
batch, does not have). A max copies a byte: exact on the input's grid.

`max_unpool` (nn.MaxUnpool1d/2d/3d, F.max_unpool1d/2d/3d) of values and
their int64 indices: zeros with each value at its index, of the traced
output's size, lowered to ptec::max_unpool.out on the values' int8 grid
(whose zero is the zero point: exact) with every index checked against
the plane at run time."""
from __future__ import annotations

import copy
from typing import List, Optional

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from .fractional_max_pool import window_starts
from .ir import Node

MAX_POOLS = (nn.MaxPool1d, nn.MaxPool2d, nn.MaxPool3d)
ADAPTIVE = (nn.AdaptiveMaxPool1d, nn.AdaptiveMaxPool2d, nn.AdaptiveMaxPool3d)
FRACTIONAL = (nn.FractionalMaxPool2d, nn.FractionalMaxPool3d)
UNPOOLS = {F.max_unpool1d: 1, F.max_unpool2d: 2, F.max_unpool3d: 3}
# the functional forms torch's tracer records for return_indices=True
WITH_INDICES = {
    F.max_pool1d_with_indices: (nn.MaxPool1d, ("kernel_size", "stride", "padding", "dilation", "ceil_mode")),
    F.max_pool2d_with_indices: (nn.MaxPool2d, ("kernel_size", "stride", "padding", "dilation", "ceil_mode")),
    F.max_pool3d_with_indices: (nn.MaxPool3d, ("kernel_size", "stride", "padding", "dilation", "ceil_mode")),
    F.adaptive_max_pool1d_with_indices: (nn.AdaptiveMaxPool1d, ("output_size",)),
    F.adaptive_max_pool2d_with_indices: (nn.AdaptiveMaxPool2d, ("output_size",)),
    F.adaptive_max_pool3d_with_indices: (nn.AdaptiveMaxPool3d, ("output_size",)),
}


def spatial_of(m: nn.Module) -> int:
    name = type(m).__name__
    return 3 if name.endswith("3d") else 1 if name.endswith("1d") else 2


def _ints(v, k: int) -> List[int]:
    return [int(x) for x in v] if isinstance(v, (tuple, list)) else [int(v)] * k


def regular_rows(size: int, out: int, k: int, s: int, p: int, d: int) -> List[List[int]]:
    """torch's max-pool windows along one dim: output o reads o*s - p + j*d
    for j < k, those inside the input (the first tap moved past the
    padding by whole dilations, as ATen's loop)."""
    rows = []
    for o in range(out):
        start = o * s - p
        end = min(start + (k - 1) * d + 1, size)
        while start < 0:
            start += d
        rows.append([start, end, d])
    return rows


def adaptive_rows(size: int, out: int) -> List[List[int]]:
    return [[(o * size) // out, -((-(o + 1) * size) // out), 1] for o in range(out)]


def windows_of(m: nn.Module, in_shape, out_shape) -> np.ndarray:
    """The int32 windows table of pool m on [N, C, S...] giving [N, C, O...]."""
    k_dims = len(in_shape) - 2
    sizes, outs = [int(v) for v in in_shape[2:]], [int(v) for v in out_shape[2:]]
    if isinstance(m, MAX_POOLS):
        k = _ints(m.kernel_size, k_dims)
        s = _ints(m.stride if m.stride not in (None, [], ()) else m.kernel_size, k_dims)
        p, d = _ints(m.padding, k_dims), _ints(m.dilation, k_dims)
        rows = sum((regular_rows(sizes[i], outs[i], k[i], s[i], p[i], d[i]) for i in range(k_dims)), [])
        return np.asarray(rows, np.int32).reshape(1, 1, -1, 3)
    if isinstance(m, ADAPTIVE):
        rows = sum((adaptive_rows(sizes[i], outs[i]) for i in range(k_dims)), [])
        return np.asarray(rows, np.int32).reshape(1, 1, -1, 3)
    # fractional: starts from each plane's samples (2-D: [W, H], 3-D: [T, H, W])
    samples = m._random_samples.detach().cpu().numpy().astype(np.float32)
    k = _ints(m.kernel_size, k_dims)
    order = [0, 1, 2] if k_dims == 3 else [1, 0]
    table = np.zeros((samples.shape[0], samples.shape[1], sum(outs), 3), np.int32)
    for b in range(samples.shape[0]):
        for c in range(samples.shape[1]):
            rows = []
            for i in range(k_dims):
                rows += [[st, st + k[i], 1] for st in window_starts(samples[b, c, order[i]], sizes[i], outs[i], k[i])]
            table[b, c] = rows
    return table


def check_windows(what: str, table: np.ndarray, in_shape, out_shape, error) -> None:
    """Capture's own check of the table the kernel checks again at load: a
    window outside the input or empty is refused naming the layer."""
    sizes = np.repeat([int(v) for v in in_shape[2:]], [int(v) for v in out_shape[2:]])
    start, end, step = table[..., 0], table[..., 1], table[..., 2]
    if (start < 0).any() or (start >= end).any() or (end > sizes).any() or (step < 1).any():
        raise error(f"{what}: a pooling window lies outside the input {list(in_shape)}")


def check_batched(m: nn.Module, in_shape, what: str, error) -> None:
    if in_shape is None or len(in_shape) != 2 + spatial_of(m):
        raise error(f"{what}: return_indices needs a batched [N, C, ...] input "
                    f"of rank {2 + spatial_of(m)} (input {list(in_shape or [])})")


def window_node(name: str, op: str, m: nn.Module, x: str, in_shape, out_shape, what: str, error) -> Node:
    """window_argmax (the indices) or window_max (the values) of pool m."""
    check_batched(m, in_shape, what, error)
    if out_shape is None:
        raise error(f"{what}: needs a traced output")
    table = windows_of(m, in_shape, out_shape)
    check_windows(what, table, in_shape, out_shape, error)
    return Node(name, op, [x], dict(windows=table, out_shape=[int(v) for v in out_shape]))


def is_pool_with_indices(m: nn.Module) -> bool:
    return isinstance(m, MAX_POOLS + ADAPTIVE + FRACTIONAL) and bool(getattr(m, "return_indices", False)) \
        and not (isinstance(m, FRACTIONAL) and m._random_samples is None)


def without_indices(m: nn.Module) -> nn.Module:
    """The same pool returning its values alone."""
    v = copy.copy(m)
    v.return_indices = False
    return v


def module_of_call(fn: torch.fx.Node, arg) -> Optional[nn.Module]:
    """The pool module a functional *_with_indices call stands for (arg(i,
    key, default) reads its arguments), or None."""
    try:
        entry = WITH_INDICES.get(fn.target)
    except TypeError:
        return None
    if entry is None:
        return None
    cls, names = entry
    kw = {key: arg(i + 1, key, None) for i, key in enumerate(names)}
    kw = {key: v for key, v in kw.items() if v is not None}
    if any(isinstance(v, torch.fx.Node) for v in kw.values()):
        return None
    try:
        return cls(**kw, return_indices=True)
    except (TypeError, ValueError):
        return None


def unpool_default_shape(in_shape, spatial: int, kernel, stride=None, padding=0, output_size=None):
    """torch's output shape of max_unpool (F._unpool_output_size) without a
    traced value: (in - 1) * stride + kernel - 2 * padding per spatial dim,
    or output_size; None when an argument is not a constant."""
    def many(v):
        if isinstance(v, torch.fx.Node):
            return None
        v = list(v) if isinstance(v, (tuple, list, torch.Size)) else [v] * spatial
        return [int(e) for e in v] if all(isinstance(e, int) for e in v) else None
    if in_shape is None or len(in_shape) != 2 + spatial or kernel is None:
        return None
    k, st, pad = many(kernel), many(stride if stride is not None else kernel), many(padding)
    if None in (k, st, pad) or not len(k) == len(st) == len(pad) == spatial:
        return None
    if output_size is not None:
        size = many(output_size)
        return None if size is None or len(size) not in (spatial, spatial + 2) else \
            list(in_shape[:2]) + size[-spatial:]
    return list(in_shape[:2]) + [(int(i) - 1) * s_ + k_ - 2 * p_
                                 for i, s_, k_, p_ in zip(in_shape[2:], st, k, pad)]


def unpool_node(name: str, ins: List[str], out_shape, in_shape, spatial: int, what: str, error,
                default=None) -> Node:
    """max_unpool of values ins[0] by indices ins[1] to the traced output
    (default: torch's output shape when the model failed on its example
    before it, unpool_default_shape)."""
    out_shape = out_shape if out_shape is not None else default
    if len(ins) != 2 or out_shape is None or in_shape is None or len(out_shape) != 2 + spatial \
            or len(in_shape) != 2 + spatial:
        raise error(f"{what}: needs batched [N, C, ...] values and indices of rank {2 + spatial} "
                    f"(input {list(in_shape or [])})")
    return Node(name, "max_unpool", list(ins), dict(out_shape=[int(v) for v in out_shape]))


def unpool_spatial(m) -> Optional[int]:
    """Spatial dims of an nn.MaxUnpool module or an F.max_unpool function."""
    if isinstance(m, (nn.MaxUnpool1d, nn.MaxUnpool2d, nn.MaxUnpool3d)):
        return spatial_of(m)
    try:
        return UNPOOLS.get(m)
    except TypeError:
        return None


# -- the graph's float evaluation (ir.eval_node) ------------------------------

def eval_window(x: torch.Tensor, windows: np.ndarray, out_shape, indices: bool) -> torch.Tensor:
    """The maxima (or their positions, as float32) of the listed windows."""
    k_dims = x.dim() - 2
    outs = [int(v) for v in out_shape[2:]]
    offs = np.cumsum([0] + outs)[:-1]
    n_all, c_all = x.shape[:2]
    flat = x.reshape(n_all, c_all, -1)
    strides = [int(np.prod(x.shape[2 + i + 1:])) for i in range(k_dims)]
    y = torch.zeros([n_all, c_all] + outs, dtype=torch.float32)
    for b in range(windows.shape[0]):
        for c in range(windows.shape[1]):
            table = windows[b, c]
            for pos in np.ndindex(*outs):
                taps = np.zeros(1, np.int64)
                for i in range(k_dims):
                    start, end, step = (int(v) for v in table[offs[i] + pos[i]])
                    taps = (taps[:, None] + np.arange(start, end, step)[None, :] * strides[i]).reshape(-1)
                at = torch.as_tensor(taps)
                ns = slice(None) if windows.shape[0] == 1 else slice(b, b + 1)
                cs = slice(None) if windows.shape[1] == 1 else slice(c, c + 1)
                vals = flat[ns, cs][:, :, at]
                j = torch.argmax(vals, -1)            # the first maximum (the float oracle is torch's)
                y[(ns, cs) + pos] = at[j].float() if indices else torch.gather(vals, 2, j[..., None])[..., 0]
    return y


def eval_unpool(values: torch.Tensor, idx: torch.Tensor, out_shape) -> torch.Tensor:
    n, c = values.shape[:2]
    plane = int(np.prod(out_shape[2:]))
    if idx.numel() and (int(idx.max()) >= plane or int(idx.min()) < 0):
        bad = int(idx.max()) if int(idx.max()) >= plane else int(idx.min())
        # torch's own failure (its message), with the usual cause
        raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size "
                           f"{'x'.join(str(int(v)) for v in out_shape[2:])}): max_unpool's output is "
                           f"smaller than the pool's input (an odd size): give output_size=x.shape[2:]")
    y = torch.zeros(n, c, int(np.prod(out_shape[2:])), dtype=values.dtype)
    y.scatter_(2, idx.reshape(n, c, -1).long(), values.reshape(n, c, -1))
    return y.reshape([int(v) for v in out_shape])
