/* Quantized division in float32 (cortex-m-ops.md §3.5). A zero
 * denominator gives a quotient of 0, as upstream. */
#include <math.h>

#include "ptec_nn.h"

static int32_t divide_one(int32_t numerator, int32_t denominator, const ptec_nn_div_params *p,
                          int32_t type_min, int32_t type_max)
{
    const float quotient = denominator != 0 ? (float)numerator / (float)denominator : 0.0f;
    const float y = roundf(quotient * p->output_scale) + (float)p->output_zero_point;
    if (!(y > (float)type_min)) { /* also catches NaN */
        return type_min;
    }
    if (y > (float)type_max) {
        return type_max;
    }
    return (int32_t)y;
}

ptec_status ptec_nn_div_s8(const int8_t *numerator, const int8_t *denominator, int8_t *output,
                           uint32_t count, const ptec_nn_div_params *params)
{
    if (count != 0 && (numerator == NULL || denominator == NULL || output == NULL)) {
        return PTEC_INVALID_ARGUMENT;
    }
    for (uint32_t i = 0; i < count; ++i) {
        output[i] = (int8_t)divide_one(numerator[i] - params->numerator_zero_point,
                                       denominator[i] - params->denominator_zero_point, params,
                                       INT8_MIN, INT8_MAX);
    }
    return PTEC_OK;
}

ptec_status ptec_nn_div_s16(const int16_t *numerator, const int16_t *denominator,
                            int16_t *output, uint32_t count, const ptec_nn_div_params *params)
{
    if (count != 0 && (numerator == NULL || denominator == NULL || output == NULL)) {
        return PTEC_INVALID_ARGUMENT;
    }
    for (uint32_t i = 0; i < count; ++i) {
        output[i] = (int16_t)divide_one(numerator[i] - params->numerator_zero_point,
                                        denominator[i] - params->denominator_zero_point, params,
                                        INT16_MIN, INT16_MAX);
    }
    return PTEC_OK;
}
