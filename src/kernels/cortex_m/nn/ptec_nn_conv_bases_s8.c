/* Per output channel, everything of the accumulator that does not depend
 * on the input: bias + input_offset * (sum of the channel's weights),
 * modulo 2^32 (the matrix-multiply convolutions, ptec_nn_variants.h). */
#include "ptec_nn_dot.h"
#include "ptec_nn_variants.h"

void ptec_nn_conv_bases_s8(const int8_t *weights, int32_t rows, int32_t k, const int32_t *bias,
                           int32_t input_offset, int32_t *base)
{
    for (int32_t o = 0; o < rows; ++o) {
        const uint32_t sum = ptec_nn_sum_s8(weights + (size_t)o * (size_t)k, (size_t)k);
        base[o] = (int32_t)((uint32_t)input_offset * sum + (bias != NULL ? (uint32_t)bias[o] : 0u));
    }
}
