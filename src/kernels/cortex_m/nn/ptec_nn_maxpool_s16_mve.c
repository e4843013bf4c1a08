/* Helium int16 max pooling (Cortex-M55): per output pixel, eight channels
 * per vector, VMAX.S16 over the in-bounds window positions from
 * activation.min, then VMIN with activation.max: the reference's maximum
 * and clamp, lane-wise, for an activation range within int16 (others,
 * only reachable by calling the math function directly, run the
 * reference). The last channels are a predicated vector (VCTP.16): its
 * missing lanes load nothing and are not stored. */
#include "ptec_nn_variants.h"

#if defined(PTEC_NN_MVE)
#include "ptec_nn_mve.h"
#include "ptec_nn_pool_s16.h"

static ptec_status pixel_mve(const ptec_nn_pool_s16_window *win, int32_t channels, ptec_nn_activation act,
                             int16_t *y)
{
    const int16x8_t lo = vdupq_n_s16((int16_t)act.min), hi = vdupq_n_s16((int16_t)act.max);
    for (int32_t c = 0; c < channels; c += 8) {
        const mve_pred16_t lanes = vctp16q((uint32_t)(channels - c));
        int16x8_t best = lo;
        for (int32_t iy = win->ys.begin; iy < win->ys.end; ++iy) {
            const int16_t *x = win->image + (size_t)iy * win->row + (size_t)c;
            for (int32_t ix = win->xs.begin; ix < win->xs.end; ++ix) {
                best = vmaxq_s16(best, vldrhq_z_s16(x + (size_t)ix * win->col, lanes));
            }
        }
        vstrhq_p_s16(y + c, vminq_s16(best, hi), lanes);
    }
    return PTEC_OK;
}

ptec_status ptec_nn_maxpool_s16_mve(const ptec_nn_pool_params *params, const ptec_nn_dims *input_dims,
                                    const int16_t *input, const ptec_nn_dims *output_dims, int16_t *output)
{
    if (!ptec_nn_activation_s16_ok(params->activation)) {
        return PTEC_NOT_SUPPORTED;
    }
    return ptec_nn_pool_s16_walk(params, input_dims, input, output_dims, output, pixel_mve);
}

#else
typedef int ptec_nn_maxpool_s16_mve_unused; /* a translation unit must not be empty */
#endif
