/* Helium kernel of the matrix-multiply convolution: one column of k int8
 * values against `rows` filter rows, four rows at a time. Each block of 16
 * column bytes is loaded once and used by four VMLADAVA (16 multiply-adds
 * each); the four sums are requantized together in one vector and stored
 * as four bytes. A k that is not a multiple of 16 ends with one predicated
 * block (inactive lanes load as 0 and are never read from memory). */
#include "ptec_nn_variants.h"

#if defined(PTEC_NN_MVE)
#include "ptec_nn_mve.h"

/* Requantize, offset, clamp and store `lanes` (1..4) outputs. */
static inline void finish(int32x4_t acc, const ptec_nn_out_stage *stage, int32_t o, int32_t lanes, int8_t *y)
{
    const mve_pred16_t valid = vctp32q((uint32_t)lanes);
    acc = vaddq_s32(acc, vldrwq_z_s32(stage->base + o, valid));
    const int32x4_t multiplier = vldrwq_z_s32(stage->multipliers + o, valid);
    const int32x4_t shift = vldrwq_z_s32(stage->shifts + o, valid);
    int32x4_t r = ptec_nn_requantize_mve(acc, multiplier, shift);
    r = ptec_nn_output_stage_mve(r, stage->output_offset, stage->activation.min, stage->activation.max);
    vstrbq_p_s32(y + o, r, valid);
}

void ptec_nn_rows_dot_s8_mve(const int8_t *x, const int8_t *w, int32_t k, int32_t rows,
                             const ptec_nn_out_stage *stage, int8_t *y)
{
    const int32_t blocks = k >> 4;
    const int32_t tail = k & 15;
    const mve_pred16_t tail_lanes = vctp8q((uint32_t)tail);
    for (int32_t o = 0; o < rows; o += 4) {
        const int32_t lanes = rows - o < 4 ? rows - o : 4;
        /* Past the last row, lanes repeat row o: computed, never stored. */
        const int8_t *w0 = w + (size_t)o * (size_t)k;
        const int8_t *w1 = lanes > 1 ? w0 + k : w0;
        const int8_t *w2 = lanes > 2 ? w1 + k : w0;
        const int8_t *w3 = lanes > 3 ? w2 + k : w0;
        const int8_t *xp = x;
        int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
        for (int32_t b = 0; b < blocks; ++b) {
            const int8x16_t xv = vld1q_s8(xp);
            a0 = vmladavaq_s8(a0, xv, vld1q_s8(w0));
            a1 = vmladavaq_s8(a1, xv, vld1q_s8(w1));
            a2 = vmladavaq_s8(a2, xv, vld1q_s8(w2));
            a3 = vmladavaq_s8(a3, xv, vld1q_s8(w3));
            xp += 16;
            w0 += 16;
            w1 += 16;
            w2 += 16;
            w3 += 16;
        }
        if (tail != 0) {
            const int8x16_t xv = vldrbq_z_s8(xp, tail_lanes);
            a0 = vmladavaq_s8(a0, xv, vldrbq_z_s8(w0, tail_lanes));
            a1 = vmladavaq_s8(a1, xv, vldrbq_z_s8(w1, tail_lanes));
            a2 = vmladavaq_s8(a2, xv, vldrbq_z_s8(w2, tail_lanes));
            a3 = vmladavaq_s8(a3, xv, vldrbq_z_s8(w3, tail_lanes));
        }
        int32x4_t acc = vdupq_n_s32(a0);
        acc = vsetq_lane_s32(a1, acc, 1);
        acc = vsetq_lane_s32(a2, acc, 2);
        acc = vsetq_lane_s32(a3, acc, 3);
        finish(acc, stage, o, lanes, y);
    }
}

#else
typedef int ptec_nn_rows_dot_mve_unused; /* a translation unit must not be empty */
#endif
