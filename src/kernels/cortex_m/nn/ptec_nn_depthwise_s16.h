/* The walk over output pixels shared by the DSP and Helium depthwise
 * convolutions with int16 activations and depth multiplier 1
 * (ptec_nn_depthwise_conv_s16_dsp.c and _mve.c): each variant supplies
 * only the step that sums one pixel's channels over its in-bounds taps and
 * writes them (ptec_nn_output_s16, the reference's bias, requantization
 * and clamp).
 *
 * Exactness: a window has at most KH * KW taps, and these variants only
 * take windows of at most PTEC_NN_DEPTHWISE_S16_MAX_TAPS = 511
 * (PTEC_NOT_SUPPORTED otherwise, and the reference's int64 loop runs).
 * Each product has |x * w| <= 2^22 (see ptec_nn_dot_rows_s16_dsp.c), so
 * every partial sum of a channel is within +-511 * 2^22 < 2^31: int32 sums
 * never wrap (and the DSP's SMLAxy Q flags stay clear), and each is the
 * exact sum the reference accumulates in int64. 512 taps of -32768 * -128
 * would reach 2^31: the vector cases hold windows of 511 and 512 such
 * taps. */
#ifndef PTEC_NN_DEPTHWISE_S16_H
#define PTEC_NN_DEPTHWISE_S16_H

#include "ptec_nn_math.h"
#include "ptec_nn_variants.h"
#include "ptec_nn_window.h"

/* Taps per window whose int32 sums cannot wrap (above). */
enum { PTEC_NN_DEPTHWISE_S16_MAX_TAPS = 511 };

/* One output pixel's in-bounds taps, rows x cols of them (0 rows: none,
 * and the sums stay 0). Channel c of tap (r, t) is
 * x[r * x_row + t * x_col + c], its weight w[r * w_row + t * w_col + c]. */
typedef struct ptec_nn_dw_s16_window {
    const int16_t *x;
    const int8_t *w;
    int32_t rows, cols;
    size_t x_row, x_col, w_row, w_col;
} ptec_nn_dw_s16_window;

/* A variant's step: all `channels` outputs of one pixel into y. */
typedef void (*ptec_nn_dw_s16_pixel)(const ptec_nn_dw_s16_window *win, int32_t channels, const int64_t *bias,
                                     const ptec_nn_per_channel_quant *quant, ptec_nn_activation act, int16_t *y);

/* Inlined into each variant with its own step, which the compiler then
 * inlines too (a static function called once): no call per pixel. */
static inline __attribute__((always_inline)) ptec_status
ptec_nn_depthwise_s16_walk(const ptec_nn_conv_s16_params *params, const ptec_nn_per_channel_quant *quant,
                           const ptec_nn_dims *input_dims, const int16_t *input, const ptec_nn_dims *filter_dims,
                           const int8_t *filter, const int64_t *bias, const ptec_nn_dims *output_dims,
                           int16_t *output, ptec_nn_dw_s16_pixel pixel)
{
    const ptec_nn_dims in = *input_dims;
    const ptec_nn_dims f = *filter_dims;
    const ptec_nn_dims out = *output_dims;
    if ((int64_t)f.h * f.w > PTEC_NN_DEPTHWISE_S16_MAX_TAPS) {
        return PTEC_NOT_SUPPORTED;
    }
    const ptec_nn_conv_s16_params p = *params;
    const int32_t channels = out.c; /* = in.c = f.c */
    const size_t in_row = (size_t)in.w * (size_t)in.c;
    const size_t filter_row = (size_t)f.w * (size_t)f.c;
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
                ptec_nn_dw_s16_window win = {image,
                                             filter,
                                             0,
                                             0,
                                             (size_t)p.dilation.h * in_row,
                                             (size_t)p.dilation.w * (size_t)in.c,
                                             filter_row,
                                             (size_t)f.c};
                if (ky1 > ky0 && kx1 > kx0) {
                    win.x = image + (size_t)(y0 + ky0 * p.dilation.h) * in_row +
                            (size_t)(x0 + kx0 * p.dilation.w) * (size_t)in.c;
                    win.w = filter + (size_t)ky0 * filter_row + (size_t)kx0 * (size_t)f.c;
                    win.rows = ky1 - ky0;
                    win.cols = kx1 - kx0;
                }
                pixel(&win, channels, bias, quant, p.activation, y);
            }
        }
    }
    return PTEC_OK;
}

#endif
