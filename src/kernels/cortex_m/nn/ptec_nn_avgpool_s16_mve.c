/* Helium int16 average pooling (Cortex-M55): per output pixel, four
 * channels per vector, the in-bounds window positions summed in int32
 * lanes (VLDRH.S32 widens as it loads), then each lane divided by the
 * position count with the reference's rounding (half away from zero, the
 * nudge in int64) and clamped. The lanes hold the reference's sums
 * exactly: the windows are checked to have at most 2^16 positions, so a
 * sum lies within [-2^15 * 2^16, (2^15 - 1) * 2^16], inside int32. The
 * windows are checked in the reference's order, each before its outputs
 * are written, so an error leaves the same outputs and status. The last
 * channels are a predicated vector (VCTP.32). */
#include "ptec_nn_variants.h"

#if defined(PTEC_NN_MVE)
#include "ptec_nn_math.h"
#include "ptec_nn_mve.h"
#include "ptec_nn_window.h"

ptec_status ptec_nn_avgpool_s16_mve(const ptec_nn_pool_params *params, const ptec_nn_dims *input_dims,
                                    const int16_t *input, const ptec_nn_dims *output_dims, int16_t *output)
{
    const ptec_nn_pool_params p = *params;
    const ptec_nn_dims in = *input_dims;
    const ptec_nn_dims out = *output_dims;
    const size_t in_col = (size_t)in.c;
    const size_t in_row = (size_t)in.w * in_col;
    int16_t *y = output;
    for (int32_t n = 0; n < out.n; ++n) {
        const int16_t *image = input + (size_t)n * (size_t)in.h * in_row;
        for (int32_t oy = 0; oy < out.h; ++oy) {
            const ptec_nn_span ys = ptec_nn_pool_span(oy, p.stride.h, p.padding.h, p.kernel.h, in.h);
            for (int32_t ox = 0; ox < out.w; ++ox, y += out.c) {
                const ptec_nn_span xs = ptec_nn_pool_span(ox, p.stride.w, p.padding.w, p.kernel.w, in.w);
                if (ys.begin >= ys.end || xs.begin >= xs.end) {
                    return PTEC_INVALID_ARGUMENT; /* a window entirely in the padding */
                }
                const int64_t positions = (int64_t)(ys.end - ys.begin) * (xs.end - xs.begin);
                if (positions > ((int64_t)1 << 16)) {
                    return PTEC_NOT_SUPPORTED;
                }
                const int32_t count = (int32_t)positions;
                for (int32_t c = 0; c < out.c; c += 4) {
                    const mve_pred16_t lanes = vctp32q((uint32_t)(out.c - c));
                    int32x4_t acc = vdupq_n_s32(0);
                    for (int32_t iy = ys.begin; iy < ys.end; ++iy) {
                        const int16_t *x = image + (size_t)iy * in_row + (size_t)c;
                        for (int32_t ix = xs.begin; ix < xs.end; ++ix) {
                            acc = vaddq_s32(acc, vldrhq_z_s32(x + (size_t)ix * in_col, lanes));
                        }
                    }
                    int32_t sums[4];
                    vst1q_s32(sums, acc);
                    const int32_t lanes_used = out.c - c < 4 ? out.c - c : 4;
                    for (int32_t r = 0; r < lanes_used; ++r) {
                        const int32_t sum = sums[r];
                        const int64_t nudged = sum > 0 ? (int64_t)sum + count / 2 : (int64_t)sum - count / 2;
                        y[c + r] = (int16_t)ptec_nn_clamp((int32_t)(nudged / count), p.activation.min,
                                                          p.activation.max);
                    }
                }
            }
        }
    }
    return PTEC_OK;
}

#else
typedef int ptec_nn_avgpool_s16_mve_unused; /* a translation unit must not be empty */
#endif
