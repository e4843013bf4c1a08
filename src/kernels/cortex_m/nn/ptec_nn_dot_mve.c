/* Helium forms of the dot products and sums of ptec_nn_dot.h (used by the
 * fully connected layer and by the convolutions' per-channel constants):
 * VMLADAVA and VADDVA reduce 16 bytes per instruction into a wrapping
 * int32, and a predicated last block takes the n % 16 rest without
 * reading past it. */
#include "ptec_nn_dot.h"
#include "ptec_nn_isa.h"

#if defined(PTEC_NN_MVE)
#include <arm_mve.h>

uint32_t ptec_nn_dot_s8(const int8_t *x, const int8_t *w, size_t n)
{
    int32_t sum = 0;
    for (size_t b = n >> 4; b > 0; --b) {
        sum = vmladavaq_s8(sum, vld1q_s8(x), vld1q_s8(w));
        x += 16;
        w += 16;
    }
    if ((n & 15) != 0) {
        const mve_pred16_t tail = vctp8q((uint32_t)(n & 15));
        sum = vmladavaq_s8(sum, vldrbq_z_s8(x, tail), vldrbq_z_s8(w, tail));
    }
    return (uint32_t)sum;
}

void ptec_nn_dot4_s8(const int8_t *x, const int8_t *w, size_t stride, size_t n, uint32_t sums[4])
{
    const int8_t *w0 = w;
    const int8_t *w1 = w0 + stride;
    const int8_t *w2 = w1 + stride;
    const int8_t *w3 = w2 + stride;
    int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (size_t b = n >> 4; b > 0; --b) {
        const int8x16_t xv = vld1q_s8(x);
        s0 = vmladavaq_s8(s0, xv, vld1q_s8(w0));
        s1 = vmladavaq_s8(s1, xv, vld1q_s8(w1));
        s2 = vmladavaq_s8(s2, xv, vld1q_s8(w2));
        s3 = vmladavaq_s8(s3, xv, vld1q_s8(w3));
        x += 16;
        w0 += 16;
        w1 += 16;
        w2 += 16;
        w3 += 16;
    }
    if ((n & 15) != 0) {
        const mve_pred16_t tail = vctp8q((uint32_t)(n & 15));
        const int8x16_t xv = vldrbq_z_s8(x, tail);
        s0 = vmladavaq_s8(s0, xv, vldrbq_z_s8(w0, tail));
        s1 = vmladavaq_s8(s1, xv, vldrbq_z_s8(w1, tail));
        s2 = vmladavaq_s8(s2, xv, vldrbq_z_s8(w2, tail));
        s3 = vmladavaq_s8(s3, xv, vldrbq_z_s8(w3, tail));
    }
    sums[0] += (uint32_t)s0;
    sums[1] += (uint32_t)s1;
    sums[2] += (uint32_t)s2;
    sums[3] += (uint32_t)s3;
}

uint32_t ptec_nn_sum_s8(const int8_t *w, size_t n)
{
    int32_t sum = 0;
    for (size_t b = n >> 4; b > 0; --b) {
        sum = vaddvaq_s8(sum, vld1q_s8(w));
        w += 16;
    }
    if ((n & 15) != 0) {
        sum = vaddvaq_s8(sum, vldrbq_z_s8(w, vctp8q((uint32_t)(n & 15))));
    }
    return (uint32_t)sum;
}

#else
typedef int ptec_nn_dot_mve_unused; /* a translation unit must not be empty */
#endif
