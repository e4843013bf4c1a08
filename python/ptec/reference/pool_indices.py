"""Reference numerics of ptec::window_max.out and ptec::max_unpool.out
(numpy, written from torch's definitions, not from the C kernels).

window_max: per (n, c) plane and output position, the maximum of the
window the table lists ([start, end, step] per spatial dim) and its flat
position in the input plane. np.ndarray.argmax over the window's elements
in row-major order gives the first maximum (and the first NaN: see
_first_max for torch's NaN rule, the last NaN).

max_unpool: zeros (the int8 zero code) with each value put at its flat
position; an index outside the plane raises ValueError."""
from __future__ import annotations

import numpy as np


def _first_max(vals: np.ndarray) -> int:
    """Position in vals of torch's pick: the last NaN if any, else the first maximum."""
    nan = np.flatnonzero(np.isnan(vals)) if vals.dtype.kind == "f" else np.zeros(0, np.int64)
    if nan.size:
        return int(nan[-1])
    return int(np.argmax(vals))


def window_max(x, windows, out_shape, indices: bool) -> np.ndarray:
    x = np.asarray(x)
    w = np.asarray(windows, np.int64)
    spatial = x.ndim - 2
    outs = [int(v) for v in out_shape[2:]]
    offs = np.cumsum([0] + outs)[:-1]
    n_all, c_all = x.shape[:2]
    y = np.zeros(list(x.shape[:2]) + outs, np.int64 if indices else x.dtype)
    for n in range(n_all):
        for c in range(c_all):
            table = w[n if w.shape[0] > 1 else 0, c if w.shape[1] > 1 else 0]
            plane = x[n, c]
            for pos in np.ndindex(*outs):
                axes = []
                for d in range(spatial):
                    start, end, step = table[offs[d] + pos[d]]
                    if not (0 <= start < end <= plane.shape[d]) or step < 1:
                        raise ValueError("a window is empty or outside self")
                    axes.append(np.arange(start, end, step))
                grid = np.ix_(*axes)
                flat = np.ravel_multi_index(tuple(np.broadcast_arrays(*grid)), plane.shape).reshape(-1)
                at = _first_max(plane[grid].reshape(-1))
                y[(n, c) + pos] = flat[at] if indices else plane.reshape(-1)[flat[at]]
    return y


def max_unpool(x, idx, zero_point: int, out_shape) -> np.ndarray:
    x, idx = np.asarray(x), np.asarray(idx, np.int64)
    n, c = x.shape[:2]
    plane = int(np.prod(out_shape[2:]))
    if idx.size and (idx.min() < 0 or idx.max() >= plane):
        raise ValueError("an index is outside the output plane")
    y = np.full((n, c, plane), zero_point, x.dtype)
    xs, ids = x.reshape(n, c, -1), idx.reshape(n, c, -1)
    for i in range(n):
        for j in range(c):
            for k in range(xs.shape[2]):            # in order: the later of two at one index wins
                y[i, j, ids[i, j, k]] = xs[i, j, k]
    return y.reshape([int(s) for s in out_shape])
