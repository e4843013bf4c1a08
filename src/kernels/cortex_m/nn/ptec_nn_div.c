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

/* Both widths run the same loop; one macro defines each width's function
 * (as ptec_nn_dequantize.c does) so the loop is written once. */
#define PTEC_NN_DEFINE_DIV(name, type, type_min, type_max)                                          \
    ptec_status name(const type *numerator, const type *denominator, type *output, uint32_t count,  \
                     const ptec_nn_div_params *params)                                               \
    {                                                                                                \
        if (count != 0 && (numerator == NULL || denominator == NULL || output == NULL)) {            \
            return PTEC_INVALID_ARGUMENT;                                                            \
        }                                                                                            \
        for (uint32_t i = 0; i < count; ++i) {                                                       \
            output[i] = (type)divide_one(numerator[i] - params->numerator_zero_point,                \
                                         denominator[i] - params->denominator_zero_point, params,    \
                                         type_min, type_max);                                        \
        }                                                                                            \
        return PTEC_OK;                                                                              \
    }

PTEC_NN_DEFINE_DIV(ptec_nn_div_s8, int8_t, INT8_MIN, INT8_MAX)
PTEC_NN_DEFINE_DIV(ptec_nn_div_s16, int16_t, INT16_MIN, INT16_MAX)
