"""ptec's random kernels in numpy (ptec::random_dropout,
ptec::random_fractional_pick), written apart from the C kernels
(src/kernels/portable/op_random_*.c) so that their bytes can be compared
with these: the same PCG32 stream (O'Neill's generator, XSH-RR output,
pcg32_srandom_r seeding with one fixed stream), the same draw order, the
same float32 arithmetic. A Pcg32 is a kernel's prepared state: seeded once
(at load), it advances from one execute to the next."""
from __future__ import annotations

from typing import Sequence

import numpy as np

_MASK64 = (1 << 64) - 1
_MULT = 6364136223846793005
_STREAM = 0xDA3E39CB94B95BDB


class Pcg32:
    def __init__(self, seed: int, stream: int = _STREAM):
        """stream: PCG's stream selector (ptec's kernels use one fixed stream)."""
        self.inc = ((stream << 1) | 1) & _MASK64
        self.state = 0
        self.next_u32()
        self.state = (self.state + (seed & _MASK64)) & _MASK64
        self.next_u32()

    def next_u32(self) -> int:
        old = self.state
        self.state = (old * _MULT + self.inc) & _MASK64
        xorshifted = (((old >> 18) ^ old) >> 27) & 0xFFFFFFFF
        rot = old >> 59
        return ((xorshifted >> rot) | (xorshifted << ((-rot) & 31))) & 0xFFFFFFFF

    def next_float(self) -> np.float32:
        """[0, 1): the top 24 bits over 2^24, exact in float32."""
        return np.float32((self.next_u32() >> 8) / 16777216.0)


def random_dropout(x: np.ndarray, p: float, mask_dims: int, zero_point: int, rng: Pcg32) -> np.ndarray:
    """x logical (float32 or int8). One draw per element of the first
    mask_dims dims (row-major), shared by the rest; dropped when below p."""
    if not 0.0 <= p < 1.0 or not 0 <= mask_dims <= x.ndim:
        raise ValueError(f"random_dropout: p {p} or mask_dims {mask_dims} out of range")
    groups = int(np.prod(x.shape[:mask_dims], dtype=np.int64))
    inner = int(np.prod(x.shape[mask_dims:], dtype=np.int64))
    p32 = np.float32(p)
    drop = np.array([rng.next_float() < p32 for _ in range(groups if inner else 0)], bool)
    drop = np.repeat(drop, inner).reshape(x.shape)
    if x.dtype == np.int8:
        return np.where(drop, np.int8(zero_point), x).astype(np.int8)
    scale = np.float32(1.0) / np.float32(1.0 - p)
    noise = np.where(drop, np.float32(0.0), scale).astype(np.float32)
    return (x.astype(np.float32) * noise).astype(np.float32)


def _starts(u: np.float32, full: int, m: int) -> list:
    """ATen's fractional window starts along a dim whose windows number
    `full` (input n = full + k - 1), in float32."""
    starts = [full - 1] * m
    if m > 1:
        alpha = np.float32(full - 1) / np.float32(m - 1)
        base = int(np.float32(u * alpha))
        for i in range(m - 1):
            starts[i] = int(np.float32(np.float32(np.float32(i) + u) * alpha)) - base
    if any(not 0 <= s < full for s in starts):
        raise ValueError("random_fractional_pick: a window start outside the windows")
    return starts


def random_fractional_pick(windows: np.ndarray, kernel_size: Sequence[int], out_sizes: Sequence[int],
                           rng: Pcg32) -> np.ndarray:
    """windows logical [N, C, (T'), H', W']; out_sizes the output's. Per
    plane: its samples (2-D: [0] W, [1] H; 3-D: [0] T, [1] H, [2] W), the
    windows at torch's starts."""
    dims = windows.ndim - 2
    if dims not in (2, 3) or len(kernel_size) != dims or len(out_sizes) != windows.ndim:
        raise ValueError("random_fractional_pick: 4-D or 5-D windows and one kernel item a spatial dim")
    full = list(windows.shape[2:])
    m = [int(v) for v in out_sizes[2:]]
    if any(not 1 <= m[i] <= full[i] for i in range(dims)):
        raise ValueError("random_fractional_pick: an output size outside [1, windows' size]")
    out = np.empty(tuple(windows.shape[:2]) + tuple(m), windows.dtype)
    for n in range(windows.shape[0]):
        for c in range(windows.shape[1]):
            s = [rng.next_float() for _ in range(dims)]
            order = [0, 1, 2] if dims == 3 else [1, 0]      # sample index of each spatial dim
            idx = [_starts(s[order[i]], full[i], m[i]) for i in range(dims)]
            out[n, c] = windows[n, c][np.ix_(*idx)]
    return out
