/* ptec_nn_conv_bases_s8 for packed 4-bit rows (ptec_nn_s4.h): per output
 * channel, bias + input_offset * (sum of the channel's weights), modulo
 * 2^32, for the matrix-multiply convolution of ptec_nn_convolve_s4. */
#include "ptec_nn_s4.h"
#include "ptec_nn_variants.h"

void ptec_nn_conv_bases_s4(const int8_t *packed, int32_t rows, int32_t k, const int32_t *bias,
                           int32_t input_offset, int32_t *base)
{
    for (int32_t o = 0; o < rows; ++o) {
        const uint32_t sum = ptec_nn_sum_s4(packed, (size_t)o * (size_t)k, (size_t)k);
        base[o] = (int32_t)((uint32_t)input_offset * sum + (bias != NULL ? (uint32_t)bias[o] : 0u));
    }
}
