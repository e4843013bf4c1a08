/* Widens two im2col columns to int16 for the SMLAD kernel
 * (ptec_nn_rows_dot2_q15_dsp). Per block of four values the pair holds
 * four words: column 0's values 0 and 2, its values 1 and 3, then the same
 * for column 1. That is the order SXTB16 and SXTB16 ROR #8 split a weight
 * word into, so the weights need no reordering. The last k % 4 values take
 * one word each: column 0 in the low half, column 1 in the high half. */
#include "ptec_nn_variants.h"

#if defined(PTEC_NN_DSP)
#include "ptec_nn_dsp.h"

void ptec_nn_widen2_q15_dsp(const int8_t *x0, const int8_t *x1, int32_t k, uint32_t *pair)
{
    const int32_t blocks = k >> 2;
    for (int32_t b = 0; b < blocks; ++b) {
        const uint32_t v0 = ptec_nn_load4(x0);
        const uint32_t v1 = ptec_nn_load4(x1);
        pair[0] = ptec_nn_sxtb16_even(v0);
        pair[1] = ptec_nn_sxtb16_odd(v0);
        pair[2] = ptec_nn_sxtb16_even(v1);
        pair[3] = ptec_nn_sxtb16_odd(v1);
        pair += 4;
        x0 += 4;
        x1 += 4;
    }
    for (int32_t t = 0; t < (k & 3); ++t) {
        pair[t] = (uint32_t)(uint16_t)x0[t] | (uint32_t)(uint16_t)x1[t] << 16;
    }
}

#else
typedef int ptec_nn_widen2_dsp_unused; /* a translation unit must not be empty */
#endif
