/* float32 -> int8/int16 affine quantization (cortex-m-ops.md §3.1).
 *
 * Single precision throughout, as upstream's scalar path: the product
 * x * (1/scale) is rounded to float before nearbyint (ties to even).
 * Inputs outside int range saturate and NaN counts as 0, where upstream
 * is undefined. */
#include <math.h>

#include "ptec_nn.h"

static int32_t quantize_one(float x, float inverse_scale, const ptec_nn_quantize_params *params)
{
    float rounded = nearbyintf(inverse_scale * x);
    if (rounded != rounded) {
        rounded = 0.0f;
    }
    /* Beyond +-2^30 every zero point and range gives the clamp bound. */
    if (rounded >= 1073741824.0f) {
        return params->quant_max;
    }
    if (rounded <= -1073741824.0f) {
        return params->quant_min;
    }
    const int64_t q = (int64_t)params->zero_point + (int64_t)(int32_t)rounded;
    if (q < params->quant_min) {
        return params->quant_min;
    }
    if (q > params->quant_max) {
        return params->quant_max;
    }
    return (int32_t)q;
}

/* Both widths run the same loop; one macro defines each width's function
 * (as ptec_nn_dequantize.c does) so the loop is written once. */
#define PTEC_NN_DEFINE_QUANTIZE(name, output_type)                                   \
    ptec_status name(const float *input, output_type *output, uint32_t count,         \
                     const ptec_nn_quantize_params *params)                            \
    {                                                                                  \
        if (count != 0 && (input == NULL || output == NULL)) {                         \
            return PTEC_INVALID_ARGUMENT;                                              \
        }                                                                              \
        const float inverse_scale = 1.0f / params->scale;                              \
        for (uint32_t i = 0; i < count; ++i) {                                         \
            output[i] = (output_type)quantize_one(input[i], inverse_scale, params);    \
        }                                                                              \
        return PTEC_OK;                                                                \
    }

PTEC_NN_DEFINE_QUANTIZE(ptec_nn_quantize_f32_s8, int8_t)
PTEC_NN_DEFINE_QUANTIZE(ptec_nn_quantize_f32_s16, int16_t)
