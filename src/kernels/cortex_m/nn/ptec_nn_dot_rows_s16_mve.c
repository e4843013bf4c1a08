/* The dot products of the Helium build's int16-activation convolution and
 * fully connected layer (Cortex-M55): int16 inputs times int8 weights, one
 * or two weight rows per pass over the input, eight elements per step.
 *
 * VLDRB.S16 widens eight weights to int16 lanes as it loads them, and
 * VMLALDAVA.S16 adds the eight lane products to a 64-bit accumulator
 * (RdaHi:RdaLo), exactly: each product has |x * w| <= 2^22, so a step adds
 * at most 2^25 in magnitude, and the sum of n products stays below
 * n * 2^22 < 2^63 for any n < 2^41. There are no int32 partial sums at all,
 * so the reference's blocks of 511 (which are exact too) give the same
 * integer for every input, the K = 512 sums of -32768 * -128 included.
 * The last step is predicated (VCTP.16): the lanes past n load nothing and
 * read as 0, which adds 0. */
#include "ptec_nn_variants.h"

#if defined(PTEC_NN_MVE)
#include "ptec_nn_mve.h"

static inline __attribute__((always_inline)) void dot_rows_impl(const int16_t *x, const int8_t *w0, size_t n,
                                                                size_t stride, int64_t *acc, const int two)
{
    const int8_t *w1 = w0 + (two ? stride : 0);
    int64_t total0 = acc[0], total1 = two ? acc[1] : 0;
    /* Pointers stepped, not indexed: GCC 12 then uses writeback loads
     * (five instructions a step, not ten). They stop at the tail. */
    for (size_t q = n >> 3; q > 0; --q) {
        const int16x8_t xv = vldrhq_s16(x);
        total0 = vmlaldavaq_s16(total0, xv, vldrbq_s16(w0));
        x += 8;
        w0 += 8;
        if (two) {
            total1 = vmlaldavaq_s16(total1, xv, vldrbq_s16(w1));
            w1 += 8;
        }
    }
    const size_t tail = n & 7;
    if (tail != 0) {
        const mve_pred16_t p = vctp16q((uint32_t)tail);
        const int16x8_t xv = vldrhq_z_s16(x, p);
        total0 = vmlaldavaq_s16(total0, xv, vldrbq_z_s16(w0, p));
        if (two) {
            total1 = vmlaldavaq_s16(total1, xv, vldrbq_z_s16(w1, p));
        }
    }
    acc[0] = total0;
    if (two) {
        acc[1] = total1;
    }
}

void ptec_nn_dot_rows_s16_mve(const int16_t *x, const int8_t *w, size_t n, size_t stride, int32_t rows,
                              int64_t *acc)
{
    if (rows >= 2) {
        dot_rows_impl(x, w, n, stride, acc, 1);
    } else {
        dot_rows_impl(x, w, n, stride, acc, 0);
    }
}

#else
typedef int ptec_nn_dot_rows_s16_mve_unused; /* a translation unit must not be empty */
#endif
