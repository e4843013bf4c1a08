/* Helium depthwise convolution with int16 activations (Cortex-M55), depth
 * multiplier 1: per output pixel, four channels per vector over the
 * in-bounds taps. Per tap, VLDRH.S32 and VLDRB.S32 widen four inputs and
 * four weights to int32 lanes as they load them, and VMUL + VADD add the
 * four products to the channels' int32 sums. The last channels are a
 * predicated vector (VCTP.32): its missing lanes load nothing and read 0.
 *
 * Exactness: this variant only takes windows of at most KH * KW = 511 taps
 * (PTEC_NOT_SUPPORTED otherwise, and the reference's int64 loop runs).
 * Each product has |x * w| <= 2^22 (ptec_nn_dot_rows_s16_dsp.c), so every
 * partial sum of a lane is within +-511 * 2^22 < 2^31 and the int32 lanes
 * never wrap: each holds the exact sum that the reference accumulates in
 * int64. (512 taps of -32768 * -128 would reach 2^31: the vector cases
 * hold windows of 511 and 512 such taps.) The bias, saturation and
 * requantization are the reference's functions, per channel. */
#include "ptec_nn_variants.h"

#if defined(PTEC_NN_MVE)
#include "ptec_nn_math.h"
#include "ptec_nn_mve.h"
#include "ptec_nn_window.h"

/* Taps per window whose int32 sums cannot wrap (above). */
enum { MAX_TAPS = 511 };

ptec_status ptec_nn_depthwise_conv_s16_mve(const ptec_nn_conv_s16_params *params,
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
                for (int32_t c = 0; c < channels; c += 4) {
                    const mve_pred16_t lanes = vctp32q((uint32_t)(channels - c));
                    int32x4_t acc = vdupq_n_s32(0);
                    for (int32_t ky = ky0; ky < ky1; ++ky) {
                        const int16_t *xp = x_first + (size_t)(y0 + ky * p.dilation.h) * in_row + (size_t)c;
                        const int8_t *wp = w_first + (size_t)ky * filter_row + (size_t)c;
                        for (int32_t t = 0; t < taps_x; ++t, xp += x_col, wp += w_col) {
                            acc = vaddq_s32(acc, vmulq_s32(vldrhq_z_s32(xp, lanes), vldrbq_z_s32(wp, lanes)));
                        }
                    }
                    int32_t sums[4];
                    vst1q_s32(sums, acc);
                    const int32_t count = channels - c < 4 ? channels - c : 4;
                    for (int32_t r = 0; r < count; ++r) {
                        const int32_t o = c + r;
                        const int64_t v = ptec_nn_add_bias_s64(sums[r], bias, o);
                        const int32_t reduced = ptec_nn_reduce_multiplier(quant->multipliers[o]);
                        y[o] = ptec_nn_clamp_s16(ptec_nn_requantize_s64(v, reduced, quant->shifts[o]),
                                                 p.activation.min, p.activation.max);
                    }
                }
            }
        }
    }
    return PTEC_OK;
}

#else
typedef int ptec_nn_depthwise_conv_s16_mve_unused; /* a translation unit must not be empty */
#endif
