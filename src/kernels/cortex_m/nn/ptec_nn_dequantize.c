/* int8/int16 -> float32 (cortex-m-ops.md §3.2): one float multiply.
 * Both widths run the same formula; C11 has no templates, so one macro defines each
 * width's function and the formula is written once. */
#include "ptec_nn.h"

#define PTEC_NN_DEFINE_DEQUANTIZE(name, input_type)                                                \
    ptec_status name(const input_type *input, float *output, uint32_t count,                       \
                     const ptec_nn_quantize_params *params)                                         \
    {                                                                                               \
        if (count != 0 && (input == NULL || output == NULL)) {                                      \
            return PTEC_INVALID_ARGUMENT;                                                           \
        }                                                                                           \
        for (uint32_t i = 0; i < count; ++i) {                                                      \
            output[i] = (float)((int32_t)input[i] - params->zero_point) * params->scale;            \
        }                                                                                           \
        return PTEC_OK;                                                                             \
    }

PTEC_NN_DEFINE_DEQUANTIZE(ptec_nn_dequantize_s8_f32, int8_t)
PTEC_NN_DEFINE_DEQUANTIZE(ptec_nn_dequantize_s16_f32, int16_t)
