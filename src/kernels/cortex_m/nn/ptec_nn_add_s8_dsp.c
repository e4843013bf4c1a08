/* DSP int8 addition: the reference's per-element steps with the three
 * requantizations' constants (shift split, rounding mask) computed once per
 * call instead of per element, and the output stage's clamp after a
 * saturating QADD. */
#include "ptec_nn_variants.h"

#if defined(PTEC_NN_DSP)
#include "ptec_nn_dsp.h"
#include "ptec_nn_math.h"

ptec_status ptec_nn_add_s8_dsp(const int8_t *large, const int8_t *small, uint32_t count, uint32_t small_count,
                               int8_t *output, const ptec_nn_add_params *params)
{
    const ptec_nn_add_params p = *params;
    const ptec_nn_requant_dsp large_q = ptec_nn_requant_dsp_make(p.large_quant.multiplier, p.large_quant.shift);
    const ptec_nn_requant_dsp small_q = ptec_nn_requant_dsp_make(p.small_quant.multiplier, p.small_quant.shift);
    const ptec_nn_requant_dsp out_q = ptec_nn_requant_dsp_make(p.output_quant.multiplier, p.output_quant.shift);
    for (uint32_t base = 0; base < count; base += small_count) {
        const int8_t *x = large + base;
        int8_t *y = output + base;
        for (uint32_t i = 0; i < small_count; ++i) {
            const int32_t a = ptec_nn_wrap_shl(x[i] + p.large_offset, p.left_shift);
            const int32_t b = ptec_nn_wrap_shl(small[i] + p.small_offset, p.left_shift);
            const int32_t sum = ptec_nn_wrap_add(ptec_nn_requantize_dsp(a, &large_q), ptec_nn_requantize_dsp(b, &small_q));
            y[i] = ptec_nn_output_stage_dsp(ptec_nn_requantize_dsp(sum, &out_q), p.output_offset, p.activation.min,
                                            p.activation.max);
        }
    }
    return PTEC_OK;
}

#else
typedef int ptec_nn_add_dsp_unused; /* a translation unit must not be empty */
#endif
