/* DSP int16 max pooling (Cortex-M33, M7, M4): four channels per step, as
 * two words of two. SSUB16 sets the GE flags of each halfword lane where
 * the new value is at least the best so far (from the exact 17-bit
 * difference, so for every pair of int16 values) and SEL keeps those
 * halves: a two-lane signed max in two instructions. The running max
 * starts from activation.min (the reference's starting value, also the
 * result of a window wholly in the padding), and activation.max is applied
 * the same way at the end: the reference's maximum and clamp, for an
 * activation range within int16 (others, only reachable by calling the
 * math function directly, run the reference). The last out.c % 4 channels
 * are scalar. */
#include "ptec_nn_variants.h"

#if defined(PTEC_NN_DSP)
#include "ptec_nn_dsp.h"
#include "ptec_nn_math.h"
#include "ptec_nn_window.h"

static inline uint32_t max2(uint32_t a, uint32_t b)
{
    (void)__ssub16((int16x2_t)a, (int16x2_t)b); /* GE where a >= b */
    return (uint32_t)__sel((int8x4_t)a, (int8x4_t)b);
}

static inline uint32_t min2(uint32_t a, uint32_t b)
{
    (void)__ssub16((int16x2_t)a, (int16x2_t)b); /* GE where a >= b */
    return (uint32_t)__sel((int8x4_t)b, (int8x4_t)a);
}

static inline uint32_t load2_s16(const int16_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

ptec_status ptec_nn_maxpool_s16_dsp(const ptec_nn_pool_params *params, const ptec_nn_dims *input_dims,
                                    const int16_t *input, const ptec_nn_dims *output_dims, int16_t *output)
{
    const ptec_nn_pool_params p = *params;
    if (!ptec_nn_activation_s16_ok(p.activation)) {
        return PTEC_NOT_SUPPORTED;
    }
    const ptec_nn_dims in = *input_dims;
    const ptec_nn_dims out = *output_dims;
    const size_t pixel = (size_t)in.c;
    const size_t row = (size_t)in.w * pixel;
    const int32_t quads = out.c & ~3;
    const uint32_t lo = (uint32_t)(uint16_t)p.activation.min * 0x00010001u;
    const uint32_t hi = (uint32_t)(uint16_t)p.activation.max * 0x00010001u;
    int16_t *y = output;
    for (int32_t n = 0; n < out.n; ++n) {
        const int16_t *image = input + (size_t)n * (size_t)in.h * row;
        for (int32_t oy = 0; oy < out.h; ++oy) {
            const ptec_nn_span ys = ptec_nn_pool_span(oy, p.stride.h, p.padding.h, p.kernel.h, in.h);
            for (int32_t ox = 0; ox < out.w; ++ox, y += out.c) {
                const ptec_nn_span xs = ptec_nn_pool_span(ox, p.stride.w, p.padding.w, p.kernel.w, in.w);
                int32_t c = 0;
                for (; c < quads; c += 4) {
                    uint32_t best01 = lo, best23 = lo;
                    for (int32_t iy = ys.begin; iy < ys.end; ++iy) {
                        const int16_t *x = image + (size_t)iy * row + (size_t)c;
                        for (int32_t ix = xs.begin; ix < xs.end; ++ix) {
                            const int16_t *v = x + (size_t)ix * pixel;
                            best01 = max2(load2_s16(v), best01);
                            best23 = max2(load2_s16(v + 2), best23);
                        }
                    }
                    best01 = min2(best01, hi);
                    best23 = min2(best23, hi);
                    memcpy(y + c, &best01, sizeof best01);
                    memcpy(y + c + 2, &best23, sizeof best23);
                }
                for (; c < out.c; ++c) {
                    int32_t best = p.activation.min;
                    for (int32_t iy = ys.begin; iy < ys.end; ++iy) {
                        const int16_t *x = image + (size_t)iy * row + (size_t)c;
                        for (int32_t ix = xs.begin; ix < xs.end; ++ix) {
                            const int32_t v = x[(size_t)ix * pixel];
                            best = v > best ? v : best;
                        }
                    }
                    y[c] = (int16_t)ptec_nn_clamp(best, p.activation.min, p.activation.max);
                }
            }
        }
    }
    return PTEC_OK;
}

#else
typedef int ptec_nn_maxpool_s16_dsp_unused; /* a translation unit must not be empty */
#endif
