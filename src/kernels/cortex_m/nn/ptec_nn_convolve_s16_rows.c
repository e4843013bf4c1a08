/* The DSP and Helium builds' int16-activation convolution (called by
 * ptec_nn_convolve_s16 once it has checked its arguments): the reference's
 * sums, two output channels of a group per pass over an output pixel's
 * window, with the build's dot product (PTEC_NN_DOT_ROWS_S16, exact in
 * int64: see ptec_nn_dot_rows_s16_dsp.c and _mve.c). The window is read in
 * place, no scratch: one dot product per filter row when the row's
 * in-bounds taps are adjacent in memory (no groups, no horizontal
 * dilation: a row of the window is then one run of (kx1 - kx0) * Cin
 * values, matching the OHWI filter row), otherwise one per tap. The sum is
 * exact whichever way it is cut, so the int64 accumulator is the
 * reference's; the bias, saturation and requantization are the reference's
 * own functions. */
#include "ptec_nn_variants.h"

#if defined(PTEC_NN_MVE) || defined(PTEC_NN_DSP)
#include "ptec_nn_math.h"
#include "ptec_nn_window.h"

ptec_status ptec_nn_convolve_s16_rows(const ptec_nn_conv_s16_params *params, const ptec_nn_per_channel_quant *quant,
                                      const ptec_nn_dims *input_dims, const int16_t *input,
                                      const ptec_nn_dims *filter_dims, const int8_t *filter, const int64_t *bias,
                                      const ptec_nn_dims *output_dims, int16_t *output)
{
    const ptec_nn_dims in = *input_dims;
    const ptec_nn_dims f = *filter_dims;
    const ptec_nn_dims out = *output_dims;
    const ptec_nn_conv_s16_params p = *params;
    const int32_t groups = in.c / f.c;
    const int32_t group_out = f.n / groups;
    const size_t group_in = (size_t)f.c;
    const size_t in_col = (size_t)in.c;
    const size_t in_row = (size_t)in.w * in_col;
    const size_t filter_row = (size_t)f.w * group_in;
    const size_t filter_channel = (size_t)f.h * filter_row;
    const int runs = groups == 1 && p.dilation.w == 1;
    int16_t *y = output;
    for (int32_t n = 0; n < out.n; ++n) {
        const int16_t *image = input + (size_t)n * (size_t)in.h * in_row;
        for (int32_t oy = 0; oy < out.h; ++oy) {
            const int32_t y0 = oy * p.stride.h - p.padding.h;
            int32_t ky0, ky1;
            ptec_nn_tap_range(y0, p.dilation.h, f.h, in.h, &ky0, &ky1);
            for (int32_t ox = 0; ox < out.w; ++ox, y += out.c) {
                const int32_t x0 = ox * p.stride.w - p.padding.w;
                int32_t kx0, kx1;
                ptec_nn_tap_range(x0, p.dilation.w, f.w, in.w, &kx0, &kx1);
                for (int32_t g = 0; g < groups; ++g) {
                    const size_t c0 = (size_t)g * group_in;
                    const int32_t o_end = (g + 1) * group_out;
                    for (int32_t o = g * group_out; o < o_end; o += 2) {
                        const int32_t rows = o_end - o >= 2 ? 2 : 1;
                        const int8_t *w_o = filter + (size_t)o * filter_channel;
                        int64_t acc[2] = {0, 0};
                        for (int32_t ky = ky0; ky < ky1; ++ky) {
                            const int16_t *x_row = image + (size_t)(y0 + ky * p.dilation.h) * in_row + c0;
                            const int8_t *w_row = w_o + (size_t)ky * filter_row;
                            if (runs) {
                                if (kx1 > kx0) {
                                    PTEC_NN_DOT_ROWS_S16(x_row + (size_t)(x0 + kx0) * in_col,
                                                         w_row + (size_t)kx0 * group_in,
                                                         (size_t)(kx1 - kx0) * group_in, filter_channel, rows, acc);
                                }
                            } else {
                                for (int32_t kx = kx0; kx < kx1; ++kx) {
                                    PTEC_NN_DOT_ROWS_S16(x_row + (size_t)(x0 + kx * p.dilation.w) * in_col,
                                                         w_row + (size_t)kx * group_in, group_in, filter_channel,
                                                         rows, acc);
                                }
                            }
                        }
                        for (int32_t r = 0; r < rows; ++r) {
                            const int32_t oc = o + r;
                            y[oc] = ptec_nn_output_s16(acc[r], bias, oc,
                                                       ptec_nn_reduce_multiplier(quant->multipliers[oc]),
                                                       quant->shifts[oc], p.activation.min, p.activation.max);
                        }
                    }
                }
            }
        }
    }
    return PTEC_OK;
}

#else
typedef int ptec_nn_convolve_s16_rows_unused; /* a translation unit must not be empty */
#endif
