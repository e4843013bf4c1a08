/* int8 depthwise convolution with packed 4-bit weights (ptec_nn_s4.h):
 * the numerics of ptec_nn_depthwise_conv_s8 (depth multiplier, stride,
 * padding, dilation, batches, per-channel requantization), the IHWO
 * filter [1, KH, KW, Cout] flattened and packed two elements per byte.
 * This is CMSIS-NN's arm_depthwise_conv_s4 layout: element
 * (ky * KW + kx) * Cout + o, low nibble first; an odd KH * KW * Cout
 * leaves the last high nibble unused.
 *
 * The reference below adds (x + input_offset) * w over the in-bounds taps
 * only, modulo 2^32 as a wrapping int32 accumulator would; it needs no
 * scratch. The DSP and Helium builds unpack the filter into the scratch
 * (ptec_nn_unpack_s4) and run the s8 depthwise variants on it: the taps
 * are read (out pixels) times, the unpacking is paid once per call, and
 * the s8 kernels' SIMD loops need bytes. Their results are the s8
 * kernel's on the same int8 values, which the s8 tests hold bit-exact
 * with the reference; the kernel vectors check this function directly. */
#include "ptec_nn.h"
#include "ptec_nn_isa.h"
#include "ptec_nn_math.h"
#include "ptec_nn_s4.h"
#include "ptec_nn_window.h"

#if defined(PTEC_NN_MVE) || defined(PTEC_NN_DSP)
/* The s8 depthwise's own scratch first (it holds int32 values), 4-aligned,
 * then the unpacked filter, KH * KW * Cout bytes. */
static uint64_t unpacked_offset(const ptec_nn_dims *input_dims, const ptec_nn_dims *filter_dims)
{
    return ((uint64_t)ptec_nn_depthwise_conv_s8_buffer_size(input_dims, filter_dims) + 3u) & ~(uint64_t)3u;
}
#endif

uint32_t ptec_nn_depthwise_conv_s4_buffer_size(const ptec_nn_dims *input_dims, const ptec_nn_dims *filter_dims)
{
#if defined(PTEC_NN_MVE) || defined(PTEC_NN_DSP)
    const uint64_t taps = (uint64_t)(filter_dims->h > 0 ? filter_dims->h : 0) *
                          (uint64_t)(filter_dims->w > 0 ? filter_dims->w : 0);
    const uint64_t size = unpacked_offset(input_dims, filter_dims) +
                          taps * (uint64_t)(filter_dims->c > 0 ? filter_dims->c : 0);
    return size > UINT32_MAX ? UINT32_MAX : (uint32_t)size;
#else
    (void)input_dims;
    (void)filter_dims;
    return 0;
#endif
}

ptec_status ptec_nn_depthwise_conv_s4(ptec_nn_buffer scratch, const ptec_nn_conv_params *params,
                                      int32_t depth_multiplier, const ptec_nn_per_channel_quant *quant,
                                      const ptec_nn_dims *input_dims, const int8_t *input,
                                      const ptec_nn_dims *filter_dims, const int8_t *filter, const int32_t *bias,
                                      const ptec_nn_dims *output_dims, int8_t *output)
{
    const ptec_nn_dims in = *input_dims;
    const ptec_nn_dims f = *filter_dims;
    const ptec_nn_dims out = *output_dims;
    if (depth_multiplier <= 0 || f.c != out.c || (int64_t)in.c * depth_multiplier != out.c || in.n != out.n) {
        return PTEC_INVALID_ARGUMENT;
    }
    if ((size_t)out.n * (size_t)out.h * (size_t)out.w * (size_t)out.c == 0) {
        return PTEC_OK;
    }
    if (input == NULL || filter == NULL || output == NULL || quant == NULL) {
        return PTEC_INVALID_ARGUMENT;
    }
#if defined(PTEC_NN_MVE) || defined(PTEC_NN_DSP)
    const uint32_t size = ptec_nn_depthwise_conv_s4_buffer_size(input_dims, filter_dims);
    if (scratch.buf == NULL || scratch.size < size || size == UINT32_MAX) {
        return PTEC_INVALID_ARGUMENT;
    }
    const uint32_t offset = (uint32_t)unpacked_offset(input_dims, filter_dims);
    int8_t *unpacked = (int8_t *)scratch.buf + offset;
    ptec_nn_unpack_s4(filter, (size_t)f.h * (size_t)f.w * (size_t)f.c, unpacked);
    const ptec_nn_buffer rest = {offset != 0 ? scratch.buf : NULL, offset};
    return ptec_nn_depthwise_conv_s8(rest, params, depth_multiplier, quant, input_dims, input, filter_dims, unpacked,
                                     bias, output_dims, output);
#else
    (void)scratch;
    const ptec_nn_conv_params p = *params;
    const size_t in_row = (size_t)in.w * (size_t)in.c;
    const size_t taps_row = (size_t)f.w * (size_t)out.c; /* elements per filter row */
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
                for (int32_t o = 0; o < out.c; ++o) {
                    const size_t channel = (size_t)(o / depth_multiplier);
                    uint32_t acc = bias != NULL ? (uint32_t)bias[o] : 0u;
                    for (int32_t ky = ky0; ky < ky1; ++ky) {
                        const int8_t *x_row = image + (size_t)(y0 + ky * p.dilation.h) * in_row + channel;
                        for (int32_t kx = kx0; kx < kx1; ++kx) {
                            const int32_t x = x_row[(size_t)(x0 + kx * p.dilation.w) * (size_t)in.c];
                            const size_t e = (size_t)ky * taps_row + (size_t)kx * (size_t)out.c + (size_t)o;
                            acc += (uint32_t)((x + p.input_offset) * ptec_nn_s4_at(filter, e));
                        }
                    }
                    *y++ = ptec_nn_requantize_s8((int32_t)acc, quant->multipliers[o], quant->shifts[o], p.output_offset,
                                                 p.activation.min, p.activation.max);
                }
            }
        }
    }
    return PTEC_OK;
#endif
}
