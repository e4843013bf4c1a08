/* int16 average pooling (docs/kernels.md, "16-bit activations"; CMSIS-NN
 * arm_avgpool_s16): the raw values of the in-bounds window positions are
 * summed in int32 and divided by their count, rounded half away from zero,
 * then clamped. Windows are limited to 2^16 positions, so that the sum
 * stays inside int32 (its nudge by count / 2 is taken in 64 bits:
 * ptec_nn_div_round_wide); CMSIS-NN's DSP build sums with saturation
 * (QADD), which then never saturates either. */
#include "ptec_nn.h"
#include "ptec_nn_math.h"
#include "ptec_nn_variants.h"
#include "ptec_nn_window.h"

ptec_status ptec_nn_avgpool_s16(const ptec_nn_pool_params *params, const ptec_nn_dims *input_dims,
                                const int16_t *input, const ptec_nn_dims *output_dims, int16_t *output)
{
    bool empty;
    const ptec_status checked = ptec_nn_pool_check(input_dims, output_dims, input, output, &empty);
    if (checked != PTEC_OK || empty) {
        return checked;
    }
    if (params == NULL) {
        return PTEC_INVALID_ARGUMENT;
    }
#if defined(PTEC_NN_MVE)
    /* The same checks, statuses and outputs. */
    return ptec_nn_avgpool_s16_mve(params, input_dims, input, output_dims, output);
#elif defined(PTEC_NN_DSP)
    return ptec_nn_avgpool_s16_dsp(params, input_dims, input, output_dims, output);
#else
    const ptec_nn_dims in = *input_dims;
    const ptec_nn_dims out = *output_dims;
    const ptec_nn_pool_params p = *params;
    int16_t *y = output;
    for (int32_t n = 0; n < out.n; ++n) {
        const int16_t *image = input + (size_t)n * (size_t)in.h * (size_t)in.w * (size_t)in.c;
        for (int32_t oy = 0; oy < out.h; ++oy) {
            const ptec_nn_span ys = ptec_nn_pool_span(oy, p.stride.h, p.padding.h, p.kernel.h, in.h);
            for (int32_t ox = 0; ox < out.w; ++ox) {
                const ptec_nn_span xs = ptec_nn_pool_span(ox, p.stride.w, p.padding.w, p.kernel.w, in.w);
                int32_t count;
                const ptec_status window = ptec_nn_avgpool_s16_count(ys, xs, &count);
                if (window != PTEC_OK) {
                    return window;
                }
                for (int32_t c = 0; c < out.c; ++c) {
                    int32_t sum = 0;
                    for (int32_t iy = ys.begin; iy < ys.end; ++iy) {
                        const int16_t *x = image + (size_t)iy * (size_t)in.w * (size_t)in.c + (size_t)c;
                        for (int32_t ix = xs.begin; ix < xs.end; ++ix) {
                            sum += x[(size_t)ix * (size_t)in.c];
                        }
                    }
                    *y++ = (int16_t)ptec_nn_clamp(ptec_nn_div_round_wide(sum, count), p.activation.min,
                                                  p.activation.max);
                }
            }
        }
    }
    return PTEC_OK;
#endif
}
