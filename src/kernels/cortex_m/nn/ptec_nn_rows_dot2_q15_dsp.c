/* DSP kernel of the matrix-multiply convolution: two widened columns
 * (ptec_nn_widen2_q15_dsp) against `rows` filter rows, two rows at a time.
 * Each weight word is split once by SXTB16 into two int16 pairs that serve
 * both columns, so four weight bytes cost one load and two SXTB16 and feed
 * four SMLAD (eight multiply-adds). SMLAD's sum wraps modulo 2^32, as the
 * reference's accumulator does. */
#include "ptec_nn_variants.h"

#if defined(PTEC_NN_DSP)
#include "ptec_nn_dsp.h"
#include "ptec_nn_math.h"

void ptec_nn_rows_dot2_q15_dsp(const uint32_t *pair, const int8_t *w, int32_t k, int32_t rows,
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
        const int8_t *w0 = w + (size_t)o * (size_t)k;
        const int8_t *w1 = two_rows ? w0 + k : w0; /* a lone last row is computed twice */
        const uint32_t *xp = pair;
        int32_t a00 = 0, a01 = 0, a10 = 0, a11 = 0; /* a<column><row> */
        for (int32_t b = 0; b < blocks; ++b) {
            const uint32_t x0_even = xp[0], x0_odd = xp[1], x1_even = xp[2], x1_odd = xp[3];
            xp += 4;
            uint32_t v = ptec_nn_load4(w0);
            uint32_t even = ptec_nn_sxtb16_even(v), odd = ptec_nn_sxtb16_odd(v);
            a00 = __smlad((int32_t)x0_even, (int32_t)even, a00);
            a00 = __smlad((int32_t)x0_odd, (int32_t)odd, a00);
            a10 = __smlad((int32_t)x1_even, (int32_t)even, a10);
            a10 = __smlad((int32_t)x1_odd, (int32_t)odd, a10);
            v = ptec_nn_load4(w1);
            even = ptec_nn_sxtb16_even(v);
            odd = ptec_nn_sxtb16_odd(v);
            a01 = __smlad((int32_t)x0_even, (int32_t)even, a01);
            a01 = __smlad((int32_t)x0_odd, (int32_t)odd, a01);
            a11 = __smlad((int32_t)x1_even, (int32_t)even, a11);
            a11 = __smlad((int32_t)x1_odd, (int32_t)odd, a11);
            w0 += 4;
            w1 += 4;
        }
        for (int32_t t = 0; t < tail; ++t) {
            const int32_t x = (int32_t)tail_pair[t];
            const int32_t v0 = w0[t], v1 = w1[t];
            a00 = __smlabb(x, v0, a00);
            a10 = __smlatb(x, v0, a10);
            a01 = __smlabb(x, v1, a01);
            a11 = __smlatb(x, v1, a11);
        }
        const ptec_nn_requant_dsp r0 = ptec_nn_requant_dsp_make(multipliers[o], shifts[o]);
        y0[o] = ptec_nn_output_stage_dsp(ptec_nn_requantize_dsp(ptec_nn_wrap_add(a00, base[o]), &r0), offset, lo, hi);
        if (y1 != NULL) {
            y1[o] = ptec_nn_output_stage_dsp(ptec_nn_requantize_dsp(ptec_nn_wrap_add(a10, base[o]), &r0), offset, lo, hi);
        }
        if (two_rows) {
            const ptec_nn_requant_dsp r1 = ptec_nn_requant_dsp_make(multipliers[o + 1], shifts[o + 1]);
            y0[o + 1] = ptec_nn_output_stage_dsp(ptec_nn_requantize_dsp(ptec_nn_wrap_add(a01, base[o + 1]), &r1), offset, lo, hi);
            if (y1 != NULL) {
                y1[o + 1] = ptec_nn_output_stage_dsp(ptec_nn_requantize_dsp(ptec_nn_wrap_add(a11, base[o + 1]), &r1), offset, lo, hi);
            }
        }
    }
}

#else
typedef int ptec_nn_rows_dot2_dsp_unused; /* a translation unit must not be empty */
#endif
