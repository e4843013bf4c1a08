/* int8 transposed convolution, NHWC input, OHWI filter [Cout, KH, KW, Cin]
 * (cortex-m-ops.md §3.11).
 *
 * Computed in gather form: output pixel (oy, ox) sums every input pixel
 * (iy, ix) and tap (ky, kx) with oy = iy*sh - ph + ky*dh (same in x). This
 * is the mathematically correct result for every padding; the pinned
 * CMSIS-NN gives wrong rows when ph % sh != 0 (docs/kernels.md). Output
 * padding only enlarges the output, whose size the caller gives. */
#include "ptec_nn.h"
#include "ptec_nn_math.h"

uint32_t ptec_nn_transpose_conv_s8_buffer_size(const ptec_nn_dims *input_dims,
                                               const ptec_nn_dims *filter_dims)
{
    (void)input_dims;
    (void)filter_dims;
    return 0;
}

ptec_status ptec_nn_transpose_conv_s8(ptec_nn_buffer scratch, const ptec_nn_conv_params *params,
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
    const ptec_nn_conv_params p = *params;
    if (f.c != in.c || f.n != out.c || in.n != out.n || p.stride.h <= 0 || p.stride.w <= 0 ||
        p.dilation.h <= 0 || p.dilation.w <= 0) {
        return PTEC_INVALID_ARGUMENT;
    }
    if ((size_t)out.n * (size_t)out.h * (size_t)out.w * (size_t)out.c == 0) {
        return PTEC_OK;
    }
    if (input == NULL || filter == NULL || output == NULL || quant == NULL) {
        return PTEC_INVALID_ARGUMENT;
    }
    int8_t *y = output;
    for (int32_t n = 0; n < out.n; ++n) {
        const int8_t *image = input + (size_t)n * (size_t)in.h * (size_t)in.w * (size_t)in.c;
        for (int32_t oy = 0; oy < out.h; ++oy) {
            for (int32_t ox = 0; ox < out.w; ++ox) {
                for (int32_t o = 0; o < out.c; ++o) {
                    uint32_t acc = bias != NULL ? (uint32_t)bias[o] : 0u;
                    for (int32_t ky = 0; ky < f.h; ++ky) {
                        /* iy*sh = oy + ph - ky*dh must be an in-range multiple of sh */
                        const int32_t ty = oy + p.padding.h - ky * p.dilation.h;
                        if (ty < 0 || ty % p.stride.h != 0 || ty / p.stride.h >= in.h) {
                            continue;
                        }
                        const int32_t iy = ty / p.stride.h;
                        for (int32_t kx = 0; kx < f.w; ++kx) {
                            const int32_t tx = ox + p.padding.w - kx * p.dilation.w;
                            if (tx < 0 || tx % p.stride.w != 0 || tx / p.stride.w >= in.w) {
                                continue;
                            }
                            const int32_t ix = tx / p.stride.w;
                            const int8_t *x =
                                image + ((size_t)iy * (size_t)in.w + (size_t)ix) * (size_t)in.c;
                            const int8_t *w =
                                filter + (((size_t)o * (size_t)f.h + (size_t)ky) * (size_t)f.w + (size_t)kx) *
                                             (size_t)f.c;
                            for (int32_t c = 0; c < in.c; ++c) {
                                acc += (uint32_t)((x[c] + p.input_offset) * w[c]);
                            }
                        }
                    }
                    *y++ = ptec_nn_requantize_s8((int32_t)acc, quant->multipliers[o], quant->shifts[o], p.output_offset,
                                                 p.activation.min, p.activation.max);
                }
            }
        }
    }
    return PTEC_OK;
}
