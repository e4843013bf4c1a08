/* The DSP and Helium builds' int16-activation fully connected layer
 * (called by ptec_nn_fully_connected_s16 once it has checked its
 * arguments): two output rows per pass over an input row, with the build's
 * dot product (PTEC_NN_DOT_ROWS_S16, the exact int64 sum: see
 * ptec_nn_dot_rows_s16_dsp.c and _mve.c), then the reference's bias,
 * saturation and requantization. */
#include "ptec_nn_variants.h"

#if defined(PTEC_NN_MVE) || defined(PTEC_NN_DSP)
#include "ptec_nn_math.h"

ptec_status ptec_nn_fully_connected_s16_rows(const ptec_nn_fc_s16_params *params, const ptec_nn_fc_dims *dims,
                                             const int16_t *input, const int8_t *weights, const int64_t *bias,
                                             int16_t *output)
{
    const ptec_nn_fc_s16_params p = *params;
    const int32_t reduced = ptec_nn_reduce_multiplier(p.quant.multiplier);
    const int32_t out_features = dims->output_features;
    const size_t n = (size_t)dims->input_features;
    for (int32_t b = 0; b < dims->batches; ++b) {
        const int16_t *x = input + (size_t)b * n;
        int16_t *y = output + (size_t)b * (size_t)out_features;
        for (int32_t o = 0; o < out_features; o += 2) {
            const int32_t rows = out_features - o >= 2 ? 2 : 1;
            int64_t acc[2] = {0, 0};
            PTEC_NN_DOT_ROWS_S16(x, weights + (size_t)o * n, n, n, rows, acc);
            for (int32_t r = 0; r < rows; ++r) {
                y[o + r] = ptec_nn_output_s16(acc[r], bias, o + r, reduced, p.quant.shift, p.activation.min,
                                              p.activation.max);
            }
        }
    }
    return PTEC_OK;
}

#else
typedef int ptec_nn_fully_connected_s16_rows_unused; /* a translation unit must not be empty */
#endif
