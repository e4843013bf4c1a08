/* Helium kernel of the matrix-multiply convolution: one column of k int8
 * values against `rows` filter rows, four rows at a time. Each block of 16
 * column bytes is loaded once and used by four VMLADAVA (16 multiply-adds
 * each); the four sums are requantized together in one vector and stored
 * as four bytes. A k that is not a multiple of 16 ends with one predicated
 * block (inactive lanes load as 0 and are never read from memory). */
#include "ptec_nn_variants.h"

#if defined(PTEC_NN_MVE)
#include "ptec_nn_mve.h"

/* Four dot products of x with the rows w0..w3 (k bytes each). */
static inline int32x4_t dot4(const int8_t *x, const int8_t *w0, const int8_t *w1, const int8_t *w2,
                             const int8_t *w3, int32_t k)
{
    uint32_t a[4] = {0, 0, 0, 0};
    ptec_nn_dot4_rows_mve(x, w0, w1, w2, w3, (size_t)k, a);
    int32x4_t acc = vdupq_n_s32((int32_t)a[0]);
    acc = vsetq_lane_s32((int32_t)a[1], acc, 1);
    acc = vsetq_lane_s32((int32_t)a[2], acc, 2);
    return vsetq_lane_s32((int32_t)a[3], acc, 3);
}

void ptec_nn_rows_dot_s8_mve(const int8_t *x, const int8_t *w, int32_t k, int32_t rows,
                             const ptec_nn_out_stage *stage, int8_t *y)
{
    const int32_t *base = stage->base;
    const int32_t *multipliers = stage->multipliers;
    const int32_t *shifts = stage->shifts;
    const int32_t offset = stage->output_offset;
    const int32_t lo = stage->activation.min, hi = stage->activation.max;
    const int exact_min = stage->any_min_multiplier;
    const size_t row = (size_t)k;
    int32_t o = 0;
    for (; o + 4 <= rows; o += 4) {
        int32x4_t acc = dot4(x, w, w + row, w + 2 * row, w + 3 * row, k);
        acc = vaddq_s32(acc, vld1q_s32(base + o));
        const int32x4_t multiplier = vld1q_s32(multipliers + o);
        const int32x4_t shift = vld1q_s32(shifts + o);
        acc = exact_min ? ptec_nn_requantize_any_mve(acc, multiplier, shift)
                        : ptec_nn_requantize_mve(acc, multiplier, shift);
        vstrbq_s32(y + o, ptec_nn_output_stage_mve(acc, offset, lo, hi));
        w += 4 * row;
    }
    if (o < rows) {
        /* 1 to 3 rows left: the missing lanes repeat the last row and are
         * neither loaded from the per-channel arrays nor stored. */
        const int32_t lanes = rows - o;
        const mve_pred16_t valid = vctp32q((uint32_t)lanes);
        const int8_t *w1 = lanes > 1 ? w + row : w;
        const int8_t *w2 = lanes > 2 ? w + 2 * row : w;
        int32x4_t acc = dot4(x, w, w1, w2, w, k);
        acc = vaddq_s32(acc, vldrwq_z_s32(base + o, valid));
        const int32x4_t multiplier = vldrwq_z_s32(multipliers + o, valid);
        const int32x4_t shift = vldrwq_z_s32(shifts + o, valid);
        acc = ptec_nn_requantize_any_mve(acc, multiplier, shift);
        vstrbq_p_s32(y + o, ptec_nn_output_stage_mve(acc, offset, lo, hi), valid);
    }
}

#else
typedef int ptec_nn_rows_dot_mve_unused; /* a translation unit must not be empty */
#endif
