/* The dot products of the DSP build's int16-activation convolution and
 * fully connected layer (Cortex-M33, M7, M4): int16 inputs times int8
 * weights, one or two weight rows per pass over the input.
 *
 * Per four elements: two word loads bring x0..x3 as the pairs (x0, x1) and
 * (x2, x3); PKHBT/PKHTB regroup them as (x0, x2) and (x1, x3), the order in
 * which SXTB16 and SXTB16 ROR #8 widen a word of four weights, so each
 * weight row costs one load, two extensions and two SMLADs.
 *
 * Exactness (the result must equal the reference's exact sum for every
 * input). Every product has |x * w| <= 32768 * 128 = 2^22 (the only
 * product of that size is -32768 * -128 = +2^22; the negative ones are at
 * least -32767 * 128 > -2^22). The products are summed in int32 in blocks
 * of at most BLOCK = 508 (127 steps of four), tail included, and each
 * block's sum is then added to the int64 total. Any partial sum of m <= 508
 * products lies within +-508 * 2^22 = +-(2^31 - 2^24) (4 * 2^22 = 2^24), so
 * no intermediate value of the int32 sum ever leaves int32: SMLAD adds its
 * two products to the accumulator exactly and keeps the low 32 bits, which
 * are then the exact value (its Q flag, which nobody reads, stays clear).
 * The int64 total of exact block sums is the exact dot product: |total| <=
 * n * 2^22 < 2^63 for any n < 2^41, far beyond any size_t a tensor on these
 * cores can have. The reference sums blocks of 511 rather than 508; both
 * are exact, so the int64 results are the same integer. A block of 512
 * would not be: 512 products of -32768 * -128 sum to 2^31 (the K = 512
 * vector cases). */
#include "ptec_nn_variants.h"

#if defined(PTEC_NN_DSP)
#include "ptec_nn_dsp.h"

/* Products per int32 block: a multiple of 4, at most 511 (above). */
enum { BLOCK = 508 };

/* Two int16 values as one word (unaligned loads are single LDRs here). */
static inline uint32_t load2_s16(const int16_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline __attribute__((always_inline)) void dot_rows_impl(const int16_t *x, const int8_t *w0, size_t n,
                                                                size_t stride, int64_t *acc, const int two)
{
    const int8_t *w1 = w0 + (two ? stride : 0);
    int64_t total0 = acc[0], total1 = two ? acc[1] : 0;
    while (n > 0) {
        const size_t chunk = n < BLOCK ? n : BLOCK;
        int32_t s0 = 0, s1 = 0;
        for (size_t q = chunk >> 2; q > 0; --q) {
            const uint32_t a = load2_s16(x), b = load2_s16(x + 2);
            const int32_t x_even = (int32_t)ptec_nn_pack_low16(a, b); /* (x0, x2) */
            const int32_t x_odd = (int32_t)ptec_nn_pack_high16(a, b); /* (x1, x3) */
            uint32_t v = ptec_nn_load4(w0);
            s0 = __smlad(x_even, (int32_t)ptec_nn_sxtb16_even(v), s0);
            s0 = __smlad(x_odd, (int32_t)ptec_nn_sxtb16_odd(v), s0);
            if (two) {
                v = ptec_nn_load4(w1);
                s1 = __smlad(x_even, (int32_t)ptec_nn_sxtb16_even(v), s1);
                s1 = __smlad(x_odd, (int32_t)ptec_nn_sxtb16_odd(v), s1);
                w1 += 4;
            }
            x += 4;
            w0 += 4;
        }
        for (size_t i = 0; i < (chunk & 3); ++i) {
            s0 += (int32_t)x[i] * (int32_t)w0[i];
            if (two) {
                s1 += (int32_t)x[i] * (int32_t)w1[i];
            }
        }
        x += chunk & 3;
        w0 += chunk & 3;
        w1 += two ? (chunk & 3) : 0;
        total0 += s0;
        total1 += s1;
        n -= chunk;
    }
    acc[0] = total0;
    if (two) {
        acc[1] = total1;
    }
}

void ptec_nn_dot_rows_s16_dsp(const int16_t *x, const int8_t *w, size_t n, size_t stride, int32_t rows,
                              int64_t *acc)
{
    if (rows >= 2) {
        dot_rows_impl(x, w, n, stride, acc, 1);
    } else {
        dot_rows_impl(x, w, n, stride, acc, 0);
    }
}

#else
typedef int ptec_nn_dot_rows_s16_dsp_unused; /* a translation unit must not be empty */
#endif
