/* Helium average pooling: four channels per vector, VLDRB.S32 widening
 * each window position's bytes and VADD summing them. The division (no
 * vector form exists) is scalar, once per output. */
#include "ptec_nn_variants.h"

#if defined(PTEC_NN_MVE)
#include <arm_mve.h>

#include "ptec_nn_math.h"
#include "ptec_nn_window.h"

ptec_status ptec_nn_avgpool_s8_mve(const ptec_nn_pool_params *params, const ptec_nn_dims *input_dims,
                                   const int8_t *input, const ptec_nn_dims *output_dims, int8_t *output)
{
    const ptec_nn_dims in = *input_dims;
    const ptec_nn_dims out = *output_dims;
    const ptec_nn_pool_params p = *params;
    const size_t pixel = (size_t)in.c;
    const size_t row = (size_t)in.w * pixel;
    int8_t *y = output;
    for (int32_t n = 0; n < out.n; ++n) {
        const int8_t *image = input + (size_t)n * (size_t)in.h * row;
        for (int32_t oy = 0; oy < out.h; ++oy) {
            const ptec_nn_span ys = ptec_nn_pool_span(oy, p.stride.h, p.padding.h, p.kernel.h, in.h);
            const int32_t y_begin = ys.begin, y_end = ys.end;
            for (int32_t ox = 0; ox < out.w; ++ox, y += out.c) {
                const ptec_nn_span xs = ptec_nn_pool_span(ox, p.stride.w, p.padding.w, p.kernel.w, in.w);
                const int32_t x_begin = xs.begin, x_end = xs.end;
                if (y_begin >= y_end || x_begin >= x_end) {
                    return PTEC_INVALID_ARGUMENT; /* a window entirely in the padding */
                }
                const int32_t count = (y_end - y_begin) * (x_end - x_begin);
                const int8_t *corner = image + (size_t)y_begin * row + (size_t)x_begin * pixel;
                for (int32_t c = 0; c < out.c; c += 4) {
                    const int32_t lanes = out.c - c < 4 ? out.c - c : 4;
                    const mve_pred16_t valid = vctp32q((uint32_t)lanes);
                    int32x4_t acc = vdupq_n_s32(0);
                    for (int32_t iy = y_begin; iy < y_end; ++iy) {
                        const int8_t *x = corner + (size_t)(iy - y_begin) * row + (size_t)c;
                        for (int32_t ix = x_begin; ix < x_end; ++ix, x += pixel) {
                            acc = vaddq_s32(acc, vldrbq_z_s32(x, valid));
                        }
                    }
                    int32_t sums[4];
                    vst1q_s32(sums, acc);
                    for (int32_t t = 0; t < lanes; ++t) {
                        y[c + t] = (int8_t)ptec_nn_clamp(ptec_nn_div_round(sums[t], count), p.activation.min,
                                                         p.activation.max);
                    }
                }
            }
        }
    }
    return PTEC_OK;
}

#else
typedef int ptec_nn_avgpool_mve_unused; /* a translation unit must not be empty */
#endif
