/* Helium max pooling: sixteen channels per int8 vector. VMAX over the
 * in-bounds window positions starts from activation.min (the reference's
 * starting value, also the result of a window wholly in the padding), and
 * one VMIN applies activation.max. A channel count that is not a multiple
 * of 16 ends with a predicated vector. */
#include "ptec_nn_variants.h"

#if defined(PTEC_NN_MVE)
#include <arm_mve.h>

#include "ptec_nn_window.h"

ptec_status ptec_nn_maxpool_s8_mve(const ptec_nn_pool_params *params, const ptec_nn_dims *input_dims,
                                   const int8_t *input, const ptec_nn_dims *output_dims, int8_t *output)
{
    const ptec_nn_dims in = *input_dims;
    const ptec_nn_dims out = *output_dims;
    const ptec_nn_pool_params p = *params;
    const size_t pixel = (size_t)in.c;
    const size_t row = (size_t)in.w * pixel;
    const int8x16_t lo = vdupq_n_s8((int8_t)p.activation.min);
    const int8x16_t hi = vdupq_n_s8((int8_t)p.activation.max);
    int8_t *y = output;
    for (int32_t n = 0; n < out.n; ++n) {
        const int8_t *image = input + (size_t)n * (size_t)in.h * row;
        for (int32_t oy = 0; oy < out.h; ++oy) {
            const ptec_nn_span ys = ptec_nn_pool_span(oy, p.stride.h, p.padding.h, p.kernel.h, in.h);
            const int32_t y_begin = ys.begin, y_end = ys.end;
            for (int32_t ox = 0; ox < out.w; ++ox, y += out.c) {
                const ptec_nn_span xs = ptec_nn_pool_span(ox, p.stride.w, p.padding.w, p.kernel.w, in.w);
                const int32_t x_begin = xs.begin, x_end = xs.end;
                for (int32_t c = 0; c < out.c; c += 16) {
                    const mve_pred16_t valid = vctp8q((uint32_t)(out.c - c));
                    int8x16_t best = lo;
                    for (int32_t iy = y_begin; iy < y_end; ++iy) {
                        const int8_t *x = image + (size_t)iy * row + (size_t)x_begin * pixel + (size_t)c;
                        for (int32_t ix = x_begin; ix < x_end; ++ix, x += pixel) {
                            /* Inactive lanes load 0 and are never stored. */
                            best = vmaxq_s8(best, vldrbq_z_s8(x, valid));
                        }
                    }
                    vstrbq_p_s8(y + c, vminq_s8(best, hi), valid);
                }
            }
        }
    }
    return PTEC_OK;
}

#else
typedef int ptec_nn_maxpool_mve_unused; /* a translation unit must not be empty */
#endif
