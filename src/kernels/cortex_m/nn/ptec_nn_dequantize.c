/* int8/int16 -> float32 (cortex-m-ops.md §3.2): one float multiply. */
#include "ptec_nn.h"

ptec_status ptec_nn_dequantize_s8_f32(const int8_t *input, float *output, uint32_t count,
                                      const ptec_nn_quantize_params *params)
{
    if (count != 0 && (input == NULL || output == NULL)) {
        return PTEC_INVALID_ARGUMENT;
    }
    for (uint32_t i = 0; i < count; ++i) {
        output[i] = (float)((int32_t)input[i] - params->zero_point) * params->scale;
    }
    return PTEC_OK;
}

ptec_status ptec_nn_dequantize_s16_f32(const int16_t *input, float *output, uint32_t count,
                                       const ptec_nn_quantize_params *params)
{
    if (count != 0 && (input == NULL || output == NULL)) {
        return PTEC_INVALID_ARGUMENT;
    }
    for (uint32_t i = 0; i < count; ++i) {
        output[i] = (float)((int32_t)input[i] - params->zero_point) * params->scale;
    }
    return PTEC_OK;
}
