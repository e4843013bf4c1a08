/* Helium int16 average pooling (Cortex-M55): per output pixel, four
 * channels per vector, the in-bounds window positions summed in int32
 * lanes (VLDRH.S32 widens as it loads), then each lane divided by the
 * position count with the reference's rounding (half away from zero, the
 * nudge in int64) and clamped. The lanes hold the reference's sums
 * exactly: the windows are checked to have at most 2^16 positions, so a
 * sum lies within [-2^15 * 2^16, (2^15 - 1) * 2^16], inside int32. The
 * windows are checked in the reference's order, each before its outputs
 * are written, so an error leaves the same outputs and status. The last
 * channels are a predicated vector (VCTP.32). */
#include "ptec_nn_variants.h"

#if defined(PTEC_NN_MVE)
#include "ptec_nn_math.h"
#include "ptec_nn_mve.h"
#include "ptec_nn_pool_s16.h"

static ptec_status pixel_mve(const ptec_nn_pool_s16_window *win, int32_t channels, ptec_nn_activation act,
                             int16_t *y)
{
    int32_t count;
    const ptec_status window = ptec_nn_avgpool_s16_count(win->ys, win->xs, &count);
    if (window != PTEC_OK) {
        return window;
    }
    for (int32_t c = 0; c < channels; c += 4) {
        const mve_pred16_t lanes = vctp32q((uint32_t)(channels - c));
        int32x4_t acc = vdupq_n_s32(0);
        for (int32_t iy = win->ys.begin; iy < win->ys.end; ++iy) {
            const int16_t *x = win->image + (size_t)iy * win->row + (size_t)c;
            for (int32_t ix = win->xs.begin; ix < win->xs.end; ++ix) {
                acc = vaddq_s32(acc, vldrhq_z_s32(x + (size_t)ix * win->col, lanes));
            }
        }
        int32_t sums[4];
        vst1q_s32(sums, acc);
        const int32_t lanes_used = channels - c < 4 ? channels - c : 4;
        for (int32_t r = 0; r < lanes_used; ++r) {
            y[c + r] = (int16_t)ptec_nn_clamp(ptec_nn_div_round_wide(sums[r], count), act.min, act.max);
        }
    }
    return PTEC_OK;
}

ptec_status ptec_nn_avgpool_s16_mve(const ptec_nn_pool_params *params, const ptec_nn_dims *input_dims,
                                    const int16_t *input, const ptec_nn_dims *output_dims, int16_t *output)
{
    return ptec_nn_pool_s16_walk(params, input_dims, input, output_dims, output, pixel_mve);
}

#else
typedef int ptec_nn_avgpool_s16_mve_unused; /* a translation unit must not be empty */
#endif
