/* Helium kernel of the matrix-multiply convolution with packed 4-bit
 * weights (ptec_nn_convolve_s4): two columns of k int8 values against
 * `rows` packed rows, four rows at a time as in ptec_nn_rows_dot2_s8_mve,
 * each block of 16 weights unpacked in registers (ptec_nn_load_s4x16_mve)
 * and used by both columns. A row may start in the middle of a byte:
 * weights are addressed by element. A k that is not a multiple of 16 ends
 * with one predicated block; the last rows % 4 rows repeat the group's
 * row in the missing lanes, which are neither loaded from the per-channel
 * arrays nor stored. */
#include "ptec_nn_variants.h"

#if defined(PTEC_NN_MVE)
#include "ptec_nn_mve.h"

/* Dot products of the columns x0, x1 with the rows at elements e0, e1:
 * sums = [x0.w0, x0.w1, x1.w0, x1.w1]. */
static inline void dot2x2(const int8_t *x0, const int8_t *x1, const int8_t *packed, size_t e0, size_t e1, int32_t k,
                          int32_t sums[4])
{
    int32_t a00 = 0, a01 = 0, a10 = 0, a11 = 0;
    for (int32_t b = k >> 4; b > 0; --b) {
        const int8x16_t u = vld1q_s8(x0), v = vld1q_s8(x1);
        const int8x16_t r0 = ptec_nn_load_s4x16_mve(packed, e0, 16), r1 = ptec_nn_load_s4x16_mve(packed, e1, 16);
        a00 = vmladavaq_s8(a00, u, r0);
        a01 = vmladavaq_s8(a01, u, r1);
        a10 = vmladavaq_s8(a10, v, r0);
        a11 = vmladavaq_s8(a11, v, r1);
        x0 += 16;
        x1 += 16;
        e0 += 16;
        e1 += 16;
    }
    const uint32_t rest = (uint32_t)(k & 15);
    if (rest != 0) {
        const mve_pred16_t tail = vctp8q(rest);
        const int8x16_t u = vldrbq_z_s8(x0, tail), v = vldrbq_z_s8(x1, tail);
        const int8x16_t r0 = ptec_nn_load_s4x16_mve(packed, e0, rest), r1 = ptec_nn_load_s4x16_mve(packed, e1, rest);
        a00 = vmladavaq_s8(a00, u, r0);
        a01 = vmladavaq_s8(a01, u, r1);
        a10 = vmladavaq_s8(a10, v, r0);
        a11 = vmladavaq_s8(a11, v, r1);
    }
    sums[0] = a00;
    sums[1] = a01;
    sums[2] = a10;
    sums[3] = a11;
}

void ptec_nn_rows_dot2_s4_mve(const int8_t *x0, const int8_t *x1, const int8_t *packed, size_t first, int32_t k,
                              int32_t rows, const ptec_nn_out_stage *stage, int8_t *y0, int8_t *y1)
{
    const int32_t offset = stage->output_offset;
    const int32_t lo = stage->activation.min, hi = stage->activation.max;
    const int exact_min = stage->any_min_multiplier;
    const size_t row = (size_t)k;
    for (int32_t o = 0; o < rows; o += 4) {
        const int32_t lanes = rows - o < 4 ? rows - o : 4;
        const mve_pred16_t valid = vctp32q((uint32_t)lanes);
        const size_t e = first + (size_t)o * row;
        /* Lanes in memory order: pixel 0 rows o..o+3, then pixel 1. */
        int32_t sums[8];
        int32_t pair[4];
        dot2x2(x0, x1, packed, e, lanes > 1 ? e + row : e, k, pair);
        sums[0] = pair[0];
        sums[1] = pair[1];
        sums[4] = pair[2];
        sums[5] = pair[3];
        if (lanes > 2) {
            dot2x2(x0, x1, packed, e + 2 * row, lanes > 3 ? e + 3 * row : e, k, pair);
        }
        sums[2] = pair[0];
        sums[3] = pair[1];
        sums[6] = pair[2];
        sums[7] = pair[3];
        /* Inactive lanes load 0: a multiplier of 0 requantizes to 0. */
        const int32x4_t base = vldrwq_z_s32(stage->base + o, valid);
        const int32x4_t multiplier = vldrwq_z_s32(stage->multipliers + o, valid);
        const int32x4_t shift = vldrwq_z_s32(stage->shifts + o, valid);
        int32x4_t a = vaddq_s32(vld1q_s32(sums), base);
        int32x4_t b = vaddq_s32(vld1q_s32(sums + 4), base);
        if (exact_min) {
            a = ptec_nn_requantize_any_mve(a, multiplier, shift);
            b = ptec_nn_requantize_any_mve(b, multiplier, shift);
        } else {
            a = ptec_nn_requantize_mve(a, multiplier, shift);
            b = ptec_nn_requantize_mve(b, multiplier, shift);
        }
        vstrbq_p_s32(y0 + o, ptec_nn_output_stage_mve(a, offset, lo, hi), valid);
        if (y1 != NULL) {
            vstrbq_p_s32(y1 + o, ptec_nn_output_stage_mve(b, offset, lo, hi), valid);
        }
    }
}

#else
typedef int ptec_nn_rows_dot2_s4_mve_unused; /* a translation unit must not be empty */
#endif
