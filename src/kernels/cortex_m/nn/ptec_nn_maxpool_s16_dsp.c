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
#include "ptec_nn_pool_s16.h"

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

static ptec_status pixel_dsp(const ptec_nn_pool_s16_window *win, int32_t channels, ptec_nn_activation act,
                             int16_t *y)
{
    const uint32_t lo = (uint32_t)(uint16_t)act.min * 0x00010001u;
    const uint32_t hi = (uint32_t)(uint16_t)act.max * 0x00010001u;
    int32_t c = 0;
    for (; c + 4 <= channels; c += 4) {
        uint32_t best01 = lo, best23 = lo;
        for (int32_t iy = win->ys.begin; iy < win->ys.end; ++iy) {
            const int16_t *x = win->image + (size_t)iy * win->row + (size_t)c;
            for (int32_t ix = win->xs.begin; ix < win->xs.end; ++ix) {
                const int16_t *v = x + (size_t)ix * win->col;
                best01 = max2(load2_s16(v), best01);
                best23 = max2(load2_s16(v + 2), best23);
            }
        }
        best01 = min2(best01, hi);
        best23 = min2(best23, hi);
        memcpy(y + c, &best01, sizeof best01);
        memcpy(y + c + 2, &best23, sizeof best23);
    }
    for (; c < channels; ++c) {
        int32_t best = act.min;
        for (int32_t iy = win->ys.begin; iy < win->ys.end; ++iy) {
            const int16_t *x = win->image + (size_t)iy * win->row + (size_t)c;
            for (int32_t ix = win->xs.begin; ix < win->xs.end; ++ix) {
                const int32_t v = x[(size_t)ix * win->col];
                best = v > best ? v : best;
            }
        }
        y[c] = (int16_t)ptec_nn_clamp(best, act.min, act.max);
    }
    return PTEC_OK;
}

ptec_status ptec_nn_maxpool_s16_dsp(const ptec_nn_pool_params *params, const ptec_nn_dims *input_dims,
                                    const int16_t *input, const ptec_nn_dims *output_dims, int16_t *output)
{
    if (!ptec_nn_activation_s16_ok(params->activation)) {
        return PTEC_NOT_SUPPORTED;
    }
    return ptec_nn_pool_s16_walk(params, input_dims, input, output_dims, output, pixel_dsp);
}

#else
typedef int ptec_nn_maxpool_s16_dsp_unused; /* a translation unit must not be empty */
#endif
