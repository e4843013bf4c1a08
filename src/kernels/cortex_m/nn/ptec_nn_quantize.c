/* float32 -> int8/int16 affine quantization (cortex-m-ops.md §3.1).
 *
 * Single precision throughout, as upstream's scalar path: the product
 * x * (1/scale) is rounded to float before nearbyint (ties to even).
 * Inputs outside int range saturate and NaN counts as 0, where upstream
 * is undefined. */
#include <math.h>

#include "ptec_nn.h"
#include "ptec_nn_variants.h"

/* What the fast paths compute exactly (see ptec_nn_quantize_fpu.c and
 * _mve.c): a zero point well inside int32, and for Helium a 1/scale small
 * enough that subnormal inputs can only round to 0. Anything else takes
 * the reference loop. */
#define FAST_ZERO_POINT_LIMIT 16777216 /* 2^24 */
#define MVE_INVERSE_SCALE_LIMIT 0x1p100f

#if defined(PTEC_NN_QUANTIZE_MVE) || defined(PTEC_NN_QUANTIZE_FPU)
static int fast_path_exact(float inverse_scale, const ptec_nn_quantize_params *params)
{
    (void)inverse_scale;
    if (params->zero_point <= -FAST_ZERO_POINT_LIMIT || params->zero_point >= FAST_ZERO_POINT_LIMIT) {
        return 0;
    }
#if defined(PTEC_NN_QUANTIZE_MVE)
    return inverse_scale <= MVE_INVERSE_SCALE_LIMIT;
#else
    return 1;
#endif
}
#endif

#if defined(PTEC_NN_QUANTIZE_MVE)
#define QUANTIZE_FAST(bits) ptec_nn_quantize_f32_s##bits##_mve
#elif defined(PTEC_NN_QUANTIZE_FPU)
#define QUANTIZE_FAST(bits) ptec_nn_quantize_f32_s##bits##_fpu
#endif

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
#if defined(QUANTIZE_FAST)
#define TRY_FAST(bits)                                                                 \
    if (fast_path_exact(inverse_scale, params)) {                                      \
        QUANTIZE_FAST(bits)(input, output, count, params);                             \
        return PTEC_OK;                                                                \
    }
#else
#define TRY_FAST(bits)
#endif

#define PTEC_NN_DEFINE_QUANTIZE(name, output_type, bits)                               \
    ptec_status name(const float *input, output_type *output, uint32_t count,         \
                     const ptec_nn_quantize_params *params)                            \
    {                                                                                  \
        if (count != 0 && (input == NULL || output == NULL)) {                         \
            return PTEC_INVALID_ARGUMENT;                                              \
        }                                                                              \
        const float inverse_scale = 1.0f / params->scale;                              \
        TRY_FAST(bits)                                                                 \
        for (uint32_t i = 0; i < count; ++i) {                                         \
            output[i] = (output_type)quantize_one(input[i], inverse_scale, params);    \
        }                                                                              \
        return PTEC_OK;                                                                \
    }

PTEC_NN_DEFINE_QUANTIZE(ptec_nn_quantize_f32_s8, int8_t, 8)
PTEC_NN_DEFINE_QUANTIZE(ptec_nn_quantize_f32_s16, int16_t, 16)
