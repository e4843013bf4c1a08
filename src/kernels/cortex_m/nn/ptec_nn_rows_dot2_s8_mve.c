/* Helium kernel of the matrix-multiply convolution for two pixels: two
 * columns of k int8 values against `rows` filter rows. Two rows at a time
 * share each column load and each weight load serves both columns (four
 * loads per four VMLADAVA, against five per four with one column); two
 * such passes give four rows of both pixels, requantized as two vectors
 * that share the per-channel loads. A k that is not a multiple of 16 ends
 * with one predicated block; the last rows % 4 rows go through
 * ptec_nn_rows_dot_s8_mve, once per pixel. */
#include "ptec_nn_variants.h"

#if defined(PTEC_NN_MVE)
#include "ptec_nn_mve.h"

/* Dot products of the columns x0, x1 with the rows w0, w1, as the lanes
 * [x0.w0, x0.w1] and [x1.w0, x1.w1] of two vectors, lanes `lane`, lane + 1. */
static inline void dot2x2(const int8_t *x0, const int8_t *x1, const int8_t *w0, const int8_t *w1, int32_t k,
                          int32_t sums[4])
{
    int32_t a00 = 0, a01 = 0, a10 = 0, a11 = 0;
    for (int32_t b = k >> 4; b > 0; --b) {
        const int8x16_t u = vld1q_s8(x0), v = vld1q_s8(x1);
        const int8x16_t r0 = vld1q_s8(w0), r1 = vld1q_s8(w1);
        a00 = vmladavaq_s8(a00, u, r0);
        a01 = vmladavaq_s8(a01, u, r1);
        a10 = vmladavaq_s8(a10, v, r0);
        a11 = vmladavaq_s8(a11, v, r1);
        x0 += 16;
        x1 += 16;
        w0 += 16;
        w1 += 16;
    }
    if ((k & 15) != 0) {
        const mve_pred16_t tail = vctp8q((uint32_t)(k & 15));
        const int8x16_t u = vldrbq_z_s8(x0, tail), v = vldrbq_z_s8(x1, tail);
        const int8x16_t r0 = vldrbq_z_s8(w0, tail), r1 = vldrbq_z_s8(w1, tail);
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

void ptec_nn_rows_dot2_s8_mve(const int8_t *x0, const int8_t *x1, const int8_t *w, int32_t k, int32_t rows,
                              const ptec_nn_out_stage *stage, int8_t *y0, int8_t *y1)
{
    const int32_t offset = stage->output_offset;
    const int32_t lo = stage->activation.min, hi = stage->activation.max;
    const int exact_min = stage->any_min_multiplier;
    const size_t row = (size_t)k;
    int32_t o = 0;
    for (; o + 4 <= rows; o += 4) {
        /* Lanes in memory order: pixel 0 rows o..o+3, then pixel 1. */
        int32_t sums[8];
        int32_t pair[4];
        dot2x2(x0, x1, w, w + row, k, pair);
        sums[0] = pair[0];
        sums[1] = pair[1];
        sums[4] = pair[2];
        sums[5] = pair[3];
        dot2x2(x0, x1, w + 2 * row, w + 3 * row, k, pair);
        sums[2] = pair[0];
        sums[3] = pair[1];
        sums[6] = pair[2];
        sums[7] = pair[3];
        const int32x4_t base = vld1q_s32(stage->base + o);
        const int32x4_t multiplier = vld1q_s32(stage->multipliers + o);
        const int32x4_t shift = vld1q_s32(stage->shifts + o);
        int32x4_t a = vaddq_s32(vld1q_s32(sums), base);
        int32x4_t b = vaddq_s32(vld1q_s32(sums + 4), base);
        if (exact_min) {
            a = ptec_nn_requantize_any_mve(a, multiplier, shift);
            b = ptec_nn_requantize_any_mve(b, multiplier, shift);
        } else {
            a = ptec_nn_requantize_mve(a, multiplier, shift);
            b = ptec_nn_requantize_mve(b, multiplier, shift);
        }
        vstrbq_s32(y0 + o, ptec_nn_output_stage_mve(a, offset, lo, hi));
        if (y1 != NULL) {
            vstrbq_s32(y1 + o, ptec_nn_output_stage_mve(b, offset, lo, hi));
        }
        w += 4 * row;
    }
    if (o < rows) {
        ptec_nn_out_stage rest = *stage;
        rest.base += o;
        rest.multipliers += o;
        rest.shifts += o;
        ptec_nn_rows_dot_s8_mve(x0, w, k, rows - o, &rest, y0 + o);
        if (y1 != NULL) {
            ptec_nn_rows_dot_s8_mve(x1, w, k, rows - o, &rest, y1 + o);
        }
    }
}

#else
typedef int ptec_nn_rows_dot2_mve_unused; /* a translation unit must not be empty */
#endif
