/* int16 addition with independent input scales (docs/kernels.md, "16-bit
 * activations"; CMSIS-NN arm_elementwise_add_s16). Zero points are 0, so
 * each input is only shifted left by left_shift (15 bits of headroom for
 * int16, as TFLite's add kernel chooses), requantized to the common scale;
 * the int32 sum is requantized to the output and clamped. The wrap-around
 * of the sum is the target's int32 addition, as for int8 (§3.3). The small
 * operand repeats with period small_count, as in ptec_nn_add_s8. */
#include "ptec_nn.h"
#include "ptec_nn_math.h"
#include "ptec_nn_variants.h"

ptec_status ptec_nn_add_s16(const int16_t *large, const int16_t *small, uint32_t count, uint32_t small_count,
                            int16_t *output, const ptec_nn_add_s16_params *params)
{
    if (count == 0) {
        return PTEC_OK;
    }
    if (large == NULL || small == NULL || output == NULL || params == NULL || small_count == 0 ||
        count % small_count != 0 || params->left_shift < 0 || params->left_shift > 16) {
        return PTEC_INVALID_ARGUMENT;
    }
#if defined(PTEC_NN_MVE)
    const ptec_status status = ptec_nn_add_s16_mve(large, small, count, small_count, output, params);
    if (status != PTEC_NOT_SUPPORTED) {
        return status;
    }
#endif
    const ptec_nn_add_s16_params p = *params;
    for (uint32_t base = 0; base < count; base += small_count) {
        for (uint32_t i = 0; i < small_count; ++i) {
            /* |x| <= 2^15, so x * 2^16 still fits in int32. */
            const int32_t a = ptec_nn_wrap_shl(large[base + i], p.left_shift);
            const int32_t b = ptec_nn_wrap_shl(small[i], p.left_shift);
            const int32_t sum = ptec_nn_wrap_add(ptec_nn_requantize(a, p.large_quant.multiplier, p.large_quant.shift),
                                                 ptec_nn_requantize(b, p.small_quant.multiplier, p.small_quant.shift));
            output[base + i] = (int16_t)ptec_nn_clamp(
                ptec_nn_requantize(sum, p.output_quant.multiplier, p.output_quant.shift), p.activation.min,
                p.activation.max);
        }
    }
    return PTEC_OK;
}
