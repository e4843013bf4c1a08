/* DSP int16 average pooling (Cortex-M33, M7, M4): per output pixel, two
 * channels per step, read as one word of two int16 values; each half is
 * added to its channel's int32 sum sign-extended (SXTAH for the bottom
 * half, an ADD with ASR #16 for the top one), so the sums are the
 * reference's exactly: the windows are checked to have at most 2^16
 * positions, so a sum lies within [-2^15 * 2^16, (2^15 - 1) * 2^16],
 * inside int32. Each sum is then divided by the position count with the
 * reference's rounding (half away from zero, the nudge in int64) and
 * clamped. The windows are checked in the reference's order, each before
 * its outputs are written, so an error leaves the same outputs and status.
 * No scratch: the two sums live in registers. An odd last channel is
 * scalar. (Two channels, not four: the code must fit the i.MX93 M33's
 * 128 KB TCM with the rest of the firmware.) */
#include "ptec_nn_variants.h"

#if defined(PTEC_NN_DSP)
#include "ptec_nn_dsp.h"
#include "ptec_nn_math.h"
#include "ptec_nn_pool_s16.h"

static inline uint32_t load2_s16(const int16_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* Out of line: the one division, shared by the two-channel step and the
 * tail (the code fits the i.MX93 M33 TCM). */
static __attribute__((noinline)) int16_t average(int32_t sum, int32_t count, ptec_nn_activation act)
{
    return (int16_t)ptec_nn_clamp(ptec_nn_div_round_wide(sum, count), act.min, act.max);
}

static ptec_status pixel_dsp(const ptec_nn_pool_s16_window *win, int32_t channels, ptec_nn_activation act,
                             int16_t *y)
{
    int32_t count;
    const ptec_status window = ptec_nn_avgpool_s16_count(win->ys, win->xs, &count);
    if (window != PTEC_OK) {
        return window;
    }
    int32_t c = 0;
    for (; c + 2 <= channels; c += 2) {
        int32_t s0 = 0, s1 = 0;
        for (int32_t iy = win->ys.begin; iy < win->ys.end; ++iy) {
            const int16_t *x = win->image + (size_t)iy * win->row + (size_t)win->xs.begin * win->col + (size_t)c;
            for (int32_t ix = win->xs.begin; ix < win->xs.end; ++ix, x += win->col) {
                const uint32_t v01 = load2_s16(x);
                s0 += (int16_t)v01;
                s1 += (int32_t)v01 >> 16;
            }
        }
        y[c] = average(s0, count, act);
        y[c + 1] = average(s1, count, act);
    }
    if (c < channels) {
        int32_t sum = 0;
        for (int32_t iy = win->ys.begin; iy < win->ys.end; ++iy) {
            const int16_t *x = win->image + (size_t)iy * win->row + (size_t)c;
            for (int32_t ix = win->xs.begin; ix < win->xs.end; ++ix) {
                sum += x[(size_t)ix * win->col];
            }
        }
        y[c] = average(sum, count, act);
    }
    return PTEC_OK;
}

ptec_status ptec_nn_avgpool_s16_dsp(const ptec_nn_pool_params *params, const ptec_nn_dims *input_dims,
                                    const int16_t *input, const ptec_nn_dims *output_dims, int16_t *output)
{
    return ptec_nn_pool_s16_walk(params, input_dims, input, output_dims, output, pixel_dsp);
}

#else
typedef int ptec_nn_avgpool_s16_dsp_unused; /* a translation unit must not be empty */
#endif
