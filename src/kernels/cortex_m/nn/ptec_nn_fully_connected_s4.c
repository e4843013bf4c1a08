/* int8 fully connected layer with packed 4-bit weights (ptec_nn_s4.h):
 * ptec_nn_fully_connected_s8's bias form with a filter offset of 0 (the
 * 4-bit weights are symmetric), the weights [out, in] packed two per
 * byte. No scratch.
 *
 * The reference adds (x + input_offset) * w, modulo 2^32 as a wrapping
 * int32 accumulator would; the DSP and Helium variants unpack the nibbles
 * in registers (ptec_nn_fully_connected_s4_{dsp,mve}.c). */
#include "ptec_nn.h"
#include "ptec_nn_math.h"
#include "ptec_nn_s4.h"
#include "ptec_nn_variants.h"

ptec_status ptec_nn_fully_connected_s4(const ptec_nn_fc_params *params, const ptec_nn_fc_dims *dims,
                                       const int8_t *input, const int8_t *weights, const int32_t *bias,
                                       int8_t *output)
{
    if (params->filter_offset != 0) {
        return PTEC_INVALID_ARGUMENT; /* 4-bit weights have no zero point */
    }
    if (dims->batches == 0 || dims->output_features == 0) {
        return PTEC_OK;
    }
    if (input == NULL || weights == NULL || output == NULL) {
        return PTEC_INVALID_ARGUMENT;
    }
#if defined(PTEC_NN_MVE)
    return ptec_nn_fully_connected_s4_mve(params, dims, input, weights, bias, output);
#elif defined(PTEC_NN_DSP)
    return ptec_nn_fully_connected_s4_dsp(params, dims, input, weights, bias, output);
#else
    const ptec_nn_fc_params p = *params;
    const size_t n = (size_t)dims->input_features;
    const int32_t rows = dims->output_features;
    for (int32_t b = 0; b < dims->batches; ++b) {
        const int8_t *x = input + (size_t)b * n;
        int8_t *y = output + (size_t)b * (size_t)rows;
        for (int32_t o = 0; o < rows; ++o) {
            const uint32_t acc = ptec_nn_dot_s4(x, p.input_offset, weights, (size_t)o * n, n) +
                                 (bias != NULL ? (uint32_t)bias[o] : 0u);
            y[o] = ptec_nn_requantize_s8((int32_t)acc, p.quant.multiplier, p.quant.shift, p.output_offset,
                                         p.activation.min, p.activation.max);
        }
    }
    return PTEC_OK;
#endif
}
