/* Depthwise convolution with int16 activations and int8 weights: NHWC
 * input, IHWO filter [1, KH, KW, Cout], output channel o reading input
 * channel o / depth_multiplier, batches run one after another
 * (docs/kernels.md, "16-bit activations"; CMSIS-NN arm_depthwise_conv_s16,
 * which accumulates the bias and the products in int64). A window has at
 * most KH * KW taps per channel, so its sum is exact in int64. The DSP and
 * Helium builds hand a depth multiplier of 1 with windows of up to 511 taps
 * to ptec_nn_depthwise_conv_s16_{dsp,mve}.c. */
#include "ptec_nn.h"
#include "ptec_nn_math.h"
#include "ptec_nn_variants.h"
#include "ptec_nn_window.h"

ptec_status ptec_nn_depthwise_conv_s16(const ptec_nn_conv_s16_params *params, int32_t depth_multiplier,
                                       const ptec_nn_per_channel_quant *quant, const ptec_nn_dims *input_dims,
                                       const int16_t *input, const ptec_nn_dims *filter_dims, const int8_t *filter,
                                       const int64_t *bias, const ptec_nn_dims *output_dims, int16_t *output)
{
    const ptec_nn_dims in = *input_dims;
    const ptec_nn_dims f = *filter_dims;
    const ptec_nn_dims out = *output_dims;
    if (depth_multiplier < 1 || (int64_t)in.c * depth_multiplier != out.c || f.n != 1 || f.c != out.c ||
        in.n != out.n) {
        return PTEC_INVALID_ARGUMENT;
    }
    if ((size_t)out.n * (size_t)out.h * (size_t)out.w * (size_t)out.c == 0) {
        return PTEC_OK;
    }
    if (input == NULL || filter == NULL || output == NULL || quant == NULL || params == NULL ||
        !ptec_nn_shifts_s64_ok(quant->shifts, out.c)) {
        return PTEC_INVALID_ARGUMENT;
    }
#if defined(PTEC_NN_MVE) || defined(PTEC_NN_DSP)
    /* A depth multiplier of 1 and windows of up to 511 taps have a variant;
     * the others keep the loops below. */
    if (depth_multiplier == 1) {
#if defined(PTEC_NN_MVE)
        const ptec_status status = ptec_nn_depthwise_conv_s16_mve(params, quant, input_dims, input, filter_dims,
                                                                  filter, bias, output_dims, output);
#else
        const ptec_status status = ptec_nn_depthwise_conv_s16_dsp(params, quant, input_dims, input, filter_dims,
                                                                  filter, bias, output_dims, output);
#endif
        if (status != PTEC_NOT_SUPPORTED) {
            return status;
        }
    }
#endif
    const ptec_nn_conv_s16_params p = *params;
    const size_t in_row = (size_t)in.w * (size_t)in.c;
    const size_t filter_row = (size_t)f.w * (size_t)f.c;
    int16_t *y = output;
    for (int32_t n = 0; n < out.n; ++n) {
        const int16_t *image = input + (size_t)n * (size_t)in.h * in_row;
        for (int32_t oy = 0; oy < out.h; ++oy) {
            const int32_t y0 = oy * p.stride.h - p.padding.h;
            int32_t ky0, ky1;
            ptec_nn_tap_range(y0, p.dilation.h, f.h, in.h, &ky0, &ky1);
            for (int32_t ox = 0; ox < out.w; ++ox) {
                const int32_t x0 = ox * p.stride.w - p.padding.w;
                int32_t kx0, kx1;
                ptec_nn_tap_range(x0, p.dilation.w, f.w, in.w, &kx0, &kx1);
                for (int32_t o = 0; o < out.c; ++o) {
                    const size_t c = (size_t)(o / depth_multiplier);
                    int64_t acc = 0;
                    for (int32_t ky = ky0; ky < ky1; ++ky) {
                        const int16_t *x_row = image + (size_t)(y0 + ky * p.dilation.h) * in_row + c;
                        const int8_t *w_row = filter + (size_t)ky * filter_row + (size_t)o;
                        for (int32_t kx = kx0; kx < kx1; ++kx) {
                            acc += (int32_t)x_row[(size_t)(x0 + kx * p.dilation.w) * (size_t)in.c] *
                                   (int32_t)w_row[(size_t)kx * (size_t)f.c];
                        }
                    }
                    *y++ = ptec_nn_output_s16(acc, bias, o, ptec_nn_reduce_multiplier(quant->multipliers[o]),
                                              quant->shifts[o], p.activation.min, p.activation.max);
                }
            }
        }
    }
    return PTEC_OK;
}
