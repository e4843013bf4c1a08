/* Helium int8 multiplication: four elements per vector, the offset
 * product (within +-2^16) requantized with the exact vector form of
 * ptec_nn_mve.h. Broadcast periods as in ptec_nn_add_s8_mve.c. */
#include "ptec_nn_variants.h"

#if defined(PTEC_NN_MVE)
#include "ptec_nn_mve.h"

ptec_status ptec_nn_mul_s8_mve(const int8_t *large, const int8_t *small, uint32_t count, uint32_t small_count,
                               int8_t *output, const ptec_nn_mul_params *params)
{
    const ptec_nn_mul_params p = *params;
    const int32x4_t m = vdupq_n_s32(p.output_quant.multiplier), s = vdupq_n_s32(p.output_quant.shift);
    const int exact_min = p.output_quant.multiplier == INT32_MIN;
    for (uint32_t base = 0; base < count; base += small_count) {
        for (uint32_t i = 0; i < small_count; i += 4) {
            const mve_pred16_t valid = vctp32q(small_count - i);
            const int32x4_t a = vaddq_n_s32(vldrbq_z_s32(large + base + i, valid), p.large_offset);
            const int32x4_t b = vaddq_n_s32(vldrbq_z_s32(small + i, valid), p.small_offset);
            const int32x4_t product = vmulq_s32(a, b);
            int32x4_t y = ptec_nn_requantize_pick_mve(product, m, s, exact_min);
            y = ptec_nn_output_stage_mve(y, p.output_offset, p.activation.min, p.activation.max);
            vstrbq_p_s32(output + base + i, y, valid);
        }
    }
    return PTEC_OK;
}

#else
typedef int ptec_nn_mul_mve_unused; /* a translation unit must not be empty */
#endif
