/* Helium int16 addition (Cortex-M55): four elements per vector, every step
 * of the reference (shift by left_shift, the two input requantizations,
 * the wrapping int32 sum, the output requantization, the clamp) done
 * lane-wise with the exact vector requantization of ptec_nn_mve.h, as in
 * ptec_nn_add_s8_mve.c. VLDRH.S32 widens four int16 inputs to int32 lanes
 * as it loads them, VSTRH.32 narrows the clamped lanes back (the clamp is
 * within int16, so nothing is lost). The small operand's period is walked
 * with a predicated last vector, so any broadcast period works. */
#include "ptec_nn_variants.h"

#if defined(PTEC_NN_MVE)
#include "ptec_nn_mve.h"

ptec_status ptec_nn_add_s16_mve(const int16_t *large, const int16_t *small, uint32_t count, uint32_t small_count,
                                int16_t *output, const ptec_nn_add_s16_params *params)
{
    const ptec_nn_add_s16_params p = *params;
    if (!ptec_nn_activation_s16_ok(p.activation)) {
        return PTEC_NOT_SUPPORTED;
    }
    const int32x4_t left = vdupq_n_s32(p.left_shift);
    const int32x4_t large_m = vdupq_n_s32(p.large_quant.multiplier), large_s = vdupq_n_s32(p.large_quant.shift);
    const int32x4_t small_m = vdupq_n_s32(p.small_quant.multiplier), small_s = vdupq_n_s32(p.small_quant.shift);
    const int32x4_t out_m = vdupq_n_s32(p.output_quant.multiplier), out_s = vdupq_n_s32(p.output_quant.shift);
    const int exact_min = p.large_quant.multiplier == INT32_MIN || p.small_quant.multiplier == INT32_MIN ||
                          p.output_quant.multiplier == INT32_MIN;
    for (uint32_t base = 0; base < count; base += small_count) {
        for (uint32_t i = 0; i < small_count; i += 4) {
            const mve_pred16_t valid = vctp32q(small_count - i);
            int32x4_t a = vldrhq_z_s32(large + base + i, valid);
            int32x4_t b = vldrhq_z_s32(small + i, valid);
            a = ptec_nn_requantize_pick_mve(vshlq_s32(a, left), large_m, large_s, exact_min);
            b = ptec_nn_requantize_pick_mve(vshlq_s32(b, left), small_m, small_s, exact_min);
            int32x4_t y = ptec_nn_requantize_pick_mve(vaddq_s32(a, b), out_m, out_s, exact_min);
            y = ptec_nn_output_stage_mve(y, 0, p.activation.min, p.activation.max);
            vstrhq_p_s32(output + base + i, y, valid);
        }
    }
    return PTEC_OK;
}

#else
typedef int ptec_nn_add_s16_mve_unused; /* a translation unit must not be empty */
#endif
