/* DSP forms of the dot products and sums of ptec_nn_dot.h (used by the
 * fully connected layer and by the convolutions' per-channel constants):
 * each word of four int8 values splits into two int16 pairs (SXTB16, and
 * SXTB16 ROR #8 for bytes 1 and 3) and two SMLAD add four products. The
 * sums use SMLAD with 1 in both halves. n % 4 values end scalar. */
#include "ptec_nn_dot.h"
#include "ptec_nn_isa.h"

#if defined(PTEC_NN_DSP)
#include "ptec_nn_dsp.h"

static const int32_t ones = 0x00010001;

uint32_t ptec_nn_dot_s8(const int8_t *x, const int8_t *w, size_t n)
{
    int32_t sum = 0;
    for (size_t b = n >> 2; b > 0; --b) {
        const uint32_t xv = ptec_nn_load4(x), wv = ptec_nn_load4(w);
        sum = __smlad((int32_t)ptec_nn_sxtb16_even(xv), (int32_t)ptec_nn_sxtb16_even(wv), sum);
        sum = __smlad((int32_t)ptec_nn_sxtb16_odd(xv), (int32_t)ptec_nn_sxtb16_odd(wv), sum);
        x += 4;
        w += 4;
    }
    uint32_t total = (uint32_t)sum;
    for (size_t i = 0; i < (n & 3); ++i) {
        total += (uint32_t)(x[i] * w[i]);
    }
    return total;
}

void ptec_nn_dot4_s8(const int8_t *x, const int8_t *w, size_t stride, size_t n, uint32_t sums[4])
{
    const int8_t *w0 = w;
    const int8_t *w1 = w0 + stride;
    const int8_t *w2 = w1 + stride;
    const int8_t *w3 = w2 + stride;
    int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (size_t b = n >> 2; b > 0; --b) {
        const uint32_t xv = ptec_nn_load4(x);
        const int32_t x_even = (int32_t)ptec_nn_sxtb16_even(xv), x_odd = (int32_t)ptec_nn_sxtb16_odd(xv);
        uint32_t v = ptec_nn_load4(w0);
        s0 = __smlad(x_even, (int32_t)ptec_nn_sxtb16_even(v), s0);
        s0 = __smlad(x_odd, (int32_t)ptec_nn_sxtb16_odd(v), s0);
        v = ptec_nn_load4(w1);
        s1 = __smlad(x_even, (int32_t)ptec_nn_sxtb16_even(v), s1);
        s1 = __smlad(x_odd, (int32_t)ptec_nn_sxtb16_odd(v), s1);
        v = ptec_nn_load4(w2);
        s2 = __smlad(x_even, (int32_t)ptec_nn_sxtb16_even(v), s2);
        s2 = __smlad(x_odd, (int32_t)ptec_nn_sxtb16_odd(v), s2);
        v = ptec_nn_load4(w3);
        s3 = __smlad(x_even, (int32_t)ptec_nn_sxtb16_even(v), s3);
        s3 = __smlad(x_odd, (int32_t)ptec_nn_sxtb16_odd(v), s3);
        x += 4;
        w0 += 4;
        w1 += 4;
        w2 += 4;
        w3 += 4;
    }
    uint32_t t0 = (uint32_t)s0, t1 = (uint32_t)s1, t2 = (uint32_t)s2, t3 = (uint32_t)s3;
    for (size_t i = 0; i < (n & 3); ++i) {
        const int32_t v = x[i];
        t0 += (uint32_t)(v * w0[i]);
        t1 += (uint32_t)(v * w1[i]);
        t2 += (uint32_t)(v * w2[i]);
        t3 += (uint32_t)(v * w3[i]);
    }
    sums[0] += t0;
    sums[1] += t1;
    sums[2] += t2;
    sums[3] += t3;
}

uint32_t ptec_nn_sum_s8(const int8_t *w, size_t n)
{
    int32_t sum = 0;
    for (size_t b = n >> 2; b > 0; --b) {
        const uint32_t v = ptec_nn_load4(w);
        sum = __smlad((int32_t)ptec_nn_sxtb16_even(v), ones, sum);
        sum = __smlad((int32_t)ptec_nn_sxtb16_odd(v), ones, sum);
        w += 4;
    }
    uint32_t total = (uint32_t)sum;
    for (size_t i = 0; i < (n & 3); ++i) {
        total += (uint32_t)w[i];
    }
    return total;
}

#else
typedef int ptec_nn_dot_dsp_unused; /* a translation unit must not be empty */
#endif
