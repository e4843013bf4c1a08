/* int8 depthwise convolution, NHWC input, IHWO filter [1, KH, KW, Cout],
 * Cout = Cin * depth_multiplier (cortex-m-ops.md §3.10). Output channel o
 * reads input channel o / depth_multiplier. Batches are independent.
 *
 * Four output channels (sixteen on hosts with SIMD) are accumulated
 * together over the in-bounds taps only. Accumulators wrap as int32 on the
 * target. */
#include "ptec_nn.h"
#include "ptec_nn_dot.h"
#include "ptec_nn_math.h"
#include "ptec_nn_variants.h"
#include "ptec_nn_window.h"

uint32_t ptec_nn_depthwise_conv_s8_buffer_size(const ptec_nn_dims *input_dims,
                                               const ptec_nn_dims *filter_dims)
{
#if defined(PTEC_NN_MVE) || defined(PTEC_NN_DSP)
    if (input_dims->c == 1 && filter_dims->c > 1) {
        return ptec_nn_depthwise_single_input_buffer_size(filter_dims);
    }
#endif
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
#if defined(PTEC_NN_MVE) || defined(PTEC_NN_DSP)
    /* The DSP and Helium builds: one input channel feeding several outputs
     * runs as a convolution, a depth multiplier of 1 has its own kernel;
     * other multipliers keep the loops below. */
    if (in.c == 1 && out.c > 1) {
        if (scratch.buf == NULL || scratch.size < ptec_nn_depthwise_conv_s8_buffer_size(input_dims, filter_dims)) {
            return PTEC_INVALID_ARGUMENT;
        }
        return ptec_nn_depthwise_single_input_s8(scratch.buf, params, quant, input_dims, input, filter_dims, filter,
                                                 bias, output_dims, output);
    }
    if (depth_multiplier == 1) {
#if defined(PTEC_NN_MVE)
        return ptec_nn_depthwise_conv_s8_mve(params, quant, input_dims, input, filter_dims, filter, bias,
                                             output_dims, output);
#else
        return ptec_nn_depthwise_conv_s8_dsp(params, quant, input_dims, input, filter_dims, filter, bias,
                                             output_dims, output);
#endif
    }
#else
    (void)scratch;
#endif
    const ptec_nn_conv_params p = *params;
    const int32_t dm = depth_multiplier;
    const size_t out_c = (size_t)out.c;
    const size_t in_pixel = (size_t)in.c;
    const size_t in_row = (size_t)in.w * in_pixel;

    /* The tap strides of input and filter. */
    ptec_nn_taps taps;
    taps.x_col = (size_t)p.dilation.w * in_pixel;
    taps.x_row = (size_t)p.dilation.h * in_row;
    taps.w_col = out_c;
    taps.w_row = (size_t)f.w * out_c;
    taps.rows = f.h;
    taps.cols = f.w;

    /* Lane t of a block of four reads input channel (o + t) / dm: adjacent
     * channels for dm == 1, one channel for a single input channel. */
    const int lanes_share_step = dm == 1 || in.c == 1;
    const size_t x_lane = dm == 1 ? 1u : 0u;
#if defined(PTEC_NN_TAPS_BLOCK)
    enum { LANES_MAX = PTEC_NN_TAPS_BLOCK };
    const int narrow_offset = p.input_offset >= -127 && p.input_offset <= 128;
#else
    enum { LANES_MAX = 4 };
#endif

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
                ptec_nn_taps window = taps;
                window.rows = ky1 - ky0;
                window.cols = kx1 - kx0;
                /* First in-bounds tap, channel 0, of input and filter. */
                const int8_t *x_tap = image + (size_t)(y0 + ky0 * p.dilation.h) * in_row +
                                      (size_t)(x0 + kx0 * p.dilation.w) * in_pixel;
                const int8_t *w_tap = filter + ((size_t)ky0 * (size_t)f.w + (size_t)kx0) * out_c;
                int32_t o = 0;
                while (o < out.c) {
                    uint32_t acc[LANES_MAX] = {0};
                    int32_t lanes = 1;
#if defined(PTEC_NN_TAPS_BLOCK)
                    if (lanes_share_step && narrow_offset && out.c - o >= PTEC_NN_TAPS_BLOCK) {
                        lanes = PTEC_NN_TAPS_BLOCK;
                        ptec_nn_taps16_s8(x_tap + (size_t)(o / dm), x_lane, p.input_offset, w_tap + o, &window, acc);
                    } else
#endif
                    if (lanes_share_step && out.c - o >= 4) {
                        lanes = 4;
                        ptec_nn_taps4_s8(x_tap + (size_t)(o / dm), x_lane, p.input_offset, w_tap + o, &window, acc);
                    } else {
                        acc[0] = ptec_nn_taps1_s8(x_tap + (size_t)(o / dm), p.input_offset, w_tap + o, &window);
                    }
                    for (int32_t t = 0; t < lanes; ++t) {
                        const int32_t oc = o + t;
                        uint32_t total = acc[t];
                        if (bias != NULL) {
                            total += (uint32_t)bias[oc];
                        }
                        /* ptec_nn_requantize_s8 spelled out: through it, GCC 12
                         * allocates this loop's registers worse (+2% instructions). */
                        const int32_t r = ptec_nn_requantize((int32_t)total, quant->multipliers[oc], quant->shifts[oc]);
                        *y++ = (int8_t)ptec_nn_output_stage(r, p.output_offset, p.activation.min,
                                                            p.activation.max);
                    }
                    o += lanes;
                }
            }
        }
    }
    return PTEC_OK;
}
