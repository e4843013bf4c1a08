/* int16 max pooling over the in-bounds window positions, clamped
 * (docs/kernels.md, "16-bit activations"; CMSIS-NN arm_max_pool_s16). A
 * window lying entirely in the padding yields activation.min, as in
 * ptec_nn_maxpool_s8 (CMSIS-NN leaves that output undefined). */
#include "ptec_nn.h"
#include "ptec_nn_math.h"
#include "ptec_nn_variants.h"
#include "ptec_nn_window.h"

ptec_status ptec_nn_maxpool_s16(const ptec_nn_pool_params *params, const ptec_nn_dims *input_dims,
                                const int16_t *input, const ptec_nn_dims *output_dims, int16_t *output)
{
    const ptec_nn_dims in = *input_dims;
    const ptec_nn_dims out = *output_dims;
    bool empty;
    const ptec_status checked = ptec_nn_pool_check(input_dims, output_dims, input, output, &empty);
    if (checked != PTEC_OK || empty) {
        return checked;
    }
    if (params == NULL) {
        return PTEC_INVALID_ARGUMENT;
    }
#if defined(PTEC_NN_MVE) || defined(PTEC_NN_DSP)
#if defined(PTEC_NN_MVE)
    const ptec_status status = ptec_nn_maxpool_s16_mve(params, input_dims, input, output_dims, output);
#else
    const ptec_status status = ptec_nn_maxpool_s16_dsp(params, input_dims, input, output_dims, output);
#endif
    if (status != PTEC_NOT_SUPPORTED) {
        return status; /* an activation range outside int16 keeps the loops below */
    }
#endif
    const ptec_nn_pool_params p = *params;
    int16_t *y = output;
    for (int32_t n = 0; n < out.n; ++n) {
        const int16_t *image = input + (size_t)n * (size_t)in.h * (size_t)in.w * (size_t)in.c;
        for (int32_t oy = 0; oy < out.h; ++oy) {
            const ptec_nn_span ys = ptec_nn_pool_span(oy, p.stride.h, p.padding.h, p.kernel.h, in.h);
            for (int32_t ox = 0; ox < out.w; ++ox) {
                const ptec_nn_span xs = ptec_nn_pool_span(ox, p.stride.w, p.padding.w, p.kernel.w, in.w);
                for (int32_t c = 0; c < out.c; ++c) {
                    int32_t best = p.activation.min;
                    for (int32_t iy = ys.begin; iy < ys.end; ++iy) {
                        const int16_t *x = image + (size_t)iy * (size_t)in.w * (size_t)in.c + (size_t)c;
                        for (int32_t ix = xs.begin; ix < xs.end; ++ix) {
                            const int32_t v = x[(size_t)ix * (size_t)in.c];
                            best = v > best ? v : best;
                        }
                    }
                    *y++ = (int16_t)ptec_nn_clamp(best, p.activation.min, p.activation.max);
                }
            }
        }
    }
    return PTEC_OK;
}
