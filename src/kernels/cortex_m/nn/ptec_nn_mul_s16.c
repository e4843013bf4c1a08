/* int16 multiplication (docs/kernels.md, "16-bit activations"; CMSIS-NN
 * arm_elementwise_mul_s16): zero points are 0, the int32 product (at most
 * 2^30 in magnitude) is requantized and clamped. Broadcast as in add. */
#include "ptec_nn.h"
#include "ptec_nn_math.h"
#include "ptec_nn_variants.h"

ptec_status ptec_nn_mul_s16(const int16_t *large, const int16_t *small, uint32_t count, uint32_t small_count,
                            int16_t *output, const ptec_nn_mul_s16_params *params)
{
    if (count == 0) {
        return PTEC_OK;
    }
    if (large == NULL || small == NULL || output == NULL || params == NULL || small_count == 0 ||
        count % small_count != 0) {
        return PTEC_INVALID_ARGUMENT;
    }
#if defined(PTEC_NN_MVE)
    const ptec_status status = ptec_nn_mul_s16_mve(large, small, count, small_count, output, params);
    if (status != PTEC_NOT_SUPPORTED) {
        return status;
    }
#elif defined(PTEC_NN_DSP)
    return ptec_nn_mul_s16_dsp(large, small, count, small_count, output, params);
#endif
    const ptec_nn_mul_s16_params p = *params;
    for (uint32_t base = 0; base < count; base += small_count) {
        for (uint32_t i = 0; i < small_count; ++i) {
            const int32_t product = (int32_t)large[base + i] * (int32_t)small[i];
            output[base + i] = (int16_t)ptec_nn_clamp(
                ptec_nn_requantize(product, p.output_quant.multiplier, p.output_quant.shift), p.activation.min,
                p.activation.max);
        }
    }
    return PTEC_OK;
}
