/* int8 average pooling over raw int8 values (cortex-m-ops.md §3.13).
 * Padded positions count neither in the sum nor in the divisor; the
 * quotient is rounded half away from zero. count_include_pad models get an
 * explicit pad op in front instead. */
#include "ptec_nn.h"
#include "ptec_nn_math.h"
#include "ptec_nn_variants.h"
#include "ptec_nn_window.h"

uint32_t ptec_nn_avgpool_s8_buffer_size(const ptec_nn_dims *input_dims)
{
    (void)input_dims;
    return 0;
}

ptec_status ptec_nn_avgpool_s8(ptec_nn_buffer scratch, const ptec_nn_pool_params *params,
                               const ptec_nn_dims *input_dims, const int8_t *input,
                               const ptec_nn_dims *output_dims, int8_t *output)
{
    (void)scratch;
    bool empty;
    const ptec_status checked = ptec_nn_pool_check(input_dims, output_dims, input, output, &empty);
    if (checked != PTEC_OK || empty) {
        return checked;
    }
#if defined(PTEC_NN_MVE)
    return ptec_nn_avgpool_s8_mve(params, input_dims, input, output_dims, output);
#else
#if defined(PTEC_NN_DSP)
    /* Windows of up to 256 positions; larger ones keep the loops below. */
    const ptec_status status = ptec_nn_avgpool_s8_dsp(params, input_dims, input, output_dims, output);
    if (status != PTEC_NOT_SUPPORTED) {
        return status;
    }
#endif
    const ptec_nn_dims in = *input_dims;
    const ptec_nn_dims out = *output_dims;
    const ptec_nn_pool_params p = *params;
    int8_t *y = output;
    for (int32_t n = 0; n < out.n; ++n) {
        const int8_t *image = input + (size_t)n * (size_t)in.h * (size_t)in.w * (size_t)in.c;
        for (int32_t oy = 0; oy < out.h; ++oy) {
            const ptec_nn_span ys = ptec_nn_pool_span(oy, p.stride.h, p.padding.h, p.kernel.h, in.h);
            const int32_t y_begin = ys.begin, y_end = ys.end;
            for (int32_t ox = 0; ox < out.w; ++ox) {
                const ptec_nn_span xs = ptec_nn_pool_span(ox, p.stride.w, p.padding.w, p.kernel.w, in.w);
                const int32_t x_begin = xs.begin, x_end = xs.end;
                if (y_begin >= y_end || x_begin >= x_end) {
                    return PTEC_INVALID_ARGUMENT; /* a window entirely in the padding */
                }
                const int32_t count = (y_end - y_begin) * (x_end - x_begin);
                for (int32_t c = 0; c < out.c; ++c) {
                    int32_t sum = 0;
                    for (int32_t iy = y_begin; iy < y_end; ++iy) {
                        const int8_t *x = image + ((size_t)iy * (size_t)in.w) * (size_t)in.c + (size_t)c;
                        for (int32_t ix = x_begin; ix < x_end; ++ix) {
                            sum += x[(size_t)ix * (size_t)in.c];
                        }
                    }
                    *y++ = (int8_t)ptec_nn_clamp(ptec_nn_div_round(sum, count), p.activation.min, p.activation.max);
                }
            }
        }
    }
    return PTEC_OK;
#endif
}
