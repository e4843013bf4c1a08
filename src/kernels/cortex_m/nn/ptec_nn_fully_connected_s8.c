/* int8 fully connected layer (cortex-m-ops.md §3.8), weights [out, in].
 *
 * Two equivalent accumulator forms exist in .pte files: the bias form of
 * DSP/scalar exports and the kernel_sum form of MVE exports, where
 * kernel_sum[o] = bias[o] + input_offset * sum_i (w[o,i] + filter_offset)
 * was folded ahead of time. Both are accepted here. Accumulators wrap as
 * int32 on the target. */
#include "ptec_nn.h"
#include "ptec_nn_math.h"

ptec_status ptec_nn_fully_connected_s8(const ptec_nn_fc_params *params, const ptec_nn_fc_dims *dims,
                                       const int8_t *input, const int8_t *weights,
                                       const int32_t *bias, const int32_t *kernel_sum,
                                       int8_t *output)
{
    const int32_t batches = dims->batches;
    const int32_t in_features = dims->input_features;
    const int32_t out_features = dims->output_features;
    if (batches == 0 || out_features == 0) {
        return PTEC_OK;
    }
    if (input == NULL || weights == NULL || output == NULL) {
        return PTEC_INVALID_ARGUMENT;
    }
    const ptec_nn_fc_params p = *params;
    /* The kernel_sum form already holds the input offset. */
    const int32_t input_offset = kernel_sum != NULL ? 0 : p.input_offset;
    for (int32_t b = 0; b < batches; ++b) {
        const int8_t *x = input + (size_t)b * (size_t)in_features;
        for (int32_t o = 0; o < out_features; ++o) {
            const int8_t *w = weights + (size_t)o * (size_t)in_features;
            uint32_t acc;
            if (kernel_sum != NULL) {
                acc = (uint32_t)kernel_sum[o];
            } else {
                acc = bias != NULL ? (uint32_t)bias[o] : 0u;
            }
            for (int32_t i = 0; i < in_features; ++i) {
                acc += (uint32_t)((x[i] + input_offset) * (w[i] + p.filter_offset));
            }
            const int32_t y = ptec_nn_requantize((int32_t)acc, p.quant.multiplier, p.quant.shift);
            output[(size_t)b * (size_t)out_features + (size_t)o] =
                (int8_t)ptec_nn_output_stage(y, p.output_offset, p.activation.min, p.activation.max);
        }
    }
    return PTEC_OK;
}
