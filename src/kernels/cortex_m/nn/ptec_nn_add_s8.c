/* int8 addition with independent input scales (cortex-m-ops.md §3.3).
 *
 * Both inputs are brought to a common scale with 20 bits of headroom,
 * summed, then requantized to the output. The small operand repeats with
 * period small_count, which covers element-wise (small_count == count) and
 * per-channel broadcast over an NHWC tensor (small_count == C). */
#include "ptec_nn.h"
#include "ptec_nn_broadcast.h"
#include "ptec_nn_math.h"
#include "ptec_nn_variants.h"

ptec_status ptec_nn_add_s8(const int8_t *large, const int8_t *small, uint32_t count,
                           uint32_t small_count, int8_t *output, const ptec_nn_add_params *params)
{
    if (count == 0) {
        return PTEC_OK;
    }
    if (!ptec_nn_repeat_valid(large, small, count, small_count, output)) {
        return PTEC_INVALID_ARGUMENT;
    }
#if defined(PTEC_NN_MVE)
    return ptec_nn_add_s8_mve(large, small, count, small_count, output, params);
#elif defined(PTEC_NN_DSP)
    return ptec_nn_add_s8_dsp(large, small, count, small_count, output, params);
#else
    const ptec_nn_add_params p = *params;
    for (uint32_t base = 0; base < count; base += small_count) {
        for (uint32_t i = 0; i < small_count; ++i) {
            const int32_t a = ptec_nn_wrap_shl(large[base + i] + p.large_offset, p.left_shift);
            const int32_t b = ptec_nn_wrap_shl(small[i] + p.small_offset, p.left_shift);
            const int32_t sum =
                ptec_nn_wrap_add(ptec_nn_requantize(a, p.large_quant.multiplier, p.large_quant.shift),
                                 ptec_nn_requantize(b, p.small_quant.multiplier, p.small_quant.shift));
            output[base + i] = ptec_nn_requantize_s8(sum, p.output_quant.multiplier, p.output_quant.shift,
                                                     p.output_offset, p.activation.min, p.activation.max);
        }
    }
    return PTEC_OK;
#endif
}
