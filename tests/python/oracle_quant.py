"""A second computation of the integer parameters the compiler writes into a
.pte, from cortex-m-ops.md alone (§1.4 signs, §1.5 multipliers, §1.6
activation ranges, §3.3 add, §3.6 LUTs, §3.8 kernel sums, §3.9-3.10 weight
layouts, §3.15 softmax, §1.2 channels-last constants, §3.13 the windows of
an average pool that computes a mean).

It deliberately shares no helper with ptec.quant_math, ptec.pte.builders or
ptec.lower: multipliers are found with exact rational arithmetic instead of
frexp, ranges by searching the int8 grid instead of ceil/floor, LUTs from
torch's own functions. Only the .pte reader and the operator schema (argument
names) are shared, which is what a consumer of the file uses too."""
from __future__ import annotations

from fractions import Fraction
from typing import Dict, List, Tuple

import numpy as np
import torch

from ptec.interpreter import _scalar as scalar_value     # the file's scalar EValues, as read
from ptec.ops import SIGNATURES
from ptec.pte.schema import (NUMPY_DTYPE, Bool, Double, Int, IntList, KernelCall, Null, Program,
                             ScalarType, Tensor)

INT8_MIN, INT8_MAX = -128, 127
NHWC = (0, 2, 3, 1)


# -- reading calls out of a .pte ---------------------------------------------

class Const:
    """A constant tensor: its bytes in physical order, logical sizes, dim order."""
    def __init__(self, physical: np.ndarray, sizes: List[int], dim_order: Tuple[int, ...]):
        self.physical, self.sizes, self.dim_order = physical, sizes, dim_order


class Activation:
    def __init__(self, index: int, sizes: List[int], dim_order: Tuple[int, ...]):
        self.index, self.sizes, self.dim_order = index, sizes, dim_order


def _decode(program: Program, values, i: int):
    v = values[i].val
    if isinstance(v, (Int, Double, Bool, Null, IntList)):
        return scalar_value(values, i)
    if isinstance(v, Tensor):
        order = tuple(v.dim_order) if v.dim_order is not None else tuple(range(len(v.sizes)))
        if v.is_constant and v.nbytes:
            dt = np.dtype(NUMPY_DTYPE[ScalarType(v.scalar_type)])
            phys = np.frombuffer(program.constant_bytes(v), dt).reshape(
                [v.sizes[d] for d in order])
            return Const(phys, list(v.sizes), order)
        return Activation(i, list(v.sizes), order)
    return v


def kernel_calls(program: Program) -> List[Tuple[str, Dict[str, object]]]:
    """(operator key, {argument name: decoded value}) for every instruction."""
    plan = program.plan("forward")
    calls = []
    for ins in plan.chains[0].instructions:
        call = ins.instr_args
        assert isinstance(call, KernelCall)
        key = plan.operators[call.op_index].key
        names = [name for name, _ in SIGNATURES[key]]
        calls.append((key, {n: _decode(program, plan.values, a) for n, a in zip(names, call.args)}))
    return calls


# -- the spec's arithmetic ------------------------------------------------------

def multiplier_and_shift(sigma: float) -> Tuple[int, int]:
    """§1.5: sigma = M * 2^(shift - 31), M in [2^30, 2^31), M rounded half to
    even; found on the exact rational value of the double sigma."""
    if sigma == 0:
        return 0, 0
    exact = Fraction(sigma)
    exponent = 0
    while exact >= 1:
        exact /= 2
        exponent += 1
    while exact < Fraction(1, 2):
        exact *= 2
        exponent -= 1
    mantissa = round(exact * (1 << 31))          # Fraction rounds half to even
    if mantissa == 1 << 31:
        mantissa, exponent = 1 << 30, exponent + 1
    return int(mantissa), exponent


def requantization(sigma: float) -> Tuple[int, int]:
    """A layer's (M, shift); a scale whose shift falls below CMSIS-NN's -31
    moves no accumulator by half a step and is written as (0, 0)."""
    m, s = multiplier_and_shift(sigma)
    return (0, 0) if s < -31 else (m, s)


def clamp_range(act, scale: float, zp: int) -> Tuple[int, int]:
    """§1.6: a fused clamp [lo, hi] as the int8 codes q whose real value
    (q - zp) * scale lies in it (within a relative 1e-9 of a step)."""
    lo, hi = (None, None) if not act else act
    codes = np.arange(INT8_MIN, INT8_MAX + 1)
    real = (codes - zp) * float(scale)
    ok = np.ones(codes.shape, bool)
    if lo is not None and np.isfinite(lo):
        ok &= real >= lo - 1e-9 * scale
    if hi is not None and np.isfinite(hi):
        ok &= real <= hi + 1e-9 * scale
    return int(codes[ok].min()), int(codes[ok].max())


def code_of(value: float, scale: float, zp: int) -> int:
    """A float constant (a pad value) on the int8 grid: nearest code, ties to even."""
    q = np.round(np.float64(value) / np.float64(scale)) + zp
    return int(np.clip(q, INT8_MIN, INT8_MAX))


def lut_table(fn, in_scale: float, in_zp: int, out_scale: float, out_zp: int) -> np.ndarray:
    """§3.6: entry q + 128 is the output code of input code q, rounded half away from zero."""
    real_in = (np.arange(INT8_MIN, INT8_MAX + 1, dtype=np.float64) - in_zp) * in_scale
    y = np.asarray(fn(real_in), np.float64) / out_scale + out_zp
    y = np.where(y >= 0, np.floor(y + 0.5), -np.floor(-y + 0.5))
    return np.clip(y, INT8_MIN, INT8_MAX).astype(np.int8)


def torch_function(node):
    """The float function of an element-wise node, from torch itself."""
    f = torch.nn.functional
    a = node.attrs
    table = {
        "sigmoid": torch.sigmoid, "tanh": torch.tanh, "silu": f.silu,
        "gelu": lambda t: f.gelu(t, approximate=a.get("approximate", "none")),
        "hardswish": f.hardswish, "hardsigmoid": f.hardsigmoid,
        "leaky_relu": lambda t: f.leaky_relu(t, a.get("negative_slope", 0.01)),
        "elu": lambda t: f.elu(t, a.get("alpha", 1.0)),
    }
    fn = table[node.op]
    return lambda v: fn(torch.from_numpy(np.asarray(v, np.float64))).numpy()


def softmax_parameters(in_scale: float) -> Tuple[int, int, int]:
    """§3.15: (M, S) of min(s_in * 2^26, 2^31 - 1) and diff_min = -floor(31 * 2^26 / 2^S)."""
    m, s = multiplier_and_shift(min(in_scale * 2.0 ** 26, float(2 ** 31 - 1)))
    return m, s, -int(Fraction(31 * 2 ** 26, 2 ** s).__floor__())


def int8_code_of_tensor(value: np.ndarray, scale: float, zp: int) -> np.ndarray:
    """§3.1's float32 arithmetic: zp + nearbyint(float32(x * float32(1/scale)))."""
    inv = np.float32(np.float32(1.0) / np.float32(scale))
    prod = (np.asarray(value, np.float32) * inv).astype(np.float32)
    return np.clip(np.rint(prod).astype(np.int64) + zp, INT8_MIN, INT8_MAX).astype(np.int8)


def physical_pads(torch_pad, rank: int, channels_last: bool) -> Tuple[List[int], List[int]]:
    """§3.17: F.pad's (last_begin, last_end, prev_begin, ...) as pre/post
    lists of 4 entries in physical order, (N, H, W, C) for a channels-last 4-D
    tensor, else the logical dims right-aligned behind leading 1s."""
    pre, post = [0] * rank, [0] * rank
    pairs = [(int(torch_pad[i]), int(torch_pad[i + 1])) for i in range(0, len(torch_pad), 2)]
    for k, (before, after) in enumerate(pairs):
        pre[rank - 1 - k], post[rank - 1 - k] = before, after
    slots = [0, 2, 3, 1] if channels_last else list(range(rank))
    fill = [0] * (4 - rank)
    return fill + [pre[d] for d in slots], fill + [post[d] for d in slots]


def window_count(size: int, kernel: int, stride: int, pad: int) -> int:
    """How many pooling windows start inside [-pad, size + pad - kernel] (floor mode)."""
    return len(range(-pad, size + pad - kernel + 1, stride))


def transpose_conv_size(size: int, kernel: int, stride: int, pad: int, out_pad: int) -> int:
    """§3.11: one output row per position the scatter can reach, less the padding."""
    last_input_reach = (size - 1) * stride + (kernel - 1)
    return last_input_reach + 1 - 2 * pad + out_pad


# -- a mean as a whole-window average pool (§1.2 layouts, §3.13 windows) ---------

def physical_layout(rank: int) -> Tuple[int, ...]:
    """§1.2: a 4-D activation is stored channels-last, any other rank contiguous."""
    return NHWC if rank == 4 else tuple(range(rank))


def byte_positions(sizes, dim_order) -> np.ndarray:
    """The byte (element) position of every logical index of a tensor stored
    in `dim_order`: an array of the logical shape."""
    stored = np.arange(int(np.prod(sizes, dtype=np.int64))).reshape([sizes[d] for d in dim_order])
    return stored.transpose(np.argsort(dim_order))


def pool_output_size(size: int, kernel: int, stride: int, pad: int, ceil_mode: bool) -> int:
    """§3.13: floor((H + 2p - k) / s) + 1; in ceil mode one more when the
    division leaves a remainder, one fewer again if the last window would
    start at or past H + p."""
    span = size + 2 * pad - kernel
    out = span // stride + 1
    if ceil_mode:
        if span % stride:
            out += 1
        if (out - 1) * stride >= size + pad:
            out -= 1
    return out


def mean_as_pool_mismatch(in_sizes, dims, out_sizes, pool) -> str:
    """Why the avg-pool call `pool` (its arguments as read from the .pte) does
    not compute mean(dims) of a tensor of `in_sizes` into `out_sizes`, or ''.

    The pool reads the mean's input bytes under its own sizes and dim order
    and writes the mean's output bytes. Each output byte of the pool must
    then average, per §3.13 (window positions inside the input; their count K
    is the divisor), exactly the input bytes that PyTorch's mean averages into
    the output element stored at that byte, and K must be their number."""
    src, dst = pool["input"], pool["out"]
    rank = len(in_sizes)
    dims = sorted(d % rank for d in dims)
    if tuple(src.dim_order) != NHWC or tuple(dst.dim_order) != NHWC:
        return f"pool tensors not channels-last: {src.dim_order}, {dst.dim_order}"
    if np.prod(src.sizes) != np.prod(in_sizes) or np.prod(dst.sizes) != np.prod(out_sizes):
        return f"pool sizes {src.sizes} -> {dst.sizes} do not view {in_sizes} -> {out_sizes}"
    # what the mean asks: output byte -> the input bytes it averages
    in_bytes = byte_positions(in_sizes, physical_layout(rank))
    kept = [d for d in range(rank) if d not in dims]
    groups = in_bytes.transpose(kept + dims).reshape(-1, int(np.prod([in_sizes[d] for d in dims])))
    out_bytes = byte_positions(out_sizes, physical_layout(len(out_sizes))).reshape(-1)
    want = {int(b): sorted(g.tolist()) for b, g in zip(out_bytes, groups)}
    # what the pool computes, from its arguments alone
    kernel, stride, padding = pool["kernel_size"], pool["stride"], pool["padding"]
    n, c, h, w = src.sizes
    size = [pool_output_size(i, k, s, p, pool["ceil_mode"])
            for i, k, s, p in zip((h, w), kernel, stride, padding)]
    if list(dst.sizes) != [n, c] + size:
        return f"pool output {dst.sizes}, §3.13 gives {[n, c] + size} for {src.sizes}"
    src_bytes, dst_bytes = byte_positions(src.sizes, NHWC), byte_positions(dst.sizes, NHWC)
    for b, ch, oy, ox in np.ndindex(n, c, *size):
        rows = [y for y in range(oy * stride[0] - padding[0], oy * stride[0] - padding[0] + kernel[0])
                if 0 <= y < h]
        cols = [x for x in range(ox * stride[1] - padding[1], ox * stride[1] - padding[1] + kernel[1])
                if 0 <= x < w]
        got = sorted(int(src_bytes[b, ch, y, x]) for y in rows for x in cols)
        target = int(dst_bytes[b, ch, oy, ox])
        if len(got) != len(want[target]):       # K, §3.13's divisor
            return f"output byte {target} divides by {len(got)}, the mean by {len(want[target])}"
        if got != want[target]:
            return (f"output byte {target} averages input bytes {got[:6]}..., the mean "
                    f"{want[target][:6]}...")
    return ""
