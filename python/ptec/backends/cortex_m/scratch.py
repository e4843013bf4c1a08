"""Scratch sizes of the cortex_m ops per target ISA (cortex-m-ops.md §1.7).

Each core's ISA is ptec.targets.ISA (cortex-m55 MVE, cortex-m33/m7/m4 DSP,
cortex-m3 the reference, as "scalar"). The runtime's kernels may
use up to the planned bytes and never more, so these sizes must be at least
what CMSIS-NN asks for on that target. The MVE 1xN convolution special case
(not given by the spec) uses the general MVE rule, which is larger."""
from __future__ import annotations

from ...targets import ISA

TARGETS = {**ISA, "scalar": "SCALAR"}


def isa(target: str) -> str:
    try:
        return TARGETS[target]
    except KeyError:
        raise ValueError(f"unknown target {target!r}; expected one of {sorted(TARGETS)}")


def _a4(x: int) -> int:
    return (x + 3) // 4 * 4


def _a16(x: int) -> int:
    return (x + 15) // 16 * 16


def conv2d_scratch(target, cin, kh, kw, stride, padding, dilation) -> int:
    if (kh, kw) == (1, 1) and tuple(padding) == (0, 0) and tuple(dilation) == (1, 1):
        return 0
    taps = kh * kw * cin
    if isa(target) == "MVE":
        return 4 * _a16(taps)
    return 4 * _a4(taps)


def depthwise_scratch(target, n, cin, cout, kh, kw, padding, dilation) -> int:
    mode = isa(target)
    ch_mult = cout // cin
    if ch_mult == 1 and n == 1 and tuple(dilation) == (1, 1):
        if mode == "MVE":
            return 4 * 124 * kh * kw
        if mode == "DSP" and not ((kh, kw) == (3, 3) and max(padding) <= 1):
            return 2 * cin * kh * kw
        return 0
    if mode == "MVE" and cin == 1 and cout > 1:
        return 4 * _a16(kh * kw * cin) + cout * kh * kw
    return 0


def avg_pool_scratch(target, channels) -> int:
    return 4 * channels if isa(target) == "DSP" else 0


def batch_matmul_scratch(target, n_cols) -> int:
    return 4 * n_cols if isa(target) == "MVE" else 0


def linear_uses_kernel_sum(target) -> bool:
    return isa(target) == "MVE"


def transpose_conv_scratch(target, cin, in_w, cout, kh, kw, stride):
    """(scratch, output_scratch) of quantized_transpose_conv2d. CMSIS-NN takes
    its "reverse conv" path (a convolution over the stride-dilated input with
    the flipped weights held in output_scratch) when both strides are <= 2 and
    Cin > 16; its scratch is then a convolution's im2col buffer. Otherwise it
    scatters into a rolling int32 buffer of max(KH, sh) output rows. CMSIS-NN
    sizes that row with max(KW, stride_h), too small when stride_w is larger
    (cortex-m-ops.md §3.11); ptec uses max(KW, sh, sw)."""
    sh, sw = stride
    if sh <= 2 and sw <= 2 and cin > 16:
        taps = kh * kw * cin
        conv = 4 * _a16(taps) if isa(target) == "MVE" else 4 * _a4(taps)
        return conv, cin * kh * kw * cout
    row = ((in_w - 1) * sw + max(kw, sh, sw)) * cout
    return 4 * row * max(kh, sh), 0


# The cortex_m operators that take a planned scratch argument for
# CMSIS-NN's buffer, with the ptec:: name of the same kernel that a
# --ptec-runtime-only program calls instead (its scratch argument empty:
# ptec's kernels take theirs from the runtime's scratch region, and upstream
# must refuse the program rather than write into an empty buffer).
RUNTIME_ONLY_NAMES = {f"cortex_m::{op}.out": f"ptec::{op}.out" for op in (
    "quantized_conv2d", "quantized_depthwise_conv2d", "quantized_transpose_conv2d",
    "quantized_batch_matmul", "quantized_avg_pool2d")}


def plan_for_ptec_runtime_only(builder, in_place: bool = False) -> None:
    """Make a ProgramBuilder emit --ptec-runtime-only programs; in_place
    (--in-place): with in-place layers too (ptec/pte/in_place.py)."""
    builder.renamed = dict(RUNTIME_ONLY_NAMES)
    builder.plan_scratch = False
    builder.in_place = in_place
