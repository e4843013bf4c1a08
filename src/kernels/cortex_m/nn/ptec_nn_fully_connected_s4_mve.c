/* Helium fully connected layer with packed 4-bit weights: four output
 * rows at a time, each block of 16 input bytes loaded once for four
 * VMLADAVA against 16 weights unpacked in registers
 * (ptec_nn_load_s4x16_mve). The input offset is not in the products
 * (x + io leaves int8): sum (x + io) w = sum x w + io * sum w, with the
 * weight sums taken by VADDVA on the same unpacked vectors, all modulo
 * 2^32. The four sums are requantized together and stored as four bytes. */
#include "ptec_nn_variants.h"

#if defined(PTEC_NN_MVE)
#include "ptec_nn_mve.h"

ptec_status ptec_nn_fully_connected_s4_mve(const ptec_nn_fc_params *params, const ptec_nn_fc_dims *dims,
                                           const int8_t *input, const int8_t *packed, const int32_t *bias,
                                           int8_t *output)
{
    const ptec_nn_fc_params p = *params;
    const size_t n = (size_t)dims->input_features;
    const int32_t rows = dims->output_features;
    const int32x4_t multiplier = vdupq_n_s32(p.quant.multiplier);
    const int32x4_t shift = vdupq_n_s32(p.quant.shift);
    const int exact_min = p.quant.multiplier == INT32_MIN;
    const uint32_t rest = (uint32_t)(n & 15u);
    for (int32_t b = 0; b < dims->batches; ++b) {
        const int8_t *x_row = input + (size_t)b * n;
        int8_t *y = output + (size_t)b * (size_t)rows;
        for (int32_t o = 0; o < rows; o += 4) {
            const int32_t lanes = rows - o < 4 ? rows - o : 4;
            const mve_pred16_t valid = vctp32q((uint32_t)lanes);
            /* Missing rows repeat the block's first row; their lanes are never stored. */
            size_t e0 = (size_t)o * n;
            size_t e1 = lanes > 1 ? e0 + n : e0;
            size_t e2 = lanes > 2 ? e0 + 2 * n : e0;
            size_t e3 = lanes > 3 ? e0 + 3 * n : e0;
            const int8_t *x = x_row;
            int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0, w0 = 0, w1 = 0, w2 = 0, w3 = 0;
            for (size_t blocks = n >> 4; blocks > 0; --blocks) {
                const int8x16_t xv = vld1q_s8(x);
                const int8x16_t r0 = ptec_nn_load_s4x16_mve(packed, e0, 16);
                const int8x16_t r1 = ptec_nn_load_s4x16_mve(packed, e1, 16);
                const int8x16_t r2 = ptec_nn_load_s4x16_mve(packed, e2, 16);
                const int8x16_t r3 = ptec_nn_load_s4x16_mve(packed, e3, 16);
                s0 = vmladavaq_s8(s0, xv, r0);
                s1 = vmladavaq_s8(s1, xv, r1);
                s2 = vmladavaq_s8(s2, xv, r2);
                s3 = vmladavaq_s8(s3, xv, r3);
                w0 = vaddvaq_s8(w0, r0);
                w1 = vaddvaq_s8(w1, r1);
                w2 = vaddvaq_s8(w2, r2);
                w3 = vaddvaq_s8(w3, r3);
                x += 16;
                e0 += 16;
                e1 += 16;
                e2 += 16;
                e3 += 16;
            }
            if (rest != 0) {
                const int8x16_t xv = vldrbq_z_s8(x, vctp8q(rest));
                const int8x16_t r0 = ptec_nn_load_s4x16_mve(packed, e0, rest);
                const int8x16_t r1 = ptec_nn_load_s4x16_mve(packed, e1, rest);
                const int8x16_t r2 = ptec_nn_load_s4x16_mve(packed, e2, rest);
                const int8x16_t r3 = ptec_nn_load_s4x16_mve(packed, e3, rest);
                s0 = vmladavaq_s8(s0, xv, r0);
                s1 = vmladavaq_s8(s1, xv, r1);
                s2 = vmladavaq_s8(s2, xv, r2);
                s3 = vmladavaq_s8(s3, xv, r3);
                w0 = vaddvaq_s8(w0, r0);
                w1 = vaddvaq_s8(w1, r1);
                w2 = vaddvaq_s8(w2, r2);
                w3 = vaddvaq_s8(w3, r3);
            }
            const int32_t dots[4] = {s0, s1, s2, s3};
            const int32_t weight_sums[4] = {w0, w1, w2, w3};
            const int32x4_t b4 = bias != NULL ? vldrwq_z_s32(bias + o, valid) : vdupq_n_s32(0);
            /* VMLA wraps modulo 2^32, as the reference's sum does. */
            int32x4_t acc = vmlaq_n_s32(vaddq_s32(vld1q_s32(dots), b4), vld1q_s32(weight_sums), p.input_offset);
            acc = exact_min ? ptec_nn_requantize_any_mve(acc, multiplier, shift)
                            : ptec_nn_requantize_mve(acc, multiplier, shift);
            acc = ptec_nn_output_stage_mve(acc, p.output_offset, p.activation.min, p.activation.max);
            vstrbq_p_s32(y + o, acc, valid);
        }
    }
    return PTEC_OK;
}

#else
typedef int ptec_nn_fully_connected_s4_mve_unused; /* a translation unit must not be empty */
#endif
