/* int8 multiplication (cortex-m-ops.md §3.4). Broadcast as in add. */
#include "ptec_nn.h"
#include "ptec_nn_broadcast.h"
#include "ptec_nn_math.h"
#include "ptec_nn_variants.h"

ptec_status ptec_nn_mul_s8(const int8_t *large, const int8_t *small, uint32_t count,
                           uint32_t small_count, int8_t *output, const ptec_nn_mul_params *params)
{
    if (count == 0) {
        return PTEC_OK;
    }
    if (!ptec_nn_repeat_valid(large, small, count, small_count, output)) {
        return PTEC_INVALID_ARGUMENT;
    }
#if defined(PTEC_NN_MVE)
    return ptec_nn_mul_s8_mve(large, small, count, small_count, output, params);
#else
    const ptec_nn_mul_params p = *params;
    for (uint32_t base = 0; base < count; base += small_count) {
        for (uint32_t i = 0; i < small_count; ++i) {
            const int32_t product =
                (large[base + i] + p.large_offset) * (small[i] + p.small_offset);
            output[base + i] = ptec_nn_requantize_s8(product, p.output_quant.multiplier, p.output_quant.shift,
                                                     p.output_offset, p.activation.min, p.activation.max);
        }
    }
    return PTEC_OK;
#endif
}
