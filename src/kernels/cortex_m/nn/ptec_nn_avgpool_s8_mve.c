/* Helium average pooling: sixteen channels per pass, as four vectors of
 * four int32 sums; at each window position VLDRB.S32 widens four bytes per
 * vector (immediate offsets 0, 4, 8, 12 from one pointer) and VADD sums
 * them (predicated only in the last, partial block). A window that spans
 * whole input rows is one run of positions;
 * otherwise one run per row. The division (no vector form exists) is
 * scalar, once per output, as in the reference. */
#include "ptec_nn_variants.h"

#if defined(PTEC_NN_MVE)
#include <arm_mve.h>

#include "ptec_nn_math.h"
#include "ptec_nn_window.h"

typedef struct sums16 {
    int32x4_t a0, a1, a2, a3;
} sums16;

/* Adds `positions` pixels, `stride` bytes apart, starting at x, to s; the
 * predicates keep the last block of channels inside the pixel. */
static inline void add_run(sums16 *s, const int8_t *x, int32_t positions, size_t stride, mve_pred16_t p0,
                           mve_pred16_t p1, mve_pred16_t p2, mve_pred16_t p3)
{
    int32x4_t a0 = s->a0, a1 = s->a1, a2 = s->a2, a3 = s->a3;
    for (int32_t i = 0; i < positions; ++i, x += stride) {
        a0 = vaddq_s32(a0, vldrbq_z_s32(x, p0));
        a1 = vaddq_s32(a1, vldrbq_z_s32(x + 4, p1));
        a2 = vaddq_s32(a2, vldrbq_z_s32(x + 8, p2));
        a3 = vaddq_s32(a3, vldrbq_z_s32(x + 12, p3));
    }
    s->a0 = a0;
    s->a1 = a1;
    s->a2 = a2;
    s->a3 = a3;
}

/* The same for a full block of sixteen channels: no predicates to set. */
static inline void add_run_full(sums16 *s, const int8_t *x, int32_t positions, size_t stride)
{
    int32x4_t a0 = s->a0, a1 = s->a1, a2 = s->a2, a3 = s->a3;
    for (int32_t i = 0; i < positions; ++i, x += stride) {
        a0 = vaddq_s32(a0, vldrbq_s32(x));
        a1 = vaddq_s32(a1, vldrbq_s32(x + 4));
        a2 = vaddq_s32(a2, vldrbq_s32(x + 8));
        a3 = vaddq_s32(a3, vldrbq_s32(x + 12));
    }
    s->a0 = a0;
    s->a1 = a1;
    s->a2 = a2;
    s->a3 = a3;
}

static inline void add_window_run(sums16 *s, const int8_t *x, int32_t positions, size_t stride, int32_t left,
                                  mve_pred16_t p0, mve_pred16_t p1, mve_pred16_t p2, mve_pred16_t p3)
{
    if (left >= 16) {
        add_run_full(s, x, positions, stride);
    } else {
        add_run(s, x, positions, stride, p0, p1, p2, p3);
    }
}

static inline uint32_t lanes_from(int32_t left, int32_t first)
{
    return left > first ? (uint32_t)(left - first) : 0u;
}

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
                /* Whole rows: the window's pixels are contiguous. */
                const int whole_rows = x_begin == 0 && x_end == in.w;
                for (int32_t c = 0; c < out.c; c += 16) {
                    const int32_t left = out.c - c;
                    const mve_pred16_t p0 = vctp32q(lanes_from(left, 0)), p1 = vctp32q(lanes_from(left, 4));
                    const mve_pred16_t p2 = vctp32q(lanes_from(left, 8)), p3 = vctp32q(lanes_from(left, 12));
                    sums16 s = {vdupq_n_s32(0), vdupq_n_s32(0), vdupq_n_s32(0), vdupq_n_s32(0)};
                    if (whole_rows) {
                        add_window_run(&s, corner + c, count, pixel, left, p0, p1, p2, p3);
                    } else {
                        for (int32_t iy = y_begin; iy < y_end; ++iy) {
                            add_window_run(&s, corner + (size_t)(iy - y_begin) * row + (size_t)c, x_end - x_begin,
                                           pixel, left, p0, p1, p2, p3);
                        }
                    }
                    int32_t sums[16];
                    vst1q_s32(sums, s.a0);
                    vst1q_s32(sums + 4, s.a1);
                    vst1q_s32(sums + 8, s.a2);
                    vst1q_s32(sums + 12, s.a3);
                    const int32_t lanes = left < 16 ? left : 16;
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
