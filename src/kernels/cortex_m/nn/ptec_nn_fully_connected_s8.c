/* int8 fully connected layer (cortex-m-ops.md §3.8), weights [out, in].
 *
 * Two equivalent accumulator forms exist in .pte files: the bias form of
 * DSP/scalar exports and the kernel_sum form of MVE exports, where
 * kernel_sum[o] = bias[o] + input_offset * sum_i (w[o,i] + filter_offset)
 * was folded ahead of time. Both are accepted here.
 *
 * The offsets are taken out of the inner loop, modulo 2^32 (so the bits are
 * those of a wrapping int32 accumulation of (x + io) * (w + fo)):
 *   sum (x + io)(w + fo) = sum x*w + fo * sum x + io * (sum w + n * fo). */
#include "ptec_nn.h"
#include "ptec_nn_dot.h"
#include "ptec_nn_math.h"
#include "ptec_nn_variants.h"

ptec_status ptec_nn_fully_connected_s8(const ptec_nn_fc_params *params, const ptec_nn_fc_dims *dims,
                                       const int8_t *input, const int8_t *weights,
                                       const int32_t *bias, const int32_t *kernel_sum,
                                       int8_t *output)
{
    const int32_t batches = dims->batches;
    const int32_t out_features = dims->output_features;
    if (batches == 0 || out_features == 0) {
        return PTEC_OK;
    }
    if (input == NULL || weights == NULL || output == NULL) {
        return PTEC_INVALID_ARGUMENT;
    }
#if defined(PTEC_NN_MVE)
    return ptec_nn_fully_connected_s8_mve(params, dims, input, weights, bias, kernel_sum, output);
#elif defined(PTEC_NN_DSP)
    return ptec_nn_fully_connected_s8_dsp(params, dims, input, weights, bias, kernel_sum, output);
#else
    const size_t n = (size_t)dims->input_features;
    const ptec_nn_fc_params p = *params;
    const uint32_t filter_offset = (uint32_t)p.filter_offset;
    /* The kernel_sum form already holds the input offset (and the bias). */
    const uint32_t input_offset = kernel_sum != NULL ? 0u : (uint32_t)p.input_offset;
    for (int32_t b = 0; b < batches; ++b) {
        const int8_t *x = input + (size_t)b * n;
        int8_t *y = output + (size_t)b * (size_t)out_features;
        const uint32_t x_term = filter_offset * ptec_nn_sum_s8(x, n);
        int32_t o = 0;
        while (o < out_features) {
            const int32_t rows = out_features - o >= 4 ? 4 : 1;
            uint32_t acc[4] = {0, 0, 0, 0};
            const int8_t *w = weights + (size_t)o * n;
            if (rows == 4) {
                ptec_nn_dot4_s8(x, w, n, n, acc);
            } else {
                acc[0] = ptec_nn_dot_s8(x, w, n);
            }
            for (int32_t r = 0; r < rows; ++r) {
                const int32_t oc = o + r;
                uint32_t total = acc[r] + x_term;
                if (input_offset != 0) {
                    total += input_offset * (ptec_nn_sum_s8(w + (size_t)r * n, n) + (uint32_t)n * filter_offset);
                }
                if (kernel_sum != NULL) {
                    total += (uint32_t)kernel_sum[oc];
                } else if (bias != NULL) {
                    total += (uint32_t)bias[oc];
                }
                y[oc] = ptec_nn_requantize_s8((int32_t)total, p.quant.multiplier, p.quant.shift, p.output_offset,
                                              p.activation.min, p.activation.max);
            }
            o += rows;
        }
    }
    return PTEC_OK;
#endif
}
