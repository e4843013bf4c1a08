/* Helium depthwise convolution with int16 activations (Cortex-M55), depth
 * multiplier 1: per output pixel, four channels per vector over the
 * in-bounds taps. Per tap, VLDRH.S32 and VLDRB.S32 widen four inputs and
 * four weights to int32 lanes as they load them, and VMUL + VADD add the
 * four products to the channels' int32 sums. The last channels are a
 * predicated vector (VCTP.32): its missing lanes load nothing and read 0.
 * The pixel walk, the window limit that keeps the int32 lanes exact, and
 * its proof: ptec_nn_depthwise_s16.h. */
#include "ptec_nn_variants.h"

#if defined(PTEC_NN_MVE)
#include "ptec_nn_depthwise_s16.h"
#include "ptec_nn_mve.h"

static void pixel_mve(const ptec_nn_dw_s16_window *win, int32_t channels, const int64_t *bias,
                      const ptec_nn_per_channel_quant *quant, ptec_nn_activation act, int16_t *y)
{
    for (int32_t c = 0; c < channels; c += 4) {
        const mve_pred16_t lanes = vctp32q((uint32_t)(channels - c));
        int32x4_t acc = vdupq_n_s32(0);
        for (int32_t r = 0; r < win->rows; ++r) {
            const int16_t *xp = win->x + (size_t)r * win->x_row + (size_t)c;
            const int8_t *wp = win->w + (size_t)r * win->w_row + (size_t)c;
            for (int32_t t = 0; t < win->cols; ++t, xp += win->x_col, wp += win->w_col) {
                acc = vaddq_s32(acc, vmulq_s32(vldrhq_z_s32(xp, lanes), vldrbq_z_s32(wp, lanes)));
            }
        }
        int32_t sums[4];
        vst1q_s32(sums, acc);
        const int32_t count = channels - c < 4 ? channels - c : 4;
        for (int32_t k = 0; k < count; ++k) {
            const int32_t o = c + k;
            y[o] = ptec_nn_output_s16(sums[k], bias, o, ptec_nn_reduce_multiplier(quant->multipliers[o]),
                                      quant->shifts[o], act.min, act.max);
        }
    }
}

ptec_status ptec_nn_depthwise_conv_s16_mve(const ptec_nn_conv_s16_params *params,
                                           const ptec_nn_per_channel_quant *quant, const ptec_nn_dims *input_dims,
                                           const int16_t *input, const ptec_nn_dims *filter_dims,
                                           const int8_t *filter, const int64_t *bias,
                                           const ptec_nn_dims *output_dims, int16_t *output)
{
    return ptec_nn_depthwise_s16_walk(params, quant, input_dims, input, filter_dims, filter, bias, output_dims,
                                      output, pixel_mve);
}

#else
typedef int ptec_nn_depthwise_conv_s16_mve_unused; /* a translation unit must not be empty */
#endif
