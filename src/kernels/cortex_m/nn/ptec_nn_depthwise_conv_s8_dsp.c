/* DSP depthwise convolution, depth multiplier 1: four adjacent channels
 * per word. Per in-bounds tap, one load brings four input bytes and
 * SXTAB16 widens them to two int16 pairs with the input offset already
 * added (x + offset is within +-255); the weight word splits the same way,
 * and four SMLABB/SMLATT accumulate the four channels. Channels past the
 * last multiple of 4 take the scalar loop. */
#include "ptec_nn_variants.h"

#if defined(PTEC_NN_DSP)
#include "ptec_nn_dsp.h"
#include "ptec_nn_math.h"
#include "ptec_nn_window.h"

static inline int8_t finish(uint32_t acc, const ptec_nn_conv_params *p, const ptec_nn_per_channel_quant *quant,
                            int32_t c)
{
    return ptec_nn_requantize_s8((int32_t)acc, quant->multipliers[c], quant->shifts[c], p->output_offset,
                                 p->activation.min, p->activation.max);
}

ptec_status ptec_nn_depthwise_conv_s8_dsp(const ptec_nn_conv_params *params, const ptec_nn_per_channel_quant *quant,
                                          const ptec_nn_dims *input_dims, const int8_t *input,
                                          const ptec_nn_dims *filter_dims, const int8_t *filter,
                                          const int32_t *bias, const ptec_nn_dims *output_dims, int8_t *output)
{
    const ptec_nn_dims in = *input_dims;
    const ptec_nn_dims f = *filter_dims;
    const ptec_nn_dims out = *output_dims;
    const ptec_nn_conv_params p = *params;
    const int32_t channels = out.c;
    const int32_t quads = channels & ~3;
    const size_t in_row = (size_t)in.w * (size_t)in.c;
    const size_t x_col = (size_t)p.dilation.w * (size_t)in.c;
    const size_t x_row = (size_t)p.dilation.h * in_row;
    const size_t w_row = (size_t)f.w * (size_t)channels;
    const uint32_t offset_pair = ((uint32_t)p.input_offset & 0xFFFFu) * 0x10001u;
    int8_t *y = output;
    for (int32_t n = 0; n < out.n; ++n) {
        const int8_t *image = input + (size_t)n * (size_t)in.h * in_row;
        for (int32_t oy = 0; oy < out.h; ++oy) {
            const int32_t y0 = oy * p.stride.h - p.padding.h;
            int32_t ky0, ky1;
            ptec_nn_tap_range(y0, p.dilation.h, f.h, in.h, &ky0, &ky1);
            for (int32_t ox = 0; ox < out.w; ++ox, y += channels) {
                const int32_t x0 = ox * p.stride.w - p.padding.w;
                int32_t kx0, kx1;
                ptec_nn_tap_range(x0, p.dilation.w, f.w, in.w, &kx0, &kx1);
                const int32_t rows = ky1 - ky0, cols = kx1 - kx0;
                const int8_t *x_tap = image + (size_t)(y0 + ky0 * p.dilation.h) * in_row +
                                      (size_t)(x0 + kx0 * p.dilation.w) * (size_t)in.c;
                const int8_t *w_tap = filter + ((size_t)ky0 * (size_t)f.w + (size_t)kx0) * (size_t)channels;
                int32_t c = 0;
                for (; c < quads; c += 4) {
                    int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
                    for (int32_t r = 0; r < rows; ++r) {
                        const int8_t *xp = x_tap + (size_t)r * x_row + c;
                        const int8_t *wp = w_tap + (size_t)r * w_row + c;
                        for (int32_t t = 0; t < cols; ++t) {
                            const uint32_t xv = ptec_nn_load4(xp), wv = ptec_nn_load4(wp);
                            const int32_t x_even = (int32_t)ptec_nn_sxtab16_even(offset_pair, xv);
                            const int32_t x_odd = (int32_t)ptec_nn_sxtab16_odd(offset_pair, xv);
                            const int32_t w_even = (int32_t)ptec_nn_sxtb16_even(wv);
                            const int32_t w_odd = (int32_t)ptec_nn_sxtb16_odd(wv);
                            a0 = __smlabb(x_even, w_even, a0);
                            a2 = __smlatt(x_even, w_even, a2);
                            a1 = __smlabb(x_odd, w_odd, a1);
                            a3 = __smlatt(x_odd, w_odd, a3);
                            xp += x_col;
                            wp += channels;
                        }
                    }
                    const uint32_t b0 = bias != NULL ? (uint32_t)bias[c] : 0u;
                    const uint32_t b1 = bias != NULL ? (uint32_t)bias[c + 1] : 0u;
                    const uint32_t b2 = bias != NULL ? (uint32_t)bias[c + 2] : 0u;
                    const uint32_t b3 = bias != NULL ? (uint32_t)bias[c + 3] : 0u;
                    y[c] = finish((uint32_t)a0 + b0, &p, quant, c);
                    y[c + 1] = finish((uint32_t)a1 + b1, &p, quant, c + 1);
                    y[c + 2] = finish((uint32_t)a2 + b2, &p, quant, c + 2);
                    y[c + 3] = finish((uint32_t)a3 + b3, &p, quant, c + 3);
                }
                for (; c < channels; ++c) {
                    uint32_t acc = bias != NULL ? (uint32_t)bias[c] : 0u;
                    for (int32_t r = 0; r < rows; ++r) {
                        const int8_t *xp = x_tap + (size_t)r * x_row + c;
                        const int8_t *wp = w_tap + (size_t)r * w_row + c;
                        for (int32_t t = 0; t < cols; ++t) {
                            acc += (uint32_t)((*xp + p.input_offset) * *wp);
                            xp += x_col;
                            wp += channels;
                        }
                    }
                    y[c] = finish(acc, &p, quant, c);
                }
            }
        }
    }
    return PTEC_OK;
}

#else
typedef int ptec_nn_depthwise_dsp_unused; /* a translation unit must not be empty */
#endif
