"""Integer parameters of the cortex_m ops, computed ahead of time
(cortex-m-ops.md §1.4, §1.5, §3.15)."""
from __future__ import annotations

import math
from typing import Tuple

import numpy as np

QMIN, QMAX = -128, 127


def quantize_multiplier(sigma: float) -> Tuple[int, int]:
    """(M, shift) with sigma ~= M * 2**(shift - 31); M in [2^30, 2^31-1]."""
    if sigma == 0:
        return 0, 0
    m, e = math.frexp(sigma)
    mult = round(m * (1 << 31))          # Python round(): half to even
    if mult == 1 << 31:
        mult, e = 1 << 30, e + 1
    return int(mult), int(e)


def requant_multiplier(sigma: float) -> Tuple[int, int]:
    """quantize_multiplier for a layer's requantization. A scale so small that
    its shift would fall below CMSIS-NN's -31 cannot move an int32
    accumulator by even half a step, so it becomes (0, 0): output = offset."""
    mult, shift = quantize_multiplier(sigma)
    if shift < -31:
        return 0, 0
    return mult, shift


def per_channel_multipliers(sigmas) -> Tuple[np.ndarray, np.ndarray]:
    pairs = [requant_multiplier(float(s)) for s in np.asarray(sigmas, np.float64).ravel()]
    return (np.array([p[0] for p in pairs], np.int32), np.array([p[1] for p in pairs], np.int32))


def check_shift(shift: int, what: str) -> None:
    """CMSIS-NN's range for a layer's shift, [-31, 30] (check_requant_shifts
    below is the runtime's load-time rule for any call's shift arguments)."""
    if not -31 <= shift <= 30:
        raise ValueError(f"{what}: requantization shift {shift} outside [-31, 30] "
                         "(scale ratio too small or too large for CMSIS-NN)")


# the scalar / list requantization shifts the runtime's cortex_m argument checks hold to [-31, 31]
# (cortex_m_args.c ptec_cm_get_shift): a program with any other is rejected at load
_REQUANT_SHIFTS = {"self_shift", "other_shift", "output_shift", "feature_shift", "forget_to_cell_shift",
                   "input_to_cell_shift", "requantize_shifts"}


def check_requant_shifts(key: str, kwargs: dict, source=None) -> None:
    """The AOT side of the runtime's check (kwargs: the call's int and int[]
    arguments; a Tensor of per-channel shifts is a value index here, made by
    per_channel_multipliers): a call whose requantization shift
    falls outside [-31, 31] (a degenerate scale ratio) is refused here, in
    one line naming the call, instead of writing a program ptec-run rejects."""
    for name in _REQUANT_SHIFTS & set(kwargs):
        v = kwargs[name]
        values = [v] if isinstance(v, (int, np.integer)) else list(v) if isinstance(v, (list, tuple)) else []
        bad = [int(x) for x in values if not -31 <= int(x) <= 31]
        if bad:
            # the user's layer first, in words (the kernel's name only without one: a TFLite import's call)
            where = f"{source[0]}: " if source else f"{key}: "
            raise ValueError(f"{where}the int8 grids of its operands and result are too far apart for an int8 "
                             f"kernel (a requantization shift of {bad[0]}, outside [-31, 31]): a value with a "
                             "(near) zero range on the calibration inputs, or whose range one extreme sets (a "
                             "reciprocal of an all-zero row); calibrate on inputs on which it varies, or compute "
                             "the model without that value")


def add_params(s1: float, s2: float, s_out: float):
    """(M1,S1), (M2,S2), (Mo,So) for quantized_add with its fixed left shift 20."""
    m = 2.0 * max(s1, s2)
    return (requant_multiplier(s1 / m), requant_multiplier(s2 / m),
            requant_multiplier(m / (s_out * (1 << 20))))


def softmax_params(s_in: float) -> Tuple[int, int, int]:
    """(input_multiplier, input_shift, diff_min) for cortex_m::softmax."""
    mult, shift = quantize_multiplier(min(s_in * (1 << 26), float((1 << 31) - 1)))
    diff_min = -math.floor(31 * (1 << 26) / (2.0 ** shift))
    return mult, shift, int(diff_min)


SOFTMAX_OUTPUT_SCALE = 1.0 / 256.0
SOFTMAX_OUTPUT_ZERO_POINT = -128
SOFTMAX16_OUTPUT_SCALE = 1.0 / 32768.0     # int16 softmax (--a16): zero point 0


def quantize_to_int8(values, scale: float, zp: int) -> np.ndarray:
    """Float values to int8 on the grid (scale, zp) with the numerics the
    runtime's cortex_m::quantize_per_tensor has (cortex-m-ops.md §3.1): the
    reciprocal of the scale and its product with x both in float32, the
    product rounded half to even, the zero point added and the sum saturated
    (in int64, so huge values saturate); NaN maps to the zero point."""
    x = np.asarray(values, np.float32)
    reciprocal = np.float32(1.0) / np.float32(scale)
    with np.errstate(over="ignore", invalid="ignore"):
        steps = np.rint(np.multiply(x, reciprocal, dtype=np.float32))
    steps = np.nan_to_num(steps.astype(np.float64), nan=0.0, posinf=2.0 ** 40, neginf=-2.0 ** 40)
    q = np.clip(steps, -2.0 ** 40, 2.0 ** 40).astype(np.int64) + int(zp)
    return np.clip(q, QMIN, QMAX).astype(np.int8)


def quantize_value(v: float, scale: float, zp: int) -> int:
    """Float to int8 the way the AOT maps constants such as pad values."""
    return int(min(QMAX, max(QMIN, round(v / scale + zp))))


def activation_range(lo: float, hi: float, scale: float, zp: int) -> Tuple[int, int]:
    """Clamp bounds of a fused activation in the output's quantized domain."""
    qlo = QMIN if lo is None or lo == -math.inf else max(QMIN, math.ceil(lo / scale - 1e-9) + zp)
    qhi = QMAX if hi is None or hi == math.inf else min(QMAX, math.floor(hi / scale + 1e-9) + zp)
    return int(qlo), int(qhi)
