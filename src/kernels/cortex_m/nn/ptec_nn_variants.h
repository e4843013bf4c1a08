/* Internal interfaces of the DSP and Helium variants (see ptec_nn_isa.h):
 * the entry points the reference functions hand over to, and the shared
 * building blocks of the matrix-multiply convolutions. */
#ifndef PTEC_NN_VARIANTS_H
#define PTEC_NN_VARIANTS_H

#include "ptec_nn.h"
#include "ptec_nn_isa.h"

/* What turns the raw dot products of `rows` consecutive output channels
 * into int8: acc + base[o] is requantized with the channel's pair, then
 * offset and clamped. base[o] holds the bias and the input offset's share,
 * input_offset * (sum of the channel's weights). */
typedef struct ptec_nn_out_stage {
    const int32_t *base;
    const int32_t *multipliers;
    const int32_t *shifts;
    int32_t output_offset;
    ptec_nn_activation activation;
    /* Some multiplier is -2^31, the one value whose product with -2^31
     * leaves int32; the Helium kernels then take the slower exact form. */
    int any_min_multiplier;
    /* Every pair takes the short requantization of the build's kernels:
     * ptec_nn_requant_fast_ok (ptec_nn_dsp.h) in the DSP build,
     * ptec_nn_requant_short_ok_mve (ptec_nn_mve.h) in the Helium one. */
    int fast_requant;
    /* DSP build only (the Helium one leaves it unset): fast_requant, and
     * every shift is also >= -24, so that the output offset folds into the
     * requantization's rounding constant (ptec_nn_requant_fold_ok,
     * ptec_nn_dsp.h). */
    int fold_offset;
} ptec_nn_out_stage;

static inline int ptec_nn_any_min_multiplier(const int32_t *multipliers, int32_t count)
{
    for (int32_t i = 0; i < count; ++i) {
        if (multipliers[i] == INT32_MIN) {
            return 1;
        }
    }
    return 0;
}

/* The window of one output pixel, flattened in filter order (KH, KW,
 * channels) into k = KH * KW * count bytes. Padded taps get pad_value,
 * -input_offset, so that (x + input_offset) is 0 there and the
 * whole-kernel weight sum in base[] stays right for border pixels. */
typedef struct ptec_nn_window_geometry {
    const ptec_nn_dims *input;
    ptec_nn_hw kernel, dilation;
    int32_t channel0, count; /* the channels of one group */
    int8_t pad_value;
} ptec_nn_window_geometry;

void ptec_nn_im2col_s8(const ptec_nn_window_geometry *g, const int8_t *image, int32_t y0, int32_t x0,
                       int8_t *column);

/* base[o] = bias[o] + input_offset * sum of row o (rows of k weights). */
void ptec_nn_conv_bases_s8(const int8_t *weights, int32_t rows, int32_t k, const int32_t *bias,
                           int32_t input_offset, int32_t *base);
/* The same for packed 4-bit rows (ptec_nn_s4.h): row o is elements
 * o*k .. o*k + k - 1 of the packed array. */
void ptec_nn_conv_bases_s4(const int8_t *packed, int32_t rows, int32_t k, const int32_t *bias,
                           int32_t input_offset, int32_t *base);

#if defined(PTEC_NN_MVE)
/* y[o] for o < rows: stage(sum_i x[i] * w[o*k + i]). */
void ptec_nn_rows_dot_s8_mve(const int8_t *x, const int8_t *w, int32_t k, int32_t rows,
                             const ptec_nn_out_stage *stage, int8_t *y);
/* The same for two columns: y0[o] and, when y1 is not NULL, y1[o] (x1 is
 * then read but its results are not stored). */
void ptec_nn_rows_dot2_s8_mve(const int8_t *x0, const int8_t *x1, const int8_t *w, int32_t k, int32_t rows,
                              const ptec_nn_out_stage *stage, int8_t *y0, int8_t *y1);
/* The same with packed 4-bit rows: row o is elements first + o*k ..
 * first + o*k + k - 1 of `packed` (ptec_nn_s4.h). */
void ptec_nn_rows_dot2_s4_mve(const int8_t *x0, const int8_t *x1, const int8_t *packed, size_t first, int32_t k,
                              int32_t rows, const ptec_nn_out_stage *stage, int8_t *y0, int8_t *y1);
#endif

#if defined(PTEC_NN_DSP)
/* Two columns of k int8 values widened to int16 pairs, in the order the
 * SMLAD kernel reads them (k words in all, see ptec_nn_widen2_q15_dsp.c),
 * then multiplied with `rows` weight rows: y0[o] and, when y1 is not NULL,
 * y1[o]. */
void ptec_nn_widen2_q15_dsp(const int8_t *x0, const int8_t *x1, int32_t k, uint32_t *pair);
void ptec_nn_rows_dot2_q15_dsp(const uint32_t *pair, const int8_t *w, int32_t k, int32_t rows,
                               const ptec_nn_out_stage *stage, int8_t *y0, int8_t *y1);
/* The same with packed 4-bit rows: row o is elements first + o*k ..
 * first + o*k + k - 1 of `packed` (ptec_nn_s4.h). */
void ptec_nn_rows_dot2_s4_dsp(const uint32_t *pair, const int8_t *packed, size_t first, int32_t k, int32_t rows,
                              const ptec_nn_out_stage *stage, int8_t *y0, int8_t *y1);
#endif

#if defined(PTEC_NN_MVE) || defined(PTEC_NN_DSP)
/* The matrix-multiply convolution (scratch: ptec_nn_conv_gemm_buffer_size),
 * for quantized_conv2d and for depthwise layers with one input channel. */
uint32_t ptec_nn_conv_gemm_buffer_size(int32_t out_channels, int32_t k);
ptec_status ptec_nn_conv_gemm_s8(void *scratch, const ptec_nn_conv_params *params,
                                 const ptec_nn_per_channel_quant *quant, const ptec_nn_dims *input_dims,
                                 const int8_t *input, const ptec_nn_dims *filter_dims, const int8_t *filter,
                                 const int32_t *bias, const ptec_nn_dims *output_dims, int8_t *output);
/* The same with a packed 4-bit filter (ptec_nn_convolve_s4), in the same
 * scratch: the weights are unpacked in registers, never into memory. */
ptec_status ptec_nn_conv_gemm_s4(void *scratch, const ptec_nn_conv_params *params,
                                 const ptec_nn_per_channel_quant *quant, const ptec_nn_dims *input_dims,
                                 const int8_t *input, const ptec_nn_dims *filter_dims, const int8_t *packed,
                                 const int32_t *bias, const ptec_nn_dims *output_dims, int8_t *output);

/* Depthwise layers with one input channel and several outputs (DS-CNN's
 * first layer): the same sums as a convolution whose OHWI filter is the
 * IHWO one transposed, which this copies into the scratch first. */
uint32_t ptec_nn_depthwise_single_input_buffer_size(const ptec_nn_dims *filter_dims);
ptec_status ptec_nn_depthwise_single_input_s8(void *scratch, const ptec_nn_conv_params *params,
                                              const ptec_nn_per_channel_quant *quant,
                                              const ptec_nn_dims *input_dims, const int8_t *input,
                                              const ptec_nn_dims *filter_dims, const int8_t *filter,
                                              const int32_t *bias, const ptec_nn_dims *output_dims,
                                              int8_t *output);
#endif

#if defined(PTEC_NN_MVE)
/* Depthwise with a depth multiplier of 1, four channels per vector. */
ptec_status ptec_nn_depthwise_conv_s8_mve(const ptec_nn_conv_params *params, const ptec_nn_per_channel_quant *quant,
                                          const ptec_nn_dims *input_dims, const int8_t *input,
                                          const ptec_nn_dims *filter_dims, const int8_t *filter,
                                          const int32_t *bias, const ptec_nn_dims *output_dims, int8_t *output);

/* Average pooling, four channels per vector. */
ptec_status ptec_nn_avgpool_s8_mve(const ptec_nn_pool_params *params, const ptec_nn_dims *input_dims,
                                   const int8_t *input, const ptec_nn_dims *output_dims, int8_t *output);

/* Max pooling, sixteen channels per vector. */
ptec_status ptec_nn_maxpool_s8_mve(const ptec_nn_pool_params *params, const ptec_nn_dims *input_dims,
                                   const int8_t *input, const ptec_nn_dims *output_dims, int8_t *output);

/* Element-wise add and mul, four elements per vector. */
ptec_status ptec_nn_add_s8_mve(const int8_t *large, const int8_t *small, uint32_t count, uint32_t small_count,
                               int8_t *output, const ptec_nn_add_params *params);
ptec_status ptec_nn_mul_s8_mve(const int8_t *large, const int8_t *small, uint32_t count, uint32_t small_count,
                               int8_t *output, const ptec_nn_mul_params *params);
#endif

#if defined(PTEC_NN_DSP)
/* Depthwise with a depth multiplier of 1, four channels per word. */
ptec_status ptec_nn_depthwise_conv_s8_dsp(const ptec_nn_conv_params *params, const ptec_nn_per_channel_quant *quant,
                                          const ptec_nn_dims *input_dims, const int8_t *input,
                                          const ptec_nn_dims *filter_dims, const int8_t *filter,
                                          const int32_t *bias, const ptec_nn_dims *output_dims, int8_t *output);

/* Average pooling, four channels per word, for windows of at most 256
 * positions (returns PTEC_NOT_SUPPORTED for larger ones, before writing). */
ptec_status ptec_nn_avgpool_s8_dsp(const ptec_nn_pool_params *params, const ptec_nn_dims *input_dims,
                                   const int8_t *input, const ptec_nn_dims *output_dims, int8_t *output);

/* Max pooling, four channels per word. */
ptec_status ptec_nn_maxpool_s8_dsp(const ptec_nn_pool_params *params, const ptec_nn_dims *input_dims,
                                   const int8_t *input, const ptec_nn_dims *output_dims, int8_t *output);

/* Element-wise add with the requantization constants computed once. */
ptec_status ptec_nn_add_s8_dsp(const int8_t *large, const int8_t *small, uint32_t count, uint32_t small_count,
                               int8_t *output, const ptec_nn_add_params *params);
#endif

ptec_status ptec_nn_fully_connected_s8_mve(const ptec_nn_fc_params *params, const ptec_nn_fc_dims *dims,
                                           const int8_t *input, const int8_t *weights, const int32_t *bias,
                                           const int32_t *kernel_sum, int8_t *output);

ptec_status ptec_nn_fully_connected_s8_dsp(const ptec_nn_fc_params *params, const ptec_nn_fc_dims *dims,
                                           const int8_t *input, const int8_t *weights, const int32_t *bias,
                                           const int32_t *kernel_sum, int8_t *output);

ptec_status ptec_nn_fully_connected_s4_mve(const ptec_nn_fc_params *params, const ptec_nn_fc_dims *dims,
                                           const int8_t *input, const int8_t *packed, const int32_t *bias,
                                           int8_t *output);

ptec_status ptec_nn_fully_connected_s4_dsp(const ptec_nn_fc_params *params, const ptec_nn_fc_dims *dims,
                                           const int8_t *input, const int8_t *packed, const int32_t *bias,
                                           int8_t *output);

/* ---- 16-bit activations (ptec_nn_*_s16; docs/kernels.md, "16-bit
 * activations") ---- */

#if defined(PTEC_NN_DSP)
/* acc[r] += sum_{i<n} x[i] * w[r * stride + i] for r < rows (1 or 2),
 * exactly (see the proof in ptec_nn_dot_rows_s16_dsp.c). */
void ptec_nn_dot_rows_s16_dsp(const int16_t *x, const int8_t *w, size_t n, size_t stride, int32_t rows,
                              int64_t *acc);
#define PTEC_NN_DOT_ROWS_S16 ptec_nn_dot_rows_s16_dsp
#elif defined(PTEC_NN_MVE)
/* The same with Helium: eight products per step into 64-bit sums. */
void ptec_nn_dot_rows_s16_mve(const int16_t *x, const int8_t *w, size_t n, size_t stride, int32_t rows,
                              int64_t *acc);
#define PTEC_NN_DOT_ROWS_S16 ptec_nn_dot_rows_s16_mve
#endif

#if defined(PTEC_NN_MVE) || defined(PTEC_NN_DSP)
/* The convolution and the fully connected layer on PTEC_NN_DOT_ROWS_S16,
 * two output channels per pass over the input. Called by the reference
 * functions once they have checked their arguments; no scratch. */
ptec_status ptec_nn_convolve_s16_rows(const ptec_nn_conv_s16_params *params, const ptec_nn_per_channel_quant *quant,
                                      const ptec_nn_dims *input_dims, const int16_t *input,
                                      const ptec_nn_dims *filter_dims, const int8_t *filter, const int64_t *bias,
                                      const ptec_nn_dims *output_dims, int16_t *output);
ptec_status ptec_nn_fully_connected_s16_rows(const ptec_nn_fc_s16_params *params, const ptec_nn_fc_dims *dims,
                                             const int16_t *input, const int8_t *weights, const int64_t *bias,
                                             int16_t *output);
#endif

/* Depthwise with a depth multiplier of 1, four channels per step, for
 * windows of at most 511 taps (PTEC_NOT_SUPPORTED otherwise, before
 * writing anything: the reference's loops then run). */
#if defined(PTEC_NN_DSP)
ptec_status ptec_nn_depthwise_conv_s16_dsp(const ptec_nn_conv_s16_params *params,
                                           const ptec_nn_per_channel_quant *quant, const ptec_nn_dims *input_dims,
                                           const int16_t *input, const ptec_nn_dims *filter_dims,
                                           const int8_t *filter, const int64_t *bias,
                                           const ptec_nn_dims *output_dims, int16_t *output);
#elif defined(PTEC_NN_MVE)
ptec_status ptec_nn_depthwise_conv_s16_mve(const ptec_nn_conv_s16_params *params,
                                           const ptec_nn_per_channel_quant *quant, const ptec_nn_dims *input_dims,
                                           const int16_t *input, const ptec_nn_dims *filter_dims,
                                           const int8_t *filter, const int64_t *bias,
                                           const ptec_nn_dims *output_dims, int16_t *output);
#endif

/* An activation range the vector clamps of the s16 variants reproduce:
 * within int16 and not empty (the wrappers only pass such ranges; others,
 * only reachable by calling a math function directly, run the reference). */
static inline int ptec_nn_activation_s16_ok(ptec_nn_activation a)
{
    return a.min >= INT16_MIN && a.min <= a.max && a.max <= INT16_MAX;
}

#if defined(PTEC_NN_MVE)
/* Element-wise add and mul, four elements per vector; PTEC_NOT_SUPPORTED
 * (before writing) unless ptec_nn_activation_s16_ok. */
ptec_status ptec_nn_add_s16_mve(const int16_t *large, const int16_t *small, uint32_t count, uint32_t small_count,
                                int16_t *output, const ptec_nn_add_s16_params *params);
ptec_status ptec_nn_mul_s16_mve(const int16_t *large, const int16_t *small, uint32_t count, uint32_t small_count,
                                int16_t *output, const ptec_nn_mul_s16_params *params);
/* Max pooling, eight channels per vector (PTEC_NOT_SUPPORTED, before
 * writing, unless ptec_nn_activation_s16_ok); average pooling, four
 * channels per vector, with the reference's checks and statuses. */
ptec_status ptec_nn_maxpool_s16_mve(const ptec_nn_pool_params *params, const ptec_nn_dims *input_dims,
                                    const int16_t *input, const ptec_nn_dims *output_dims, int16_t *output);
ptec_status ptec_nn_avgpool_s16_mve(const ptec_nn_pool_params *params, const ptec_nn_dims *input_dims,
                                    const int16_t *input, const ptec_nn_dims *output_dims, int16_t *output);
#endif

#if defined(PTEC_NN_DSP)
/* Max pooling, four channels per step (two per word); PTEC_NOT_SUPPORTED
 * (before writing) unless ptec_nn_activation_s16_ok. */
ptec_status ptec_nn_maxpool_s16_dsp(const ptec_nn_pool_params *params, const ptec_nn_dims *input_dims,
                                    const int16_t *input, const ptec_nn_dims *output_dims, int16_t *output);
/* Average pooling, two channels per step (the same checks, statuses and
 * outputs as the reference, no scratch); multiplication, two elements per
 * step (SMULBB, SMULTT), any activation range. */
ptec_status ptec_nn_avgpool_s16_dsp(const ptec_nn_pool_params *params, const ptec_nn_dims *input_dims,
                                    const int16_t *input, const ptec_nn_dims *output_dims, int16_t *output);
ptec_status ptec_nn_mul_s16_dsp(const int16_t *large, const int16_t *small, uint32_t count, uint32_t small_count,
                                int16_t *output, const ptec_nn_mul_s16_params *params);
#endif

/* Quantization (ptec_nn_quantize.c): Helium's floating point on the M55;
 * a single-precision FPU with the DSP extension elsewhere (M33, M7, M4). */
#if !defined(PTEC_NN_PORTABLE) && defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)
#define PTEC_NN_QUANTIZE_MVE 1
void ptec_nn_quantize_f32_s8_mve(const float *input, int8_t *output, uint32_t count,
                                 const ptec_nn_quantize_params *params);
void ptec_nn_quantize_f32_s16_mve(const float *input, int16_t *output, uint32_t count,
                                  const ptec_nn_quantize_params *params);
#elif !defined(PTEC_NN_PORTABLE) && defined(__ARM_FP) && (__ARM_FP & 4) && defined(__ARM_FEATURE_DSP)
#define PTEC_NN_QUANTIZE_FPU 1
void ptec_nn_quantize_f32_s8_fpu(const float *input, int8_t *output, uint32_t count,
                                 const ptec_nn_quantize_params *params);
void ptec_nn_quantize_f32_s16_fpu(const float *input, int16_t *output, uint32_t count,
                                  const ptec_nn_quantize_params *params);
#endif

#endif
