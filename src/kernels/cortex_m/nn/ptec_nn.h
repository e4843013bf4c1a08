/* The cortex_m int8 math layer: CMSIS-NN numerics on raw pointers.
 *
 * Every function here is one operation on plain arrays described by small
 * parameter structs. It knows nothing about EValues or the runtime; the
 * operator wrappers in ../op_*.c translate .pte arguments into these
 * structs at prepare time. Activations are NHWC int8; weights are in the
 * physical orders of cortex-m-ops.md §1.3.
 *
 * Each function checks only what it cannot work without (NULL pointers,
 * a scratch buffer smaller than its *_buffer_size()). Shapes and
 * parameter ranges are validated once by the wrappers at prepare time,
 * next to the .pte decoding, so that run-time calls stay cheap.
 *
 * The files in this folder are the portable C reference. DSP and Helium
 * variants (*_dsp.c, *_mve.c, chosen at compile time by ptec_nn_isa.h)
 * take over some shapes inside these functions; they are bit-exact with
 * the reference and state their larger scratch through the same
 * *_buffer_size() calls (docs/kernels.md). */
#ifndef PTEC_NN_H
#define PTEC_NN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ptec/status.h"

/* A temporary work area. buf may be NULL when size is 0. Contents are
 * undefined on entry and are not kept. */
typedef struct ptec_nn_buffer {
    void *buf;
    uint32_t size;
} ptec_nn_buffer;

typedef struct ptec_nn_dims { /* NHWC, or (batches, ..., features) */
    int32_t n, h, w, c;
} ptec_nn_dims;

typedef struct ptec_nn_hw {
    int32_t h, w;
} ptec_nn_hw;

/* Output clamp in the output's quantized domain. */
typedef struct ptec_nn_activation {
    int32_t min, max;
} ptec_nn_activation;

/* One (multiplier, shift) pair: the real value multiplier * 2^(shift-31). */
typedef struct ptec_nn_quant {
    int32_t multiplier, shift;
} ptec_nn_quant;

/* Per-output-channel pairs, `channels` entries each. */
typedef struct ptec_nn_per_channel_quant {
    const int32_t *multipliers;
    const int32_t *shifts;
} ptec_nn_per_channel_quant;

/* ---- quantize / dequantize (float32 <-> int8/int16, §3.1, §3.2) ---- */

typedef struct ptec_nn_quantize_params {
    float scale; /* already narrowed to float, as upstream does */
    int32_t zero_point;
    int32_t quant_min, quant_max;
} ptec_nn_quantize_params;

ptec_status ptec_nn_quantize_f32_s8(const float *input, int8_t *output, uint32_t count,
                                    const ptec_nn_quantize_params *params);
ptec_status ptec_nn_quantize_f32_s16(const float *input, int16_t *output, uint32_t count,
                                     const ptec_nn_quantize_params *params);
ptec_status ptec_nn_dequantize_s8_f32(const int8_t *input, float *output, uint32_t count,
                                      const ptec_nn_quantize_params *params);
ptec_status ptec_nn_dequantize_s16_f32(const int16_t *input, float *output, uint32_t count,
                                       const ptec_nn_quantize_params *params);

/* ---- element-wise add and mul with channel broadcast (§3.3, §3.4) ----
 * `large` has `count` elements. `small` has `small_count` elements, either
 * count (element-wise) or a divisor of count that is repeated along the
 * innermost dimension (the channel broadcast of a [1,C,1,1] operand). */

typedef struct ptec_nn_add_params {
    int32_t large_offset, small_offset; /* -zero_point of each input */
    ptec_nn_quant large_quant, small_quant;
    int32_t left_shift;                 /* 20 for cortex_m::quantized_add */
    int32_t output_offset;
    ptec_nn_quant output_quant;
    ptec_nn_activation activation;
} ptec_nn_add_params;

ptec_status ptec_nn_add_s8(const int8_t *large, const int8_t *small, uint32_t count,
                           uint32_t small_count, int8_t *output, const ptec_nn_add_params *params);

typedef struct ptec_nn_mul_params {
    int32_t large_offset, small_offset; /* -zero_point of each input */
    int32_t output_offset;
    ptec_nn_quant output_quant;
    ptec_nn_activation activation;
} ptec_nn_mul_params;

ptec_status ptec_nn_mul_s8(const int8_t *large, const int8_t *small, uint32_t count,
                           uint32_t small_count, int8_t *output, const ptec_nn_mul_params *params);

/* ---- div (float32 arithmetic, §3.5), same shapes only ---- */

typedef struct ptec_nn_div_params {
    int32_t numerator_zero_point, denominator_zero_point, output_zero_point;
    float output_scale; /* s1 / (s2 * s_out), finite */
} ptec_nn_div_params;

ptec_status ptec_nn_div_s8(const int8_t *numerator, const int8_t *denominator, int8_t *output,
                           uint32_t count, const ptec_nn_div_params *params);
ptec_status ptec_nn_div_s16(const int16_t *numerator, const int16_t *denominator,
                            int16_t *output, uint32_t count, const ptec_nn_div_params *params);

/* ---- 256-entry lookup table (sigmoid, tanh, ...; §3.6) ---- */

ptec_status ptec_nn_lut_s8(const int8_t *input, const int8_t lut[256], int8_t *output,
                           uint32_t count);

/* ---- minimum / maximum with NumPy broadcasting over 4 dims (§3.7) ----
 * Each dims array is 4 sizes, outermost first, right-aligned with leading
 * 1s. An input size must equal the output size or be 1. */

ptec_status ptec_nn_minimum_s8(const int8_t *a, const int32_t a_dims[4], const int8_t *b,
                               const int32_t b_dims[4], int8_t *output,
                               const int32_t out_dims[4]);
ptec_status ptec_nn_maximum_s8(const int8_t *a, const int32_t a_dims[4], const int8_t *b,
                               const int32_t b_dims[4], int8_t *output,
                               const int32_t out_dims[4]);

/* ---- fully connected (§3.8) ----
 * With kernel_sum != NULL the bias form is replaced by
 * acc = kernel_sum[o] + sum x*(w+filter_offset) (input_offset folded in). */

typedef struct ptec_nn_fc_params {
    int32_t input_offset, filter_offset, output_offset;
    ptec_nn_quant quant;
    ptec_nn_activation activation;
} ptec_nn_fc_params;

typedef struct ptec_nn_fc_dims {
    int32_t batches, input_features, output_features;
} ptec_nn_fc_dims;

ptec_status ptec_nn_fully_connected_s8(const ptec_nn_fc_params *params, const ptec_nn_fc_dims *dims,
                                       const int8_t *input, const int8_t *weights,
                                       const int32_t *bias, const int32_t *kernel_sum,
                                       int8_t *output);

/* The same with packed 4-bit weights (ptec_nn_s4.h, docs/kernels.md):
 * weights [out, in] two per byte, filter_offset must be 0, no kernel_sum. */
ptec_status ptec_nn_fully_connected_s4(const ptec_nn_fc_params *params, const ptec_nn_fc_dims *dims,
                                       const int8_t *input, const int8_t *weights, const int32_t *bias,
                                       int8_t *output);

/* ---- convolutions (§3.9 - §3.11) ---- */

typedef struct ptec_nn_conv_params {
    ptec_nn_hw stride, padding, dilation;
    int32_t input_offset, output_offset;
    ptec_nn_activation activation;
} ptec_nn_conv_params;

/* Grouped convolution: groups = input_dims.c / filter_dims.c.
 * filter_dims = (Cout, KH, KW, Cin/groups), OHWI. bias may be NULL. */
uint32_t ptec_nn_convolve_s8_buffer_size(const ptec_nn_dims *input_dims,
                                         const ptec_nn_dims *filter_dims);
ptec_status ptec_nn_convolve_s8(ptec_nn_buffer scratch, const ptec_nn_conv_params *params,
                                const ptec_nn_per_channel_quant *quant,
                                const ptec_nn_dims *input_dims, const int8_t *input,
                                const ptec_nn_dims *filter_dims, const int8_t *filter,
                                const int32_t *bias, const ptec_nn_dims *output_dims,
                                int8_t *output);

/* The same with packed 4-bit weights (ptec_nn_s4.h): filter_dims as
 * above, the filter ceil(Cout * KH * KW * Cin/groups / 2) bytes. The
 * scratch is exactly ptec_nn_convolve_s8_buffer_size's, on every build. */
uint32_t ptec_nn_convolve_s4_buffer_size(const ptec_nn_dims *input_dims,
                                         const ptec_nn_dims *filter_dims);
ptec_status ptec_nn_convolve_s4(ptec_nn_buffer scratch, const ptec_nn_conv_params *params,
                                const ptec_nn_per_channel_quant *quant,
                                const ptec_nn_dims *input_dims, const int8_t *input,
                                const ptec_nn_dims *filter_dims, const int8_t *filter,
                                const int32_t *bias, const ptec_nn_dims *output_dims,
                                int8_t *output);

/* filter_dims = (1, KH, KW, Cout), IHWO, Cout = Cin * depth_multiplier. */
uint32_t ptec_nn_depthwise_conv_s8_buffer_size(const ptec_nn_dims *input_dims,
                                               const ptec_nn_dims *filter_dims);
ptec_status ptec_nn_depthwise_conv_s8(ptec_nn_buffer scratch, const ptec_nn_conv_params *params,
                                      int32_t depth_multiplier,
                                      const ptec_nn_per_channel_quant *quant,
                                      const ptec_nn_dims *input_dims, const int8_t *input,
                                      const ptec_nn_dims *filter_dims, const int8_t *filter,
                                      const int32_t *bias, const ptec_nn_dims *output_dims,
                                      int8_t *output);

/* The same with packed 4-bit weights (ptec_nn_depthwise_conv_s4.c): the
 * IHWO filter flattened and packed two per byte, ceil(KH * KW * Cout / 2)
 * bytes. Scratch: none for the reference; the DSP and Helium builds
 * unpack the filter into it, after the s8 depthwise's own scratch. */
uint32_t ptec_nn_depthwise_conv_s4_buffer_size(const ptec_nn_dims *input_dims,
                                               const ptec_nn_dims *filter_dims);
ptec_status ptec_nn_depthwise_conv_s4(ptec_nn_buffer scratch, const ptec_nn_conv_params *params,
                                      int32_t depth_multiplier,
                                      const ptec_nn_per_channel_quant *quant,
                                      const ptec_nn_dims *input_dims, const int8_t *input,
                                      const ptec_nn_dims *filter_dims, const int8_t *filter,
                                      const int32_t *bias, const ptec_nn_dims *output_dims,
                                      int8_t *output);

/* In place: input and output are the same `data` of `dims`
 * (ptec_nn_in_place_s8.c), bit-exact with the out-of-place calls.
 * Depthwise: filter (1, KH, KW, C), stride 1 along H, out dims == dims.
 * Pointwise: filter (C, 1, 1, C/groups), stride 1, no padding. *_fits says
 * whether the geometry allows it; the buffer sizes are 0 when it does not
 * (or for no elements, or more than 2^32 - 1 bytes). */
bool ptec_nn_depthwise_in_place_fits(const ptec_nn_conv_params *params, const ptec_nn_dims *dims,
                                     const ptec_nn_dims *filter_dims);
bool ptec_nn_pointwise_in_place_fits(const ptec_nn_conv_params *params, const ptec_nn_dims *dims,
                                     const ptec_nn_dims *filter_dims);
uint32_t ptec_nn_depthwise_in_place_s8_buffer_size(const ptec_nn_conv_params *params, const ptec_nn_dims *dims,
                                                   const ptec_nn_dims *filter_dims);
uint32_t ptec_nn_pointwise_in_place_s8_buffer_size(const ptec_nn_conv_params *params, const ptec_nn_dims *dims,
                                                   const ptec_nn_dims *filter_dims);
ptec_status ptec_nn_depthwise_in_place_s8(ptec_nn_buffer scratch, const ptec_nn_conv_params *params,
                                          const ptec_nn_per_channel_quant *quant, const ptec_nn_dims *dims,
                                          int8_t *data, const ptec_nn_dims *filter_dims, const int8_t *filter,
                                          const int32_t *bias);
ptec_status ptec_nn_pointwise_in_place_s8(ptec_nn_buffer scratch, const ptec_nn_conv_params *params,
                                          const ptec_nn_per_channel_quant *quant, const ptec_nn_dims *dims,
                                          int8_t *data, const ptec_nn_dims *filter_dims, const int8_t *filter,
                                          const int32_t *bias);

/* An inverted-residual block's 1x1 expansion and depthwise convolution as
 * one call (ptec_nn_expand_depthwise_s8.c): the expansion (filter
 * expand_dims = (E, 1, 1, Cin), expand_params with stride 1 and no
 * padding) makes the few rows of its E-channel
 * output that the next depthwise out rows read, into scratch, and the
 * depthwise (filter (1, KH, KW, E), depth multiplier 1, params) reads
 * them there, so the expanded tensor never exists whole. Both are the
 * out-of-place calls on row windows: the bytes are those of the two calls.
 * *_fits says whether the geometry allows it (every out row reads at least
 * one input row: padding.h <= dilation.h * (KH - 1)); the buffer size is 0
 * when it does not (or for no elements, or more than 2^32 - 1 bytes). */
typedef struct ptec_nn_expand_depthwise_args {
    ptec_nn_conv_params expand_params, params;
    ptec_nn_per_channel_quant expand_quant, quant;
    ptec_nn_dims input_dims, expand_dims, filter_dims, output_dims;
    const int8_t *expand_filter, *filter;
    const int32_t *expand_bias, *bias; /* may be NULL */
} ptec_nn_expand_depthwise_args;

bool ptec_nn_expand_depthwise_fits(const ptec_nn_expand_depthwise_args *args);
uint32_t ptec_nn_expand_depthwise_s8_buffer_size(const ptec_nn_expand_depthwise_args *args);
ptec_status ptec_nn_expand_depthwise_s8(ptec_nn_buffer scratch, const ptec_nn_expand_depthwise_args *args,
                                        const int8_t *input, int8_t *output);

/* filter_dims = (Cout, KH, KW, Cin), OHWI. Output pixel (oy, ox) receives
 * input pixel (iy, ix) through tap (ky, kx) when
 * oy = iy*sh - ph + ky*dh and ox = ix*sw - pw + kx*dw. */
uint32_t ptec_nn_transpose_conv_s8_buffer_size(const ptec_nn_dims *input_dims,
                                               const ptec_nn_dims *filter_dims);
ptec_status ptec_nn_transpose_conv_s8(ptec_nn_buffer scratch, const ptec_nn_conv_params *params,
                                      const ptec_nn_per_channel_quant *quant,
                                      const ptec_nn_dims *input_dims, const int8_t *input,
                                      const ptec_nn_dims *filter_dims, const int8_t *filter,
                                      const int32_t *bias, const ptec_nn_dims *output_dims,
                                      int8_t *output);

/* ---- batch matmul (§3.12): out[b] = lhs[b] (MxK) * rhs_t[b]^T (K x N) ---- */

typedef struct ptec_nn_bmm_params {
    int32_t lhs_offset, rhs_offset, output_offset;
    ptec_nn_quant quant;
    ptec_nn_activation activation;
} ptec_nn_bmm_params;

typedef struct ptec_nn_bmm_dims {
    int32_t batches, m, n, k;
} ptec_nn_bmm_dims;

uint32_t ptec_nn_batch_matmul_s8_buffer_size(const ptec_nn_bmm_dims *dims);
ptec_status ptec_nn_batch_matmul_s8(ptec_nn_buffer scratch, const ptec_nn_bmm_params *params,
                                    const ptec_nn_bmm_dims *dims, const int8_t *lhs,
                                    const int8_t *rhs_transposed, int8_t *output);

/* ---- pooling (§3.13, §3.14) ---- */

typedef struct ptec_nn_pool_params {
    ptec_nn_hw kernel, stride, padding;
    ptec_nn_activation activation;
} ptec_nn_pool_params;

/* Average of the in-bounds window positions, rounded half away from zero.
 * A window without any in-bounds position is an error. */
uint32_t ptec_nn_avgpool_s8_buffer_size(const ptec_nn_dims *input_dims);
ptec_status ptec_nn_avgpool_s8(ptec_nn_buffer scratch, const ptec_nn_pool_params *params,
                               const ptec_nn_dims *input_dims, const int8_t *input,
                               const ptec_nn_dims *output_dims, int8_t *output);

/* A window without any in-bounds position gives activation.min. */
ptec_status ptec_nn_maxpool_s8(const ptec_nn_pool_params *params, const ptec_nn_dims *input_dims,
                               const int8_t *input, const ptec_nn_dims *output_dims,
                               int8_t *output);

/* ---- softmax over rows (§3.15); the output has scale 1/256, zp -128 ---- */

typedef struct ptec_nn_softmax_params {
    int32_t input_multiplier;
    int32_t input_left_shift; /* 0 .. 31 */
    int32_t diff_min;
} ptec_nn_softmax_params;

ptec_status ptec_nn_softmax_s8(const int8_t *input, int32_t rows, int32_t row_size,
                               const ptec_nn_softmax_params *params, int8_t *output);

/* Masked softmax (ptec's own, docs/kernels.md "masked softmax"): row r
 * of `rows` uses mask row r % mask_rows; a position whose mask byte is
 * non-zero is -infinity: it gives -128 (probability 0) and takes no part
 * in the row's maximum or sum. The unmasked positions get exactly what
 * ptec_nn_softmax_s8 gives for the row made of them alone. A row with
 * every position masked gives -128 everywhere (all zeros). mask_rows in
 * [1, rows] and dividing rows. */
ptec_status ptec_nn_softmax_masked_s8(const int8_t *input, int32_t rows, int32_t row_size, const uint8_t *mask,
                                      int32_t mask_rows, const ptec_nn_softmax_params *params, int8_t *output);

/* ---- layer norm (ptec's own, docs/kernels.md "int8 layer norm") ---- */

/* Per row of `row_size` values, in integers only: with d_i = x_i - zp_in,
 * s1 = sum d, s2 = sum d^2, V = row_size * s2 - s1^2 + eps_term and
 * r = floor(sqrt(V)) (1 when V is 0), the normalized value is
 * (row_size * d_i - s1) / r, taken in Q16 (rounded half away from zero),
 * requantized with element i's multiplier and shift, plus bias[i] and
 * output_offset, clamped. eps_term is row_size^2 * eps / s_in^2. */
typedef struct ptec_nn_layer_norm_params {
    int32_t input_zero_point, output_offset;
    int64_t eps_term;
    ptec_nn_activation activation;
} ptec_nn_layer_norm_params;

/* row_size in [1, 65536]; multipliers, shifts and bias have row_size entries. */
ptec_status ptec_nn_layer_norm_s8(const int8_t *input, int32_t rows, int32_t row_size,
                                  const ptec_nn_layer_norm_params *params, const int32_t *multipliers,
                                  const int32_t *shifts, const int32_t *bias, int8_t *output);

/* ---- SVDF (TFLite's SVDF op with CMSIS-NN arm_svdf_s8's numerics: int8
 * state, int8 time weights; docs/kernels.md "SVDF") ----
 * Per frame: every row of the state [units*rank, memory] moves one column
 * towards the front; the newest column (memory - 1) becomes the feature
 * filter's output, sum_i (x_i + input_offset) * weights_feature[f][i]
 * requantized with feature_quant, zero point 0, clamped to state_activation.
 * Then for each unit u, bias[u] + sum over its rank rows f of
 * sum_m weights_time[f][m] * state[f][m] (int32, two's-complement wrap as
 * on the target) is requantized with output_quant, plus output_offset,
 * clamped to activation. */
typedef struct ptec_nn_svdf_params {
    int32_t rank, input_offset, output_offset;
    ptec_nn_quant feature_quant, output_quant;
    ptec_nn_activation state_activation, activation;
} ptec_nn_svdf_params;

typedef struct ptec_nn_svdf_dims {
    int32_t frames, input_size, units, memory; /* rows = units * params->rank */
} ptec_nn_svdf_dims;

/* Scratch: units * rank int32 values (ptec_nn_svdf_s8_buffer_size). */
uint32_t ptec_nn_svdf_s8_buffer_size(const ptec_nn_svdf_dims *dims, int32_t rank);

/* input [frames, input_size], output [frames, units], state [rows, memory]
 * read and written in place; bias may be NULL. */
ptec_status ptec_nn_svdf_s8(const ptec_nn_buffer *scratch, const ptec_nn_svdf_params *params,
                            const ptec_nn_svdf_dims *dims, const int8_t *input, const int8_t *weights_feature,
                            const int8_t *weights_time, const int32_t *bias, int8_t *state, int8_t *output);

/* ---- data movement (§3.16, §3.17) ---- */

/* out = in.permute(perm) for contiguous tensors of rank 1..4. */
ptec_status ptec_nn_transpose_s8(const int8_t *input, const int32_t *input_sizes, int32_t rank,
                                 const int32_t *perm, int8_t *output);

/* Four physical dims, outermost first. Every output byte not copied from
 * the input is pad_value. */
ptec_status ptec_nn_pad_s8(const int8_t *input, const int32_t input_dims[4],
                           const int32_t pre_pad[4], const int32_t post_pad[4], int8_t pad_value,
                           int8_t *output);

/* ---- 16-bit activations with 8-bit weights (CMSIS-NN's s16 kernels) ----
 * int16 tensors are symmetric (zero point 0), so none of these takes an
 * offset. The conv-family accumulator is exact in int64 and requantized by
 * ptec_nn_requantize_s64 (ptec_nn_math.h); the rules, with the CMSIS-NN
 * sources they come from, are in docs/kernels.md, "16-bit activations". */

typedef struct ptec_nn_conv_s16_params {
    ptec_nn_hw stride, padding, dilation;
    ptec_nn_activation activation; /* int16 values */
} ptec_nn_conv_s16_params;

/* Grouped convolution as ptec_nn_convolve_s8: filter_dims = (Cout, KH, KW,
 * Cin/groups), OHWI. bias (int64) may be NULL. Every shift must be in
 * [-31, 7] (CMSIS-NN's range for the 64-bit requantization). */
uint32_t ptec_nn_convolve_s16_buffer_size(const ptec_nn_dims *input_dims, const ptec_nn_dims *filter_dims);
ptec_status ptec_nn_convolve_s16(ptec_nn_buffer scratch, const ptec_nn_conv_s16_params *params,
                                 const ptec_nn_per_channel_quant *quant, const ptec_nn_dims *input_dims,
                                 const int16_t *input, const ptec_nn_dims *filter_dims, const int8_t *filter,
                                 const int64_t *bias, const ptec_nn_dims *output_dims, int16_t *output);

/* filter_dims = (1, KH, KW, Cout), IHWO, Cout = Cin * depth_multiplier. */
ptec_status ptec_nn_depthwise_conv_s16(const ptec_nn_conv_s16_params *params, int32_t depth_multiplier,
                                       const ptec_nn_per_channel_quant *quant, const ptec_nn_dims *input_dims,
                                       const int16_t *input, const ptec_nn_dims *filter_dims, const int8_t *filter,
                                       const int64_t *bias, const ptec_nn_dims *output_dims, int16_t *output);

/* One (multiplier, shift) for the whole layer, shift in [-31, 7]. */
typedef struct ptec_nn_fc_s16_params {
    ptec_nn_quant quant;
    ptec_nn_activation activation;
} ptec_nn_fc_s16_params;

ptec_status ptec_nn_fully_connected_s16(const ptec_nn_fc_s16_params *params, const ptec_nn_fc_dims *dims,
                                        const int16_t *input, const int8_t *weights, const int64_t *bias,
                                        int16_t *output);

/* Element-wise add and mul with the channel broadcast of the int8 ones. */
typedef struct ptec_nn_add_s16_params {
    ptec_nn_quant large_quant, small_quant;
    int32_t left_shift; /* 15 for ptec::quantized_add_a16, in [0, 16] */
    ptec_nn_quant output_quant;
    ptec_nn_activation activation;
} ptec_nn_add_s16_params;

ptec_status ptec_nn_add_s16(const int16_t *large, const int16_t *small, uint32_t count, uint32_t small_count,
                            int16_t *output, const ptec_nn_add_s16_params *params);

typedef struct ptec_nn_mul_s16_params {
    ptec_nn_quant output_quant;
    ptec_nn_activation activation;
} ptec_nn_mul_s16_params;

ptec_status ptec_nn_mul_s16(const int16_t *large, const int16_t *small, uint32_t count, uint32_t small_count,
                            int16_t *output, const ptec_nn_mul_s16_params *params);

/* Pooling as the int8 functions. The average needs windows of at most
 * 2^16 positions, so that its int32 sum cannot overflow. */
ptec_status ptec_nn_avgpool_s16(const ptec_nn_pool_params *params, const ptec_nn_dims *input_dims,
                                const int16_t *input, const ptec_nn_dims *output_dims, int16_t *output);
ptec_status ptec_nn_maxpool_s16(const ptec_nn_pool_params *params, const ptec_nn_dims *input_dims,
                                const int16_t *input, const ptec_nn_dims *output_dims, int16_t *output);

/* Softmax over rows of int16 (CMSIS-NN arm_softmax_s16): exp and 1/(1+x)
 * by 513-entry int16 tables, 9 bits of index and 7 of interpolation. The
 * output has scale 1/32768 and zero point 0. Rows hold at most 65535
 * values, so that the int32 sum of the exp table's values cannot overflow. */
typedef struct ptec_nn_softmax_s16_params {
    int32_t input_multiplier, input_shift; /* shift in [-31, 31] */
    const int16_t *exp_lut;                /* exp(x) for x in [-10, 0] */
    const int16_t *one_by_one_lut;         /* 1 / (1 + x) for x in [0, 1] */
} ptec_nn_softmax_s16_params;

ptec_status ptec_nn_softmax_s16(const int16_t *input, int32_t rows, int32_t row_size,
                                const ptec_nn_softmax_s16_params *params, int16_t *output);

/* ---- recurrent ---- */

/* A unidirectional LSTM on int8 (CMSIS-NN arm_lstm_unidirectional_s8,
 * docs/kernels.md "LSTM"). Gates in PyTorch's order i, f, g, o: the
 * weights are [4 * hidden, input] and [4 * hidden, hidden] int8 row-major,
 * the effective biases 4 * hidden int32 (input side: bias - input_zp *
 * row sums; hidden side: -output_zp * row sums). Each gate is
 * sat16(sat16(rq(Wx x + bx)) + rq(Wh h + bh)) in Q3.12, then sigmoid (i, f,
 * o) or tanh (g) to Q0.15; the cell is int16 with scale 2^cell_scale_power.
 * ptec_nn_lstm_s8 starts from zero hidden and cell states;
 * ptec_nn_lstm_s8_stateful from hidden_state (int8 [batches, hidden], on
 * the output's grid) and cell_state (int16 [batches, hidden], the cell's
 * scale), which it overwrites with the final h and c (both or neither;
 * neither may overlap input or output). */
typedef struct ptec_nn_lstm_params {
    int32_t time_steps, batches, input_size, hidden_size;
    bool batch_first;                       /* [B, T, *] when set, else [T, B, *] */
    ptec_nn_quant gate_input[4];            /* i, f, g, o: Wx x + bx to Q3.12 */
    ptec_nn_quant gate_hidden[4];           /* i, f, g, o: Wh h + bh to Q3.12 */
    ptec_nn_quant forget_to_cell;           /* f * c (Q0.15 x cell) to the cell */
    ptec_nn_quant input_to_cell;            /* i * g (Q0.15 x Q0.15) to the cell */
    ptec_nn_quant output;                   /* o * tanh(c) (Q0.15 x Q0.15) to int8 */
    int32_t cell_clip;                      /* > 0: the cell is clamped to +-cell_clip */
    int32_t cell_scale_power;               /* in [-27, 2] */
    int32_t output_offset;                  /* the int8 output (and hidden state) zero point; 0 for int16 */
} ptec_nn_lstm_params;

/* Three int16 vectors of hidden_size: two gate buffers and the cell. */
uint32_t ptec_nn_lstm_s8_buffer_size(int32_t hidden_size);

ptec_status ptec_nn_lstm_s8(ptec_nn_buffer scratch, const ptec_nn_lstm_params *params, const int8_t *input,
                            const int8_t *input_weights, const int8_t *hidden_weights, const int32_t *input_bias,
                            const int32_t *hidden_bias, int8_t *output);

ptec_status ptec_nn_lstm_s8_stateful(ptec_nn_buffer scratch, const ptec_nn_lstm_params *params, const int8_t *input,
                                     const int8_t *input_weights, const int8_t *hidden_weights,
                                     const int32_t *input_bias, const int32_t *hidden_bias, int8_t *output,
                                     int8_t *hidden_state, int16_t *cell_state);

/* CMSIS-NN arm_nn_activation_s16 on one value: x * 3 * 2^left_shift
 * (rounded when left_shift < 0) indexes a 256-entry sigmoid table with
 * 9 (sigmoid) or 8 (tanh) bits of interpolation; the result is Q0.15.
 * left_shift in [-31, 14]. */
int16_t ptec_nn_sigmoid_s16(int16_t x, int32_t left_shift);
int16_t ptec_nn_tanh_s16(int16_t x, int32_t left_shift);

#endif
