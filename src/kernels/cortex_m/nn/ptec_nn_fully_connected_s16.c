/* Fully connected layer with int16 activations and int8 weights [out, in],
 * one requantization for the layer and an optional int64 bias
 * (docs/kernels.md, "16-bit activations"; CMSIS-NN arm_fully_connected_s16,
 * whose filter offset is ignored: int8 weights are symmetric there too).
 * The DSP and Helium builds hand over to ptec_nn_fully_connected_s16_rows.c
 * (the same exact sums). */
#include "ptec_nn.h"
#include "ptec_nn_math.h"
#include "ptec_nn_variants.h"

#if !defined(PTEC_NN_MVE) && !defined(PTEC_NN_DSP)
/* Products per int32 partial sum: 511 * 2^22 < 2^31 (see convolve_s16). */
enum { PARTIAL_TAPS = 511 };
#endif

ptec_status ptec_nn_fully_connected_s16(const ptec_nn_fc_s16_params *params, const ptec_nn_fc_dims *dims,
                                        const int16_t *input, const int8_t *weights, const int64_t *bias,
                                        int16_t *output)
{
    const int32_t batches = dims->batches;
    const int32_t out_features = dims->output_features;
    if (batches < 0 || out_features < 0 || dims->input_features < 0) {
        return PTEC_INVALID_ARGUMENT;
    }
    if (batches == 0 || out_features == 0) {
        return PTEC_OK;
    }
    if (input == NULL || weights == NULL || output == NULL || params == NULL ||
        !ptec_nn_shifts_s64_ok(&params->quant.shift, 1)) {
        return PTEC_INVALID_ARGUMENT;
    }
#if defined(PTEC_NN_MVE) || defined(PTEC_NN_DSP)
    return ptec_nn_fully_connected_s16_rows(params, dims, input, weights, bias, output);
#else
    const ptec_nn_fc_s16_params p = *params;
    const int32_t reduced = ptec_nn_reduce_multiplier(p.quant.multiplier);
    const size_t n = (size_t)dims->input_features;
    for (int32_t b = 0; b < batches; ++b) {
        const int16_t *x = input + (size_t)b * n;
        int16_t *y = output + (size_t)b * (size_t)out_features;
        for (int32_t o = 0; o < out_features; ++o) {
            const int8_t *w = weights + (size_t)o * n;
            int64_t acc = 0;
            for (size_t i = 0; i < n; i += PARTIAL_TAPS) {
                const size_t end = n - i < PARTIAL_TAPS ? n : i + PARTIAL_TAPS;
                int32_t partial = 0;
                for (size_t k = i; k < end; ++k) {
                    partial += (int32_t)x[k] * (int32_t)w[k];
                }
                acc += partial;
            }
            y[o] = ptec_nn_output_s16(acc, bias, o, reduced, p.quant.shift, p.activation.min, p.activation.max);
        }
    }
    return PTEC_OK;
#endif
}
