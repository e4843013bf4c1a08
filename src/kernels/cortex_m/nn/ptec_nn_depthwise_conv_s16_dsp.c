/* DSP depthwise convolution with int16 activations (Cortex-M33, M7, M4),
 * depth multiplier 1: per output pixel, four channels at a time over the
 * in-bounds taps. Per tap, two word loads bring the four int16 inputs as
 * the pairs (x0, x1), (x2, x3), one load brings the four int8 weights,
 * SXTB16 and SXTB16 ROR #8 widen those to (w0, w2) and (w1, w3), and
 * SMLABB, SMLATB, SMLABT, SMLATT add x0*w0, x1*w1, x2*w2, x3*w3 to the four
 * channels' int32 sums. The channels past the last multiple of 4 take the
 * same sums one channel at a time. The pixel walk, the window limit that
 * keeps the int32 sums exact, and its proof: ptec_nn_depthwise_s16.h. */
#include "ptec_nn_variants.h"

#if defined(PTEC_NN_DSP)
#include "ptec_nn_depthwise_s16.h"
#include "ptec_nn_dsp.h"

static inline uint32_t load2_s16(const int16_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline int16_t out_s16(int32_t sum, const int64_t *bias, const ptec_nn_per_channel_quant *quant,
                              int32_t channel, ptec_nn_activation act)
{
    return ptec_nn_output_s16(sum, bias, channel, ptec_nn_reduce_multiplier(quant->multipliers[channel]),
                              quant->shifts[channel], act.min, act.max);
}

static void pixel_dsp(const ptec_nn_dw_s16_window *win, int32_t channels, const int64_t *bias,
                      const ptec_nn_per_channel_quant *quant, ptec_nn_activation act, int16_t *y)
{
    const int32_t rows = win->rows, cols = win->cols;
    const size_t x_row = win->x_row, x_col = win->x_col, w_row = win->w_row, w_col = win->w_col;
    int32_t c = 0;
    for (; c + 4 <= channels; c += 4) {
        int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
        const int16_t *xr = win->x + (size_t)c;
        const int8_t *wr = win->w + (size_t)c;
        /* Rows stepped, not indexed: GCC 12 then keeps the tap loop's
         * steps in registers (14 instructions a tap, not 16). A row
         * pointer moves on only while a row follows. */
        for (int32_t r = rows; r > 0; --r, xr += r > 0 ? x_row : 0, wr += r > 0 ? w_row : 0) {
            const int16_t *xp = xr;
            const int8_t *wp = wr;
            for (int32_t t = 0; t < cols; ++t, xp += x_col, wp += w_col) {
                const uint32_t x01 = load2_s16(xp), x23 = load2_s16(xp + 2), wv = ptec_nn_load4(wp);
                const int32_t w_even = (int32_t)ptec_nn_sxtb16_even(wv);
                const int32_t w_odd = (int32_t)ptec_nn_sxtb16_odd(wv);
                a0 = __smlabb((int32_t)x01, w_even, a0);
                a1 = __smlatb((int32_t)x01, w_odd, a1);
                a2 = __smlabt((int32_t)x23, w_even, a2);
                a3 = __smlatt((int32_t)x23, w_odd, a3);
            }
        }
        y[c] = out_s16(a0, bias, quant, c, act);
        y[c + 1] = out_s16(a1, bias, quant, c + 1, act);
        y[c + 2] = out_s16(a2, bias, quant, c + 2, act);
        y[c + 3] = out_s16(a3, bias, quant, c + 3, act);
    }
    for (; c < channels; ++c) {
        int32_t a = 0;
        for (int32_t r = 0; r < rows; ++r) {
            const int16_t *xp = win->x + (size_t)r * x_row + (size_t)c;
            const int8_t *wp = win->w + (size_t)r * w_row + (size_t)c;
            for (int32_t t = 0; t < cols; ++t, xp += x_col, wp += w_col) {
                a += (int32_t)*xp * (int32_t)*wp;
            }
        }
        y[c] = out_s16(a, bias, quant, c, act);
    }
}

ptec_status ptec_nn_depthwise_conv_s16_dsp(const ptec_nn_conv_s16_params *params,
                                           const ptec_nn_per_channel_quant *quant, const ptec_nn_dims *input_dims,
                                           const int16_t *input, const ptec_nn_dims *filter_dims,
                                           const int8_t *filter, const int64_t *bias,
                                           const ptec_nn_dims *output_dims, int16_t *output)
{
    return ptec_nn_depthwise_s16_walk(params, quant, input_dims, input, filter_dims, filter, bias, output_dims,
                                      output, pixel_dsp);
}

#else
typedef int ptec_nn_depthwise_conv_s16_dsp_unused; /* a translation unit must not be empty */
#endif
