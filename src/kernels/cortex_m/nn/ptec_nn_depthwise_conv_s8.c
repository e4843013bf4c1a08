/* int8 depthwise convolution, NHWC input, IHWO filter [1, KH, KW, Cout],
 * Cout = Cin * depth_multiplier (cortex-m-ops.md §3.10). Output channel o
 * reads input channel o / depth_multiplier. Batches are independent.
 *
 * Channels are the inner loop (contiguous in input, filter and output),
 * accumulated in a block on the stack; only in-bounds taps are visited. */
#include "ptec_nn.h"
#include "ptec_nn_dot.h"
#include "ptec_nn_math.h"
#include "ptec_nn_window.h"

enum { CHANNEL_BLOCK = 64 }; /* 256 bytes of accumulators on the stack */

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
    const int32_t dm = depth_multiplier;
    const int32_t offset = p.input_offset;
    const size_t out_c = (size_t)out.c;
    const size_t in_row = (size_t)in.w * (size_t)in.c;
    uint32_t acc[CHANNEL_BLOCK];
    int8_t *y = output;
    for (int32_t n = 0; n < out.n; ++n) {
        const int8_t *image = input + (size_t)n * (size_t)in.h * in_row;
        for (int32_t oy = 0; oy < out.h; ++oy) {
            const int32_t y0 = oy * p.stride.h - p.padding.h;
            int32_t ky0, ky1;
            ptec_nn_tap_range(y0, p.dilation.h, f.h, in.h, &ky0, &ky1);
            for (int32_t ox = 0; ox < out.w; ++ox) {
                const int32_t x0 = ox * p.stride.w - p.padding.w;
                int32_t kx0, kx1;
                ptec_nn_tap_range(x0, p.dilation.w, f.w, in.w, &kx0, &kx1);
                for (int32_t o0 = 0; o0 < out.c; o0 += CHANNEL_BLOCK) {
                    const int32_t count = out.c - o0 < CHANNEL_BLOCK ? out.c - o0 : CHANNEL_BLOCK;
                    for (int32_t j = 0; j < count; ++j) {
                        acc[j] = bias != NULL ? (uint32_t)bias[o0 + j] : 0u;
                    }
                    for (int32_t ky = ky0; ky < ky1; ++ky) {
                        const int8_t *x_row = image + (size_t)(y0 + ky * p.dilation.h) * in_row;
                        for (int32_t kx = kx0; kx < kx1; ++kx) {
                            const int8_t *x = x_row + (size_t)(x0 + kx * p.dilation.w) * (size_t)in.c;
                            const int8_t *w = filter + ((size_t)ky * (size_t)f.w + (size_t)kx) * out_c + (size_t)o0;
                            if (dm == 1) {
                                ptec_nn_mac_s8(acc, x + o0, offset, w, (size_t)count);
                            } else if (in.c == 1) { /* one input channel feeds every output */
                                ptec_nn_mac_scalar_s8(acc, x[0] + offset, w, (size_t)count);
                            } else {
                                for (int32_t j = 0; j < count; ++j) {
                                    acc[j] += (uint32_t)((x[(o0 + j) / dm] + offset) * w[j]);
                                }
                            }
                        }
                    }
                    for (int32_t j = 0; j < count; ++j) {
                        const int32_t o = o0 + j;
                        const int32_t r = ptec_nn_requantize((int32_t)acc[j], quant->multipliers[o], quant->shifts[o]);
                        *y++ = (int8_t)ptec_nn_output_stage(r, p.output_offset, p.activation.min, p.activation.max);
                    }
                }
            }
        }
    }
    return PTEC_OK;
}
