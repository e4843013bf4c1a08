/* Helium forms of the dot products and sums of ptec_nn_dot.h (used by the
 * fully connected layer and by the convolutions' per-channel constants):
 * VMLADAVA and VADDVA reduce 16 bytes per instruction into a wrapping
 * int32, and a predicated last block takes the n % 16 rest without
 * reading past it. */
#include "ptec_nn_dot.h"
#include "ptec_nn_isa.h"

#if defined(PTEC_NN_MVE)
#include "ptec_nn_mve.h"

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
    ptec_nn_dot4_rows_mve(x, w, w + stride, w + 2 * stride, w + 3 * stride, n, sums);
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
