"""Scratch the runtime's cortex_m kernels ask for in prepare (op->scratch_bytes),
per kernel ISA: the runtime's own scratch region, not the planned `scratch`
tensor argument that backends/cortex_m/scratch.py sizes for CMSIS-NN.

These are the C kernels' buffer-size rules (src/kernels/cortex_m/nn, the
*_buffer_size functions) written as formulas; ptec.requirements sums them.
tests/python/test_requirements.py holds them to what the runtime reports on
the host and on each board. Kernels not named here ask for none."""
from __future__ import annotations

from typing import Callable, Dict, Sequence

GEMM_COLUMNS = 2        # the gemm works on pixel pairs in both vector builds


def _a4(x: int) -> int:
    return (x + 3) // 4 * 4


def _gemm(isa: str, out_channels: int, k: int) -> int:
    """The vector gemm's scratch: int32 bases per output channel and two
    gathered columns; the DSP build also widens one column to int16 pairs."""
    n = 4 * out_channels + GEMM_COLUMNS * _a4(k)
    return n + 4 * k if isa == "DSP" else n


def conv2d(isa: str, input_sizes: Sequence[int], weight_sizes: Sequence[int]) -> int:
    cout, kh, kw, cin = weight_sizes
    if isa in ("MVE", "DSP"):
        return _gemm(isa, cout, kh * kw * cin)
    return 4 * cout                                  # per-channel bases


def depthwise_conv2d(isa: str, input_sizes: Sequence[int], weight_sizes: Sequence[int]) -> int:
    _, kh, kw, channels = weight_sizes
    in_channels = input_sizes[1]                     # NCHW sizes of an NHWC tensor
    if isa in ("MVE", "DSP") and in_channels == 1 and channels > 1:
        taps = kh * kw
        return _a4(taps * channels) + _gemm(isa, channels, taps)
    return 0


def expand_depthwise(isa: str, input_sizes: Sequence[int], weight_sizes: Sequence[int],
                     expand_sizes: Sequence[int], stride_h: int, dilation_h: int) -> int:
    """ptec::quantized_expand_depthwise: the window of expanded rows (four
    out rows' at stride 1, two otherwise, at most H rows of W * E bytes)
    after the larger of its two math calls' buffers, 16-byte aligned."""
    _, _, h, w = input_sizes                          # NCHW sizes of an NHWC tensor
    _, kh, kw, channels = weight_sizes
    if 0 in list(input_sizes) or channels == 0:
        return 0
    window = min(h, ((4 if stride_h == 1 else 2) - 1) * stride_h + dilation_h * (kh - 1) + 1)
    math = max(conv2d(isa, input_sizes, expand_sizes),
               depthwise_conv2d(isa, [1, channels, window, w], weight_sizes))
    return (math + 15) // 16 * 16 + window * w * channels


def svdf(isa: str, input_sizes: Sequence[int], weight_sizes: Sequence[int]) -> int:
    return 4 * weight_sizes[0]                       # one int32 per feature row


# kernel name -> (argument positions of input and weight, rule)
KERNEL_SCRATCH: Dict[str, tuple] = {
    "cortex_m::quantized_conv2d.out": ((0, 1), conv2d),
    "cortex_m::quantized_depthwise_conv2d.out": ((0, 1), depthwise_conv2d),
    "ptec::quantized_svdf.out": ((0, 1), svdf),
}


def kernel_scratch(isa: str, kernel: str, tensor_sizes: Callable[[int], Sequence[int]],
                   ints: Callable[[int], Sequence[int]] = lambda i: []) -> int:
    """Scratch bytes of one kernel call; tensor_sizes(i) gives argument i's
    sizes, ints(i) an int list argument's items."""
    if kernel == "ptec::quantized_expand_depthwise.out":   # input, weight, stride, dilation, expand_weight
        return expand_depthwise(isa, tensor_sizes(0), tensor_sizes(1), tensor_sizes(12), ints(3)[0], ints(5)[0])
    entry = KERNEL_SCRATCH.get(kernel)
    if entry is None:
        return 0
    (i_in, i_w), rule = entry
    return rule(isa, tensor_sizes(i_in), tensor_sizes(i_w))
