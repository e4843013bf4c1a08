/* DSP max pooling: four channels per word. SSUB8 sets the GE flag of each
 * byte lane where the new value is at least the best so far and SEL keeps
 * those bytes: a four-lane signed max in two instructions. The running max
 * starts from activation.min (the reference's starting value, also the
 * result of a window wholly in the padding); activation.max is applied the
 * same way at the end. The last out.c % 4 channels are scalar. */
#include "ptec_nn_variants.h"

#if defined(PTEC_NN_DSP)
#include "ptec_nn_dsp.h"
#include "ptec_nn_math.h"

static inline uint32_t max4(uint32_t a, uint32_t b)
{
    (void)__ssub8((int8x4_t)a, (int8x4_t)b); /* GE where a >= b */
    return (uint32_t)__sel((int8x4_t)a, (int8x4_t)b);
}

static inline uint32_t min4(uint32_t a, uint32_t b)
{
    (void)__ssub8((int8x4_t)a, (int8x4_t)b); /* GE where a >= b */
    return (uint32_t)__sel((int8x4_t)b, (int8x4_t)a);
}

ptec_status ptec_nn_maxpool_s8_dsp(const ptec_nn_pool_params *params, const ptec_nn_dims *input_dims,
                                   const int8_t *input, const ptec_nn_dims *output_dims, int8_t *output)
{
    const ptec_nn_dims in = *input_dims;
    const ptec_nn_dims out = *output_dims;
    const ptec_nn_pool_params p = *params;
    const size_t pixel = (size_t)in.c;
    const size_t row = (size_t)in.w * pixel;
    const int32_t quads = out.c & ~3;
    const uint32_t lo = (uint32_t)(uint8_t)p.activation.min * 0x01010101u;
    const uint32_t hi = (uint32_t)(uint8_t)p.activation.max * 0x01010101u;
    int8_t *y = output;
    for (int32_t n = 0; n < out.n; ++n) {
        const int8_t *image = input + (size_t)n * (size_t)in.h * row;
        for (int32_t oy = 0; oy < out.h; ++oy) {
            /* ptec_nn_pool_span spelled out: through the helper, GCC 12
             * allocates this nest's registers worse (+3% instructions). */
            const int32_t y0 = oy * p.stride.h - p.padding.h;
            const int32_t y_begin = y0 < 0 ? 0 : y0;
            const int32_t y_end = y0 + p.kernel.h < in.h ? y0 + p.kernel.h : in.h;
            for (int32_t ox = 0; ox < out.w; ++ox, y += out.c) {
                const int32_t x0 = ox * p.stride.w - p.padding.w;
                const int32_t x_begin = x0 < 0 ? 0 : x0;
                const int32_t x_end = x0 + p.kernel.w < in.w ? x0 + p.kernel.w : in.w;
                int32_t c = 0;
                for (; c < quads; c += 4) {
                    uint32_t best = lo;
                    for (int32_t iy = y_begin; iy < y_end; ++iy) {
                        const int8_t *x = image + (size_t)iy * row + (size_t)x_begin * pixel + (size_t)c;
                        for (int32_t ix = x_begin; ix < x_end; ++ix, x += pixel) {
                            best = max4(ptec_nn_load4(x), best);
                        }
                    }
                    best = min4(best, hi);
                    memcpy(y + c, &best, sizeof best);
                }
                for (; c < out.c; ++c) {
                    int32_t best = p.activation.min;
                    for (int32_t iy = y_begin; iy < y_end; ++iy) {
                        const int8_t *x = image + (size_t)iy * row + (size_t)x_begin * pixel + (size_t)c;
                        for (int32_t ix = x_begin; ix < x_end; ++ix, x += pixel) {
                            best = *x > best ? *x : best;
                        }
                    }
                    y[c] = (int8_t)ptec_nn_clamp(best, p.activation.min, p.activation.max);
                }
            }
        }
    }
    return PTEC_OK;
}

#else
typedef int ptec_nn_maxpool_dsp_unused; /* a translation unit must not be empty */
#endif
