/* Table lookup activation (cortex-m-ops.md §3.6): lut[0] is the output
 * for input -128. */
#include "ptec_nn.h"

ptec_status ptec_nn_lut_s8(const int8_t *input, const int8_t lut[256], int8_t *output,
                           uint32_t count)
{
    if (count != 0 && (input == NULL || lut == NULL || output == NULL)) {
        return PTEC_INVALID_ARGUMENT;
    }
    for (uint32_t i = 0; i < count; ++i) {
        output[i] = lut[(uint8_t)(input[i] + 128)];
    }
    return PTEC_OK;
}
