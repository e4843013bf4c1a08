/* Helium int16 multiplication (Cortex-M55): four elements per vector, the
 * int32 product (at most 2^30 in magnitude) requantized with the exact
 * vector form of ptec_nn_mve.h and clamped, as in ptec_nn_mul_s8_mve.c;
 * VLDRH.S32 widens, VSTRH.32 narrows the clamped lanes. Broadcast periods
 * as in ptec_nn_add_s16_mve.c. */
#include "ptec_nn_variants.h"

#if defined(PTEC_NN_MVE)
#include "ptec_nn_mve.h"

ptec_status ptec_nn_mul_s16_mve(const int16_t *large, const int16_t *small, uint32_t count, uint32_t small_count,
                                int16_t *output, const ptec_nn_mul_s16_params *params)
{
    const ptec_nn_mul_s16_params p = *params;
    if (!ptec_nn_activation_s16_ok(p.activation)) {
        return PTEC_NOT_SUPPORTED;
    }
    const int32x4_t m = vdupq_n_s32(p.output_quant.multiplier), s = vdupq_n_s32(p.output_quant.shift);
    const int exact_min = p.output_quant.multiplier == INT32_MIN;
    for (uint32_t base = 0; base < count; base += small_count) {
        for (uint32_t i = 0; i < small_count; i += 4) {
            const mve_pred16_t valid = vctp32q(small_count - i);
            const int32x4_t product =
                vmulq_s32(vldrhq_z_s32(large + base + i, valid), vldrhq_z_s32(small + i, valid));
            int32x4_t y = ptec_nn_requantize_pick_mve(product, m, s, exact_min);
            y = ptec_nn_output_stage_mve(y, 0, p.activation.min, p.activation.max);
            vstrhq_p_s32(output + base + i, y, valid);
        }
    }
    return PTEC_OK;
}

#else
typedef int ptec_nn_mul_s16_mve_unused; /* a translation unit must not be empty */
#endif
