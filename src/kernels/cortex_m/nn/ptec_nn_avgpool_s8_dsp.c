/* DSP average pooling: four channels per word. SXTAB16 adds bytes 0 and 2
 * (and, rotated, 1 and 3) of each window position into two int16 pairs,
 * two instructions for four channels. int16 holds the sum of up to 256
 * int8 values (-128 * 256 = -32768), so larger windows are refused here
 * and take the reference loop. The division is scalar, once per output. */
#include "ptec_nn_variants.h"

#if defined(PTEC_NN_DSP)
#include "ptec_nn_dsp.h"
#include "ptec_nn_math.h"
#include "ptec_nn_window.h"

static inline int8_t average(int32_t sum, int32_t count, const ptec_nn_pool_params *p)
{
    return (int8_t)ptec_nn_clamp(ptec_nn_div_round(sum, count), p->activation.min, p->activation.max);
}

ptec_status ptec_nn_avgpool_s8_dsp(const ptec_nn_pool_params *params, const ptec_nn_dims *input_dims,
                                   const int8_t *input, const ptec_nn_dims *output_dims, int8_t *output)
{
    const ptec_nn_dims in = *input_dims;
    const ptec_nn_dims out = *output_dims;
    const ptec_nn_pool_params p = *params;
    if ((int64_t)p.kernel.h * p.kernel.w > 256) {
        return PTEC_NOT_SUPPORTED;
    }
    const size_t pixel = (size_t)in.c;
    const size_t row = (size_t)in.w * pixel;
    const int32_t quads = out.c & ~3;
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
                int32_t c = 0;
                for (; c < quads; c += 4) {
                    uint32_t even = 0, odd = 0; /* channels 0 and 2, 1 and 3 */
                    for (int32_t iy = y_begin; iy < y_end; ++iy) {
                        const int8_t *x = corner + (size_t)(iy - y_begin) * row + (size_t)c;
                        for (int32_t ix = x_begin; ix < x_end; ++ix, x += pixel) {
                            const uint32_t v = ptec_nn_load4(x);
                            even = ptec_nn_sxtab16_even(even, v);
                            odd = ptec_nn_sxtab16_odd(odd, v);
                        }
                    }
                    y[c] = average((int16_t)(even & 0xFFFFu), count, &p);
                    y[c + 1] = average((int16_t)(odd & 0xFFFFu), count, &p);
                    y[c + 2] = average((int16_t)(even >> 16), count, &p);
                    y[c + 3] = average((int16_t)(odd >> 16), count, &p);
                }
                for (; c < out.c; ++c) {
                    int32_t sum = 0;
                    for (int32_t iy = y_begin; iy < y_end; ++iy) {
                        const int8_t *x = corner + (size_t)(iy - y_begin) * row + (size_t)c;
                        for (int32_t ix = x_begin; ix < x_end; ++ix, x += pixel) {
                            sum += *x;
                        }
                    }
                    y[c] = average(sum, count, &p);
                }
            }
        }
    }
    return PTEC_OK;
}

#else
typedef int ptec_nn_avgpool_dsp_unused; /* a translation unit must not be empty */
#endif
