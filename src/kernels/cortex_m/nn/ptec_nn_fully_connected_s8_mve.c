/* Helium fully connected layer: four output rows at a time, each block of
 * 16 input bytes loaded once for four VMLADAVA; the four sums get their
 * per-row constants, are requantized together in one vector and stored as
 * four bytes (the reference requantizes one row at a time). The constants
 * are the reference's, modulo 2^32: fo * sum(x) once per input row, and per
 * output row kernel_sum, or bias + io * (sum of the row + n * fo). */
#include "ptec_nn_variants.h"

#if defined(PTEC_NN_MVE)
#include "ptec_nn_dot.h"
#include "ptec_nn_mve.h"

/* The constant of output rows o .. o + lanes - 1 (lanes 1 to 4). */
static int32x4_t row_constants(const ptec_nn_fc_params *p, const int8_t *w, size_t n, int32_t o, int32_t lanes,
                               const int32_t *bias, const int32_t *kernel_sum, uint32_t x_term)
{
    const mve_pred16_t valid = vctp32q((uint32_t)lanes);
    if (kernel_sum != NULL) {
        return vaddq_n_s32(vldrwq_z_s32(kernel_sum + o, valid), (int32_t)x_term);
    }
    if (p->input_offset == 0) {
        const int32x4_t b = bias != NULL ? vldrwq_z_s32(bias + o, valid) : vdupq_n_s32(0);
        return vaddq_n_s32(b, (int32_t)x_term);
    }
    uint32_t c[4] = {x_term, x_term, x_term, x_term};
    for (int32_t r = 0; r < lanes; ++r) {
        if (kernel_sum != NULL) {
            c[r] += (uint32_t)kernel_sum[o + r];
            continue;
        }
        if (p->input_offset != 0) {
            c[r] += (uint32_t)p->input_offset *
                    (ptec_nn_sum_s8(w + (size_t)r * n, n) + (uint32_t)n * (uint32_t)p->filter_offset);
        }
        if (bias != NULL) {
            c[r] += (uint32_t)bias[o + r];
        }
    }
    return vld1q_s32((const int32_t *)c);
}

ptec_status ptec_nn_fully_connected_s8_mve(const ptec_nn_fc_params *params, const ptec_nn_fc_dims *dims,
                                           const int8_t *input, const int8_t *weights, const int32_t *bias,
                                           const int32_t *kernel_sum, int8_t *output)
{
    const ptec_nn_fc_params p = *params;
    const size_t n = (size_t)dims->input_features;
    const int32_t rows = dims->output_features;
    const int32x4_t multiplier = vdupq_n_s32(p.quant.multiplier);
    const int32x4_t shift = vdupq_n_s32(p.quant.shift);
    const int exact_min = p.quant.multiplier == INT32_MIN;
    for (int32_t b = 0; b < dims->batches; ++b) {
        const int8_t *x = input + (size_t)b * n;
        int8_t *y = output + (size_t)b * (size_t)rows;
        const uint32_t x_term = p.filter_offset != 0 ? (uint32_t)p.filter_offset * ptec_nn_sum_s8(x, n) : 0u;
        const int8_t *w = weights;
        for (int32_t o = 0; o < rows; o += 4, w += 4 * n) {
            const int32_t lanes = rows - o < 4 ? rows - o : 4;
            /* Missing rows repeat the block's first row; their lanes are never stored. */
            const int8_t *w1 = lanes > 1 ? w + n : w;
            const int8_t *w2 = lanes > 2 ? w + 2 * n : w;
            const int8_t *w3 = lanes > 3 ? w + 3 * n : w;
            uint32_t sums[4] = {0, 0, 0, 0};
            ptec_nn_dot4_rows_mve(x, w, w1, w2, w3, n, sums);
            int32x4_t acc = vaddq_s32(vld1q_s32((const int32_t *)sums),
                                      row_constants(&p, w, n, o, lanes, bias, kernel_sum, x_term));
            acc = exact_min ? ptec_nn_requantize_any_mve(acc, multiplier, shift)
                            : ptec_nn_requantize_mve(acc, multiplier, shift);
            acc = ptec_nn_output_stage_mve(acc, p.output_offset, p.activation.min, p.activation.max);
            vstrbq_p_s32(y + o, acc, vctp32q((uint32_t)lanes));
        }
    }
    return PTEC_OK;
}

#else
typedef int ptec_nn_fully_connected_mve_unused; /* a translation unit must not be empty */
#endif
