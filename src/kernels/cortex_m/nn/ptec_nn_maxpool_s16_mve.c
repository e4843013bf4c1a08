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
#include "ptec_nn_window.h"

ptec_status ptec_nn_maxpool_s16_mve(const ptec_nn_pool_params *params, const ptec_nn_dims *input_dims,
                                    const int16_t *input, const ptec_nn_dims *output_dims, int16_t *output)
{
    const ptec_nn_pool_params p = *params;
    if (!ptec_nn_activation_s16_ok(p.activation)) {
        return PTEC_NOT_SUPPORTED;
    }
    const ptec_nn_dims in = *input_dims;
    const ptec_nn_dims out = *output_dims;
    const size_t in_col = (size_t)in.c;
    const size_t in_row = (size_t)in.w * in_col;
    const int16x8_t lo = vdupq_n_s16((int16_t)p.activation.min), hi = vdupq_n_s16((int16_t)p.activation.max);
    int16_t *y = output;
    for (int32_t n = 0; n < out.n; ++n) {
        const int16_t *image = input + (size_t)n * (size_t)in.h * in_row;
        for (int32_t oy = 0; oy < out.h; ++oy) {
            const ptec_nn_span ys = ptec_nn_pool_span(oy, p.stride.h, p.padding.h, p.kernel.h, in.h);
            for (int32_t ox = 0; ox < out.w; ++ox, y += out.c) {
                const ptec_nn_span xs = ptec_nn_pool_span(ox, p.stride.w, p.padding.w, p.kernel.w, in.w);
                for (int32_t c = 0; c < out.c; c += 8) {
                    const mve_pred16_t lanes = vctp16q((uint32_t)(out.c - c));
                    int16x8_t best = lo;
                    for (int32_t iy = ys.begin; iy < ys.end; ++iy) {
                        const int16_t *x = image + (size_t)iy * in_row + (size_t)c;
                        for (int32_t ix = xs.begin; ix < xs.end; ++ix) {
                            best = vmaxq_s16(best, vldrhq_z_s16(x + (size_t)ix * in_col, lanes));
                        }
                    }
                    vstrhq_p_s16(y + c, vminq_s16(best, hi), lanes);
                }
            }
        }
    }
    return PTEC_OK;
}

#else
typedef int ptec_nn_maxpool_s16_mve_unused; /* a translation unit must not be empty */
#endif
