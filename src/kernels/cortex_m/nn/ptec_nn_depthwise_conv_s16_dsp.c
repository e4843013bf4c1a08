/* DSP depthwise convolution with int16 activations (Cortex-M33, M7, M4),
 * depth multiplier 1: per output pixel, four channels at a time over the
 * in-bounds taps. Per tap, two word loads bring the four int16 inputs as
 * the pairs (x0, x1), (x2, x3), one load brings the four int8 weights,
 * SXTB16 and SXTB16 ROR #8 widen those to (w0, w2) and (w1, w3), and
 * SMLABB, SMLATB, SMLABT, SMLATT add x0*w0, x1*w1, x2*w2, x3*w3 to the four
 * channels' int32 sums. The channels past the last multiple of 4 take the
 * same sums one channel at a time.
 *
 * Exactness: a window has at most KH * KW taps, and this variant only
 * takes windows of at most 511 (PTEC_NOT_SUPPORTED otherwise, and the
 * reference's int64 loop runs). Each product has |x * w| <= 2^22 (see
 * ptec_nn_dot_rows_s16_dsp.c), so every partial sum of a channel is within
 * +-511 * 2^22 < 2^31: the int32 sums never wrap (and the SMLAxy Q flags
 * stay clear), and each is the exact sum the reference accumulates in
 * int64. 512 taps of -32768 * -128 would reach 2^31: the vector cases hold
 * windows of 511 and 512 such taps. The bias, saturation and
 * requantization are the reference's functions. */
#include "ptec_nn_variants.h"

#if defined(PTEC_NN_DSP)
#include "ptec_nn_dsp.h"
#include "ptec_nn_math.h"
#include "ptec_nn_window.h"

/* Taps per window whose int32 sums cannot wrap (above). */
enum { MAX_TAPS = 511 };

static inline uint32_t load2_s16(const int16_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline int16_t out_s16(int32_t sum, const int64_t *bias, const ptec_nn_per_channel_quant *quant,
                              int32_t channel, ptec_nn_activation act)
{
    const int64_t v = ptec_nn_add_bias_s64(sum, bias, channel);
    return ptec_nn_clamp_s16(
        ptec_nn_requantize_s64(v, ptec_nn_reduce_multiplier(quant->multipliers[channel]), quant->shifts[channel]),
        act.min, act.max);
}

ptec_status ptec_nn_depthwise_conv_s16_dsp(const ptec_nn_conv_s16_params *params,
                                           const ptec_nn_per_channel_quant *quant, const ptec_nn_dims *input_dims,
                                           const int16_t *input, const ptec_nn_dims *filter_dims,
                                           const int8_t *filter, const int64_t *bias,
                                           const ptec_nn_dims *output_dims, int16_t *output)
{
    const ptec_nn_dims in = *input_dims;
    const ptec_nn_dims f = *filter_dims;
    const ptec_nn_dims out = *output_dims;
    if ((int64_t)f.h * f.w > MAX_TAPS) {
        return PTEC_NOT_SUPPORTED;
    }
    const ptec_nn_conv_s16_params p = *params;
    const int32_t channels = out.c; /* = in.c = f.c */
    const size_t x_col = (size_t)in.c * (size_t)p.dilation.w;
    const size_t in_row = (size_t)in.w * (size_t)in.c;
    const size_t w_col = (size_t)f.c;
    const size_t filter_row = (size_t)f.w * w_col;
    int16_t *y = output;
    for (int32_t n = 0; n < out.n; ++n) {
        const int16_t *image = input + (size_t)n * (size_t)in.h * in_row;
        for (int32_t oy = 0; oy < out.h; ++oy) {
            const int32_t y0 = oy * p.stride.h - p.padding.h;
            int32_t ky0, ky1;
            ptec_nn_tap_range(y0, p.dilation.h, f.h, in.h, &ky0, &ky1);
            for (int32_t ox = 0; ox < out.w; ++ox, y += channels) {
                const int32_t x0 = ox * p.stride.w - p.padding.w;
                int32_t kx0, kx1;
                ptec_nn_tap_range(x0, p.dilation.w, f.w, in.w, &kx0, &kx1);
                /* The window's first in-bounds column (channel 0); none
                 * at all: no taps, and the sums stay 0. */
                const int32_t taps_x = kx1 - kx0;
                const int has_taps = taps_x > 0;
                const int16_t *x_first = image + (has_taps ? (size_t)(x0 + kx0 * p.dilation.w) * (size_t)in.c : 0);
                const int8_t *w_first = filter + (has_taps ? (size_t)kx0 * w_col : 0);
                int32_t c = 0;
                for (; c + 4 <= channels; c += 4) {
                    int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
                    for (int32_t ky = ky0; ky < ky1; ++ky) {
                        const int16_t *xp = x_first + (size_t)(y0 + ky * p.dilation.h) * in_row + (size_t)c;
                        const int8_t *wp = w_first + (size_t)ky * filter_row + (size_t)c;
                        for (int32_t t = 0; t < taps_x; ++t, xp += x_col, wp += w_col) {
                            const uint32_t x01 = load2_s16(xp), x23 = load2_s16(xp + 2), wv = ptec_nn_load4(wp);
                            const int32_t w_even = (int32_t)ptec_nn_sxtb16_even(wv);
                            const int32_t w_odd = (int32_t)ptec_nn_sxtb16_odd(wv);
                            a0 = __smlabb((int32_t)x01, w_even, a0);
                            a1 = __smlatb((int32_t)x01, w_odd, a1);
                            a2 = __smlabt((int32_t)x23, w_even, a2);
                            a3 = __smlatt((int32_t)x23, w_odd, a3);
                        }
                    }
                    y[c] = out_s16(a0, bias, quant, c, p.activation);
                    y[c + 1] = out_s16(a1, bias, quant, c + 1, p.activation);
                    y[c + 2] = out_s16(a2, bias, quant, c + 2, p.activation);
                    y[c + 3] = out_s16(a3, bias, quant, c + 3, p.activation);
                }
                for (; c < channels; ++c) {
                    int32_t a = 0;
                    for (int32_t ky = ky0; ky < ky1; ++ky) {
                        const int16_t *xp = x_first + (size_t)(y0 + ky * p.dilation.h) * in_row + (size_t)c;
                        const int8_t *wp = w_first + (size_t)ky * filter_row + (size_t)c;
                        for (int32_t t = 0; t < taps_x; ++t, xp += x_col, wp += w_col) {
                            a += (int32_t)*xp * (int32_t)*wp;
                        }
                    }
                    y[c] = out_s16(a, bias, quant, c, p.activation);
                }
            }
        }
    }
    return PTEC_OK;
}

#else
typedef int ptec_nn_depthwise_conv_s16_dsp_unused; /* a translation unit must not be empty */
#endif
