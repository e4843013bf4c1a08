/* DSP kernel of the matrix-multiply convolution with packed 4-bit weights
 * (ptec_nn_convolve_s4): ptec_nn_rows_dot2_q15_dsp with each block of four
 * weights unpacked from two or three bytes into the two int16 pairs that
 * SXTB16 makes of an int8 word (ptec_nn_load_s4x4_dsp), so that the
 * widened columns and the SMLAD pattern are the s8 kernel's. Two rows at a
 * time, both columns; SMLAD wraps modulo 2^32 as the reference does. A row
 * may start in the middle of a byte: weights are addressed by element. */
#include "ptec_nn_variants.h"

#if defined(PTEC_NN_DSP)
#include "ptec_nn_dsp.h"
#include "ptec_nn_math.h"
#include "ptec_nn_s4.h"

static inline int8_t out_byte(int32_t acc, int32_t base, const ptec_nn_requant_dsp *r, int32_t offset, int32_t lo,
                              int32_t hi)
{
    return ptec_nn_output_stage_dsp(ptec_nn_requantize_dsp(ptec_nn_wrap_add(acc, base), r), offset, lo, hi);
}

void ptec_nn_rows_dot2_s4_dsp(const uint32_t *pair, const int8_t *packed, size_t first, int32_t k, int32_t rows,
                              const ptec_nn_out_stage *stage, int8_t *y0, int8_t *y1)
{
    const int32_t blocks = k >> 2;
    const int32_t tail = k & 3;
    const uint32_t *tail_pair = pair + 4 * blocks;
    /* Locals, not stage->...: every int8 store could alias the struct. */
    const int32_t *base = stage->base;
    const int32_t *multipliers = stage->multipliers;
    const int32_t *shifts = stage->shifts;
    const int32_t offset = stage->output_offset;
    const int32_t lo = stage->activation.min, hi = stage->activation.max;
    for (int32_t o = 0; o < rows; o += 2) {
        const int two_rows = rows - o >= 2;
        size_t e0 = first + (size_t)o * (size_t)k;
        size_t e1 = two_rows ? e0 + (size_t)k : e0; /* a lone last row is computed twice */
        const uint32_t *xp = pair;
        int32_t a00 = 0, a01 = 0, a10 = 0, a11 = 0; /* a<column><row> */
        for (int32_t b = 0; b < blocks; ++b) {
            const uint32_t x0_even = xp[0], x0_odd = xp[1], x1_even = xp[2], x1_odd = xp[3];
            xp += 4;
            uint32_t even, odd;
            ptec_nn_load_s4x4_dsp(packed, e0, &even, &odd);
            a00 = __smlad((int32_t)x0_even, (int32_t)even, a00);
            a00 = __smlad((int32_t)x0_odd, (int32_t)odd, a00);
            a10 = __smlad((int32_t)x1_even, (int32_t)even, a10);
            a10 = __smlad((int32_t)x1_odd, (int32_t)odd, a10);
            ptec_nn_load_s4x4_dsp(packed, e1, &even, &odd);
            a01 = __smlad((int32_t)x0_even, (int32_t)even, a01);
            a01 = __smlad((int32_t)x0_odd, (int32_t)odd, a01);
            a11 = __smlad((int32_t)x1_even, (int32_t)even, a11);
            a11 = __smlad((int32_t)x1_odd, (int32_t)odd, a11);
            e0 += 4;
            e1 += 4;
        }
        for (int32_t t = 0; t < tail; ++t) {
            const int32_t x = (int32_t)tail_pair[t];
            const int32_t v0 = ptec_nn_s4_at(packed, e0 + (size_t)t), v1 = ptec_nn_s4_at(packed, e1 + (size_t)t);
            a00 = __smlabb(x, v0, a00);
            a10 = __smlatb(x, v0, a10);
            a01 = __smlabb(x, v1, a01);
            a11 = __smlatb(x, v1, a11);
        }
        const ptec_nn_requant_dsp r0 = ptec_nn_requant_dsp_make(multipliers[o], shifts[o]);
        y0[o] = out_byte(a00, base[o], &r0, offset, lo, hi);
        if (y1 != NULL) {
            y1[o] = out_byte(a10, base[o], &r0, offset, lo, hi);
        }
        if (two_rows) {
            const ptec_nn_requant_dsp r1 = ptec_nn_requant_dsp_make(multipliers[o + 1], shifts[o + 1]);
            y0[o + 1] = out_byte(a01, base[o + 1], &r1, offset, lo, hi);
            if (y1 != NULL) {
                y1[o + 1] = out_byte(a11, base[o + 1], &r1, offset, lo, hi);
            }
        }
    }
}

#else
typedef int ptec_nn_rows_dot2_s4_dsp_unused; /* a translation unit must not be empty */
#endif
