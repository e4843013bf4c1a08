"""Scratch the runtime's cortex_m kernels ask for in prepare (op->scratch_bytes),
per kernel ISA: the runtime's own scratch region, not the planned `scratch`
tensor argument that backends/cortex_m/scratch.py sizes for CMSIS-NN.

These are the C kernels' buffer-size rules (src/kernels/cortex_m/nn, the
*_buffer_size functions) written as formulas; ptec.requirements sums them.
tests/python/test_requirements.py holds them to what the runtime reports on
the host and on each board. Kernels not named here ask for none: among
them NO_SCRATCH, whose prepare sets a scratch size from a buffer-size
function that returns 0 on every ISA."""
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


def depthwise_conv2d_w4(isa: str, input_sizes: Sequence[int], weight_sizes: Sequence[int]) -> int:
    """ptec::quantized_depthwise_conv2d_w4: none for the reference; the
    vector builds unpack the KH * KW * C weights after the s8 depthwise's
    own scratch (4-byte aligned)."""
    if isa not in ("MVE", "DSP"):
        return 0
    _, kh, kw, channels = weight_sizes
    return _a4(depthwise_conv2d(isa, input_sizes, weight_sizes)) + kh * kw * channels


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


def _a16(x: int) -> int:
    return (x + 15) // 16 * 16


def _out_size(size: int, kernel: int, stride: int, padding: int, dilation: int) -> int:
    span = size + 2 * padding - dilation * (kernel - 1) - 1
    return -1 if span < 0 or stride <= 0 else span // stride + 1


DEPTHWISE_BLOCK_ROWS = 4        # out rows a depthwise in-place math call makes
POINTWISE_CHUNK_PIXELS = 32     # pixels a pointwise in-place math call makes
U32_MAX = (1 << 32) - 1


def depthwise_in_place_s8_buffer_size(isa: str, sizes: Sequence[int], weight_sizes: Sequence[int],
                                      stride: Sequence[int], padding: Sequence[int],
                                      dilation: Sequence[int]) -> int:
    """ptec_nn_depthwise_in_place_s8_buffer_size for an NHWC tensor of NCHW
    sizes `sizes` (input and out alike): the depthwise math's scratch for
    the widest window of input rows (2 * padding.h + a block), 16-byte
    aligned, then the out rows held back (a block and the padding.h rows
    before it, at most H) of W * C bytes; 0 if the layer cannot run in
    place, is empty, or a size passes 2^32 - 1."""
    n, c, h, w = sizes
    fn, kh, kw, fc = weight_sizes
    fits = (min(n, c, h, w) >= 0 and fn == 1 and kh >= 1 and kw >= 1 and fc == c and stride[0] == 1 and
            min(padding) >= 0 and min(dilation) >= 1 and
            _out_size(h, kh, 1, padding[0], dilation[0]) == h and
            _out_size(w, kw, stride[1], padding[1], dilation[1]) == w)
    if not fits or n * c * h * w == 0:
        return 0
    block = min(h, DEPTHWISE_BLOCK_ROWS)
    row, window = w * c, 2 * padding[0] + block
    if row > U32_MAX or window > (1 << 31) - 1:
        return 0
    total = _a16(depthwise_conv2d(isa, [1, c, window, w], weight_sizes)) + min(padding[0] + block, h) * row
    return 0 if total > U32_MAX else total


def pointwise_in_place_s8_buffer_size(isa: str, sizes: Sequence[int], weight_sizes: Sequence[int],
                                      stride: Sequence[int], padding: Sequence[int]) -> int:
    """ptec_nn_pointwise_in_place_s8_buffer_size: the 1x1 convolution's
    scratch, 16-byte aligned, then a chunk of at most 32 pixels of C bytes;
    0 if the layer cannot run in place or is empty."""
    n, c, h, w = sizes
    cout, kh, kw, cin = weight_sizes
    fits = (min(n, c, h, w) >= 0 and kh == 1 and kw == 1 and cout == c and cin >= 1 and c % cin == 0 and
            list(stride) == [1, 1] and list(padding) == [0, 0])
    if not fits or n * c * h * w == 0:
        return 0
    chunk = min(n * h * w, POINTWISE_CHUNK_PIXELS)
    total = _a16(conv2d(isa, [1, c, 1, chunk], weight_sizes)) + chunk * c
    return 0 if total > U32_MAX else total


def lstm_s8_buffer_size(hidden_size: int) -> int:
    """ptec_nn_lstm_s8_buffer_size: three int16 rows of hidden_size, on
    every ISA."""
    return 3 * hidden_size * 2 if hidden_size > 0 else 0


def lstm_s16_buffer_size(hidden_size: int) -> int:
    """ptec_nn_lstm_s16_buffer_size: the int8 kernel's three int16 rows."""
    return lstm_s8_buffer_size(hidden_size)


def random_fractional_pick(out_sizes: Sequence[int]) -> int:
    """ptec::random_fractional_pick (a portable kernel): one plane's window
    starts, an int32 per out position along each of three spatial slots
    (a 2-D pool's unused first slot holds 1)."""
    spatial = list(out_sizes[2:])
    return 4 * (sum(spatial) + (3 - len(spatial)))


def linalg_svd(self_sizes: Sequence[int]) -> int:
    """ptec::linalg_svd (a portable kernel): W (k x p), K (k x k), the
    p-side columns (p x p), values, norms and order (3 k), float32; k, p =
    min, max(m, n)."""
    m, n = self_sizes[-2], self_sizes[-1]
    k, p = min(m, n), max(m, n)
    return 4 * (k * p + k * k + p * p + 3 * k)


def linalg_qr(self_sizes: Sequence[int]) -> int:
    """ptec::linalg_qr (a portable kernel): the copy (m x n), v_0 and beta
    (2 min(m, n)), float32."""
    m, n = self_sizes[-2], self_sizes[-1]
    return 4 * (m * n + 2 * min(m, n))


def linalg_lu(self_sizes: Sequence[int]) -> int:
    """ptec::linalg_lu (a portable kernel): the copy (m x n) float32 and
    the pivots (min(m, n)) uint32."""
    m, n = self_sizes[-2], self_sizes[-1]
    return 4 * (m * n + min(m, n))


def linalg_eig_vectors(self_sizes: Sequence[int]) -> int:
    """ptec::linalg_eig_vectors.out (portable kernel): the values' working
    copy (n * n floats), the values and the scaled values (2 n each), the
    complex factors of A - mu I (2 n * n), the vector and its copy (2 n each)
    and the pivots (n uint32)."""
    n = self_sizes[-1]
    return 4 * (3 * n * n + 9 * n)


def linalg_svdvals(self_sizes: Sequence[int]) -> int:
    """ptec::linalg_svdvals, linalg_eigvalsh, linalg_eigh_vectors, linalg_eigvals, linalg_det,
    linalg_solve, linalg_ldl_factor and linalg_cholesky_info (portable kernels): a float32 copy of one
    matrix [m, n] of self, Jacobi's working matrix, the LU factors or the Cholesky factor."""
    return 4 * self_sizes[-2] * self_sizes[-1]


def nms(boxes_sizes: Sequence[int]) -> int:
    """ptec::nms.out (a portable kernel): one float32 area per box of boxes [K, 4]."""
    return 4 * boxes_sizes[0] if boxes_sizes else 0


def batched_nms(boxes_sizes: Sequence[int]) -> int:
    """ptec::batched_nms.out (a portable kernel): one float32 area and one
    uint32 kept box index per box of boxes [K, 4]."""
    return 8 * boxes_sizes[0] if boxes_sizes else 0


def mode_values(self_sizes: Sequence[int], dim: int) -> int:
    """aten::mode.values (a portable kernel): the positions of one row
    along dim, uint32 (a 0-d self is a row of one). median.dim_values and
    nanmedian.dim_values share its C file and ask none."""
    rank = max(len(self_sizes), 1)
    if not -rank <= dim < rank:
        return 0                                     # prepare refuses the dim
    return 4 * self_sizes[dim % rank] if self_sizes else 4


def svdf(isa: str, input_sizes: Sequence[int], weight_sizes: Sequence[int]) -> int:
    return 4 * weight_sizes[0]                       # one int32 per feature row


# kernel name -> (argument positions of input and weight, rule)
KERNEL_SCRATCH: Dict[str, tuple] = {
    "cortex_m::quantized_conv2d.out": ((0, 1), conv2d),
    "cortex_m::quantized_depthwise_conv2d.out": ((0, 1), depthwise_conv2d),
    "ptec::quantized_svdf.out": ((0, 1), svdf),
}


# ptec's conv2d and depthwise_conv2d (--ptec-runtime-only programs): the
# cortex_m rule, or more when input and out (argument 13 / 14) have the
# same shape and are both planned: the in-place buffer (cortex_m_in_place.c
# asks for it whether or not the two share bytes at run time).
PTEC_IN_PLACE_OUT = {"ptec::quantized_conv2d.out": 13, "ptec::quantized_depthwise_conv2d.out": 14}


def _ptec_conv(isa: str, kernel: str, tensor_sizes, ints, planned) -> int:
    i_out = PTEC_IN_PLACE_OUT[kernel]
    pointwise = kernel == "ptec::quantized_conv2d.out"
    sizes, weight = list(tensor_sizes(0)), list(tensor_sizes(1))
    base = (conv2d if pointwise else depthwise_conv2d)(isa, sizes, weight)
    if not (planned(0) and planned(i_out)) or list(tensor_sizes(i_out)) != sizes:
        return base
    stride, padding = ints(3), ints(4)              # then dilation: args 3, 4, 5 in both schemas
    in_place = pointwise_in_place_s8_buffer_size(isa, sizes, weight, stride, padding) if pointwise else \
        depthwise_in_place_s8_buffer_size(isa, sizes, weight, stride, padding, ints(5))
    return max(base, in_place)


# Prepare sets op->scratch_bytes, but the C function gives 0 on every ISA
# (ptec_nn_convolve_s16_, _transpose_conv_s8_, _avgpool_s8_ and
# _batch_matmul_s8_buffer_size): the scratch would be a new rule here.
NO_SCRATCH = frozenset({
    "ptec::quantized_conv2d_a16.out",
    "cortex_m::quantized_transpose_conv2d.out", "ptec::quantized_transpose_conv2d.out",
    "cortex_m::quantized_avg_pool2d.out", "ptec::quantized_avg_pool2d.out",
    "cortex_m::quantized_batch_matmul.out", "ptec::quantized_batch_matmul.out",
})

# Every kernel kernel_scratch() has a rule for.
RULED = frozenset(KERNEL_SCRATCH) | frozenset(PTEC_IN_PLACE_OUT) | frozenset({
    "ptec::quantized_expand_depthwise.out", "ptec::quantized_conv2d_w4.out", "ptec::quantized_lstm.out",
    "ptec::quantized_depthwise_conv2d_w4.out",
    "ptec::quantized_lstm_a16.out", "ptec::random_fractional_pick.out", "ptec::linalg_svdvals.out",
    "ptec::linalg_eigvalsh.out", "ptec::linalg_det.out", "ptec::linalg_solve.out", "ptec::linalg_eigh_vectors.out",
    "ptec::linalg_svd.out", "ptec::linalg_qr.out", "ptec::linalg_lu.out",
    "ptec::linalg_eigvals.out", "ptec::linalg_ldl_factor.out", "ptec::linalg_cholesky_info.out",
    "ptec::linalg_eig_vectors.out", "ptec::nms.out", "ptec::batched_nms.out", "ptec::nms.Tensor_out",
    "ptec::batched_nms.Tensor_out", "aten::mode.values",
    "aten::median.dim_values", "aten::nanmedian.dim_values"})


def kernel_scratch(isa: str, kernel: str, tensor_sizes: Callable[[int], Sequence[int]],
                   ints: Callable[[int], Sequence[int]] = lambda i: [],
                   planned: Callable[[int], bool] = lambda i: False,
                   int_arg: Callable[[int], int] = lambda i: 0) -> int:
    """Scratch bytes of one kernel call; tensor_sizes(i) gives argument i's
    sizes, ints(i) an int list argument's items, planned(i) whether tensor
    argument i lives in a planned buffer, int_arg(i) an int argument."""
    if kernel == "ptec::quantized_expand_depthwise.out":   # input, weight, stride, dilation, expand_weight
        return expand_depthwise(isa, tensor_sizes(0), tensor_sizes(1), tensor_sizes(12), ints(3)[0], ints(5)[0])
    if kernel in PTEC_IN_PLACE_OUT:
        return _ptec_conv(isa, kernel, tensor_sizes, ints, planned)
    if kernel == "ptec::quantized_conv2d_w4.out":          # the OHWI sizes are the int list weight_sizes
        return conv2d(isa, tensor_sizes(0), ints(2))
    if kernel == "ptec::quantized_depthwise_conv2d_w4.out":  # the IHWO sizes are the int list weight_sizes
        return depthwise_conv2d_w4(isa, tensor_sizes(0), ints(2))
    if kernel == "ptec::quantized_lstm.out":               # input_weights [4H, I]
        return lstm_s8_buffer_size(tensor_sizes(1)[0] // 4)
    if kernel == "ptec::quantized_lstm_a16.out":
        return lstm_s16_buffer_size(tensor_sizes(1)[0] // 4)
    if kernel == "ptec::random_fractional_pick.out":        # windows, kernel_size, seed, out
        return random_fractional_pick(tensor_sizes(3))
    if kernel in ("ptec::linalg_svdvals.out", "ptec::linalg_eigvalsh.out", "ptec::linalg_det.out",
                  "ptec::linalg_solve.out", "ptec::linalg_eigh_vectors.out",
                  "ptec::linalg_eigvals.out", "ptec::linalg_ldl_factor.out",
                  "ptec::linalg_cholesky_info.out"):                             # self first
        return linalg_svdvals(tensor_sizes(0))
    if kernel == "ptec::linalg_eig_vectors.out":            # self first
        return linalg_eig_vectors(tensor_sizes(0))
    if kernel == "ptec::linalg_svd.out":                    # self first
        return linalg_svd(tensor_sizes(0))
    if kernel == "ptec::linalg_qr.out":                     # self first
        return linalg_qr(tensor_sizes(0))
    if kernel == "ptec::linalg_lu.out":                     # self first
        return linalg_lu(tensor_sizes(0))
    if kernel in ("ptec::nms.out", "ptec::nms.Tensor_out"):  # boxes first
        return nms(tensor_sizes(0))
    if kernel in ("ptec::batched_nms.out", "ptec::batched_nms.Tensor_out"):  # boxes first
        return batched_nms(tensor_sizes(0))
    if kernel == "aten::mode.values":                       # self, dim
        return mode_values(tensor_sizes(0), int_arg(1))
    entry = KERNEL_SCRATCH.get(kernel)
    if entry is None:
        return 0
    (i_in, i_w), rule = entry
    return rule(isa, tensor_sizes(i_in), tensor_sizes(i_w))
