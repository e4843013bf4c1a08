/* int8 depthwise convolution, NHWC input, IHWO filter [1, KH, KW, Cout],
 * Cout = Cin * depth_multiplier (cortex-m-ops.md §3.10). Output channel o
 * reads input channel o / depth_multiplier. Batches are independent. */
#include "ptec_nn.h"
#include "ptec_nn_math.h"

uint32_t ptec_nn_depthwise_conv_s8_buffer_size(const ptec_nn_dims *input_dims,
                                               const ptec_nn_dims *filter_dims)
{
    (void)input_dims;
    (void)filter_dims;
    return 0;
}

ptec_status ptec_nn_depthwise_conv_s8(ptec_nn_buffer scratch, const ptec_nn_conv_params *params,
                                      int32_t depth_multiplier,
                                      const ptec_nn_per_channel_quant *quant,
                                      const ptec_nn_dims *input_dims, const int8_t *input,
                                      const ptec_nn_dims *filter_dims, const int8_t *filter,
                                      const int32_t *bias, const ptec_nn_dims *output_dims,
                                      int8_t *output)
{
    (void)scratch;
    const ptec_nn_dims in = *input_dims;
    const ptec_nn_dims f = *filter_dims;
    const ptec_nn_dims out = *output_dims;
    if (depth_multiplier <= 0 || f.c != out.c || (int64_t)in.c * depth_multiplier != out.c ||
        in.n != out.n) {
        return PTEC_INVALID_ARGUMENT;
    }
    if ((size_t)out.n * (size_t)out.h * (size_t)out.w * (size_t)out.c == 0) {
        return PTEC_OK;
    }
    if (input == NULL || filter == NULL || output == NULL || quant == NULL) {
        return PTEC_INVALID_ARGUMENT;
    }
    const ptec_nn_conv_params p = *params;
    const size_t out_c = (size_t)out.c;
    int8_t *y = output;
    for (int32_t n = 0; n < out.n; ++n) {
        const int8_t *image = input + (size_t)n * (size_t)in.h * (size_t)in.w * (size_t)in.c;
        for (int32_t oy = 0; oy < out.h; ++oy) {
            const int32_t y0 = oy * p.stride.h - p.padding.h;
            for (int32_t ox = 0; ox < out.w; ++ox) {
                const int32_t x0 = ox * p.stride.w - p.padding.w;
                for (int32_t o = 0; o < out.c; ++o) {
                    const int32_t c = o / depth_multiplier;
                    uint32_t acc = bias != NULL ? (uint32_t)bias[o] : 0u;
                    for (int32_t ky = 0; ky < f.h; ++ky) {
                        const int32_t iy = y0 + ky * p.dilation.h;
                        if (iy < 0 || iy >= in.h) {
                            continue;
                        }
                        for (int32_t kx = 0; kx < f.w; ++kx) {
                            const int32_t ix = x0 + kx * p.dilation.w;
                            if (ix < 0 || ix >= in.w) {
                                continue;
                            }
                            const int32_t x =
                                image[((size_t)iy * (size_t)in.w + (size_t)ix) * (size_t)in.c + (size_t)c];
                            const int32_t w = filter[((size_t)ky * (size_t)f.w + (size_t)kx) * out_c + (size_t)o];
                            acc += (uint32_t)((x + p.input_offset) * w);
                        }
                    }
                    const int32_t r =
                        ptec_nn_requantize((int32_t)acc, quant->multipliers[o], quant->shifts[o]);
                    *y++ = (int8_t)ptec_nn_output_stage(r, p.output_offset, p.activation.min,
                                                        p.activation.max);
                }
            }
        }
    }
    return PTEC_OK;
}
