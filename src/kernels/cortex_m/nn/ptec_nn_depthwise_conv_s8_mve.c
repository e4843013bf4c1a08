/* Helium depthwise convolution, depth multiplier 1, one block of channels
 * at a time over every output pixel: sixteen channels (four vectors) while
 * that many are left, then four with a predicated vector (no bytes read or
 * written past the last channel).
 *
 * The input offset leaves the tap loop: sum (x + offset) * w is
 * sum x * w + offset * sum w, and the block's bias + offset * (sum of the
 * whole kernel) is computed once. A pixel whose window is clipped by the
 * padding takes back offset * w for each tap that falls outside (one load
 * and one VMLA per vector). Per in-bounds tap a vector is then VLDRB.S32
 * twice, VMUL and VADD (MVE has no lane-wise multiply-accumulate of two
 * vectors). Everything wraps modulo 2^32, as the reference's accumulator,
 * so the reordering is bit-exact. The four sums are requantized as one
 * vector. */
#include "ptec_nn_variants.h"

#if defined(PTEC_NN_MVE)
#include "ptec_nn_mve.h"
#include "ptec_nn_window.h"

/* What every block shares. */
typedef struct dw_shape {
    ptec_nn_dims in, f, out;
    ptec_nn_conv_params p;
    const ptec_nn_per_channel_quant *quant;
    int exact_min;
    size_t in_row, x_col, x_row, w_row;
} dw_shape;

static inline int32x4_t requantize(const dw_shape *s, int32x4_t acc, int32_t c)
{
    const int32x4_t multiplier = vld1q_s32(s->quant->multipliers + c);
    const int32x4_t shift = vld1q_s32(s->quant->shifts + c);
    acc = s->exact_min ? ptec_nn_requantize_any_mve(acc, multiplier, shift)
                       : ptec_nn_requantize_mve(acc, multiplier, shift);
    return ptec_nn_output_stage_mve(acc, s->p.output_offset, s->p.activation.min, s->p.activation.max);
}

/* Taps [ky0, ky1) x [kx0, kx1) of the window at (y0, x0), first in-bounds
 * tap of input and filter. */
typedef struct dw_window {
    int32_t ky0, ky1, kx0, kx1;
    size_t x_first, w_first;
    int clipped;
} dw_window;

static inline dw_window window_at(const dw_shape *s, int32_t oy, int32_t ox)
{
    dw_window w;
    const int32_t y0 = oy * s->p.stride.h - s->p.padding.h;
    const int32_t x0 = ox * s->p.stride.w - s->p.padding.w;
    ptec_nn_tap_range(y0, s->p.dilation.h, s->f.h, s->in.h, &w.ky0, &w.ky1);
    ptec_nn_tap_range(x0, s->p.dilation.w, s->f.w, s->in.w, &w.kx0, &w.kx1);
    w.x_first = (size_t)(y0 + w.ky0 * s->p.dilation.h) * s->in_row +
                (size_t)(x0 + w.kx0 * s->p.dilation.w) * (size_t)s->in.c;
    w.w_first = ((size_t)w.ky0 * (size_t)s->f.w + (size_t)w.kx0) * (size_t)s->out.c;
    w.clipped = w.ky1 - w.ky0 != s->f.h || w.kx1 - w.kx0 != s->f.w;
    return w;
}

static inline int outside(const dw_window *w, int32_t r, int32_t t)
{
    return r < w->ky0 || r >= w->ky1 || t < w->kx0 || t >= w->kx1;
}

/* acc[j] += x[4j .. 4j + 3] * w[4j .. 4j + 3], sixteen channels of one
 * tap. Written in assembly: GCC 12 spends a register and an ADD on each
 * offset load, ten instructions more per tap than the sixteen here. */
#define TAP16(acc0, acc1, acc2, acc3, xp, wp)                                                        \
    do {                                                                                             \
        int32x4_t x_, w_;                                                                            \
        __asm__("vldrb.s32 %q[x], [%[xa]]\n\tvldrb.s32 %q[w], [%[wa]]\n\tvmul.i32 %q[x], %q[x], %q[w]\n\t" \
                "vadd.i32 %q[a0], %q[a0], %q[x]\n\t"                                                  \
                "vldrb.s32 %q[x], [%[xa], #4]\n\tvldrb.s32 %q[w], [%[wa], #4]\n\tvmul.i32 %q[x], %q[x], %q[w]\n\t" \
                "vadd.i32 %q[a1], %q[a1], %q[x]\n\t"                                                  \
                "vldrb.s32 %q[x], [%[xa], #8]\n\tvldrb.s32 %q[w], [%[wa], #8]\n\tvmul.i32 %q[x], %q[x], %q[w]\n\t" \
                "vadd.i32 %q[a2], %q[a2], %q[x]\n\t"                                                  \
                "vldrb.s32 %q[x], [%[xa], #12]\n\tvldrb.s32 %q[w], [%[wa], #12]\n\tvmul.i32 %q[x], %q[x], %q[w]\n\t" \
                "vadd.i32 %q[a3], %q[a3], %q[x]"                                                        \
                : [a0] "+w"(acc0), [a1] "+w"(acc1), [a2] "+w"(acc2), [a3] "+w"(acc3), [x] "=&w"(x_),     \
                  [w] "=&w"(w_)                                                                      \
                : [xa] "r"(xp), [wa] "r"(wp)                                                         \
                : "memory");                                                                         \
    } while (0)

/* The same with x + offset. */
#define TAP16_OFFSET(acc0, acc1, acc2, acc3, xp, wp, offset)                                                        \
    do {                                                                                             \
        int32x4_t x_, w_;                                                                            \
        __asm__("vldrb.s32 %q[x], [%[xa]]\n\tvldrb.s32 %q[w], [%[wa]]\n\tvadd.i32 %q[x], %q[x], %[off]\n\tvmul.i32 %q[x], %q[x], %q[w]\n\t" \
                "vadd.i32 %q[a0], %q[a0], %q[x]\n\t"                                                  \
                "vldrb.s32 %q[x], [%[xa], #4]\n\tvldrb.s32 %q[w], [%[wa], #4]\n\tvadd.i32 %q[x], %q[x], %[off]\n\tvmul.i32 %q[x], %q[x], %q[w]\n\t" \
                "vadd.i32 %q[a1], %q[a1], %q[x]\n\t"                                                  \
                "vldrb.s32 %q[x], [%[xa], #8]\n\tvldrb.s32 %q[w], [%[wa], #8]\n\tvadd.i32 %q[x], %q[x], %[off]\n\tvmul.i32 %q[x], %q[x], %q[w]\n\t" \
                "vadd.i32 %q[a2], %q[a2], %q[x]\n\t"                                                  \
                "vldrb.s32 %q[x], [%[xa], #12]\n\tvldrb.s32 %q[w], [%[wa], #12]\n\tvadd.i32 %q[x], %q[x], %[off]\n\tvmul.i32 %q[x], %q[x], %q[w]\n\t" \
                "vadd.i32 %q[a3], %q[a3], %q[x]"                                                        \
                : [a0] "+w"(acc0), [a1] "+w"(acc1), [a2] "+w"(acc2), [a3] "+w"(acc3), [x] "=&w"(x_),     \
                  [w] "=&w"(w_)                                                                      \
                : [xa] "r"(xp), [wa] "r"(wp), [off] "r"(offset)                                                         \
                : "memory");                                                                         \
    } while (0)

/* Channels c .. c + 15 of every pixel. */
static void __attribute__((noinline)) block16(const dw_shape *shape, const int8_t *input, const int8_t *filter,
                                              const int32_t *bias, int32_t c, int8_t *output)
{
    const dw_shape local = *shape; /* the byte stores below could alias *shape */
    const dw_shape *s = &local;
    const size_t channels = (size_t)s->out.c;
    const int32_t offset = s->p.input_offset;
    const int32_t taps = s->f.h * s->f.w;
    const size_t x_step = s->x_col, x_step_row = s->x_row, w_step_row = s->w_row;
    int32_t base[16], bias16[16];
    for (int32_t j = 0; j < 16; j += 4) {
        int32x4_t sum = vdupq_n_s32(0);
        for (int32_t k = 0; k < taps; ++k) {
            sum = vaddq_s32(sum, vldrbq_s32(filter + (size_t)k * channels + (size_t)(c + j)));
        }
        const int32x4_t b = bias != NULL ? vld1q_s32(bias + c + j) : vdupq_n_s32(0);
        vst1q_s32(bias16 + j, b);
        vst1q_s32(base + j, vmlaq_n_s32(b, sum, offset));
    }
    const int8_t *wc = filter + c;
    int8_t *y = output + c;
    for (int32_t n = 0; n < s->out.n; ++n) {
        const int8_t *image = input + (size_t)n * (size_t)s->in.h * s->in_row + c;
        for (int32_t oy = 0; oy < s->out.h; ++oy) {
            for (int32_t ox = 0; ox < s->out.w; ++ox, y += channels) {
                const dw_window w = window_at(s, oy, ox);
                const int32_t rows = w.ky1 - w.ky0, cols = w.kx1 - w.kx0;
                const int8_t *x_row = image + w.x_first;
                const int8_t *w_row = wc + w.w_first;
                int32x4_t acc0, acc1, acc2, acc3;
                if (!w.clipped) {
                    acc0 = vld1q_s32(base);
                    acc1 = vld1q_s32(base + 4);
                    acc2 = vld1q_s32(base + 8);
                    acc3 = vld1q_s32(base + 12);
                    for (int32_t r = 0; r < rows; ++r, x_row += x_step_row, w_row += w_step_row) {
                        const int8_t *xp = x_row, *wp = w_row;
                        for (int32_t t = 0; t < cols; ++t, xp += x_step, wp += channels) {
                            TAP16(acc0, acc1, acc2, acc3, xp, wp);
                        }
                    }
                } else {
                    /* A clipped window: the offset goes back into the taps. */
                    acc0 = vld1q_s32(bias16);
                    acc1 = vld1q_s32(bias16 + 4);
                    acc2 = vld1q_s32(bias16 + 8);
                    acc3 = vld1q_s32(bias16 + 12);
                    for (int32_t r = 0; r < rows; ++r, x_row += x_step_row, w_row += w_step_row) {
                        const int8_t *xp = x_row, *wp = w_row;
                        for (int32_t t = 0; t < cols; ++t, xp += x_step, wp += channels) {
                            TAP16_OFFSET(acc0, acc1, acc2, acc3, xp, wp, offset);
                        }
                    }
                }
                vstrbq_s32(y, requantize(s, acc0, c));
                vstrbq_s32(y + 4, requantize(s, acc1, c + 4));
                vstrbq_s32(y + 8, requantize(s, acc2, c + 8));
                vstrbq_s32(y + 12, requantize(s, acc3, c + 12));
            }
        }
    }
}

/* Channels c .. c + 3 of every pixel, those past the last one masked off. */
static void __attribute__((noinline)) block4(const dw_shape *shape, const int8_t *input, const int8_t *filter,
                                             const int32_t *bias, int32_t c, int8_t *output)
{
    const dw_shape local = *shape; /* the byte stores below could alias *shape */
    const dw_shape *s = &local;
    const size_t channels = (size_t)s->out.c;
    const int32_t offset = s->p.input_offset;
    const int32_t taps = s->f.h * s->f.w;
    const mve_pred16_t valid = vctp32q((uint32_t)(s->out.c - c));
    int32x4_t sum = vdupq_n_s32(0);
    for (int32_t k = 0; k < taps; ++k) {
        sum = vaddq_s32(sum, vldrbq_z_s32(filter + (size_t)k * channels + (size_t)c, valid));
    }
    const int32x4_t b = bias != NULL ? vldrwq_z_s32(bias + c, valid) : vdupq_n_s32(0);
    const int32x4_t base = vmlaq_n_s32(b, sum, offset);
    const int32x4_t multiplier = vldrwq_z_s32(s->quant->multipliers + c, valid);
    const int32x4_t shift = vldrwq_z_s32(s->quant->shifts + c, valid);
    const int8_t *wc = filter + c;
    int8_t *y = output + c;
    for (int32_t n = 0; n < s->out.n; ++n) {
        const int8_t *image = input + (size_t)n * (size_t)s->in.h * s->in_row + c;
        for (int32_t oy = 0; oy < s->out.h; ++oy) {
            for (int32_t ox = 0; ox < s->out.w; ++ox, y += channels) {
                const dw_window w = window_at(s, oy, ox);
                int32x4_t acc = base;
                if (w.clipped) {
                    const int8_t *wp = wc;
                    for (int32_t r = 0; r < s->f.h; ++r) {
                        for (int32_t t = 0; t < s->f.w; ++t, wp += channels) {
                            if (outside(&w, r, t)) {
                                acc = vmlaq_n_s32(acc, vldrbq_z_s32(wp, valid), -offset);
                            }
                        }
                    }
                }
                const int32_t cols = w.kx1 - w.kx0;
                for (int32_t r = w.ky0; r < w.ky1; ++r) {
                    const int8_t *xp = image + w.x_first + (size_t)(r - w.ky0) * s->x_row;
                    const int8_t *wp = wc + w.w_first + (size_t)(r - w.ky0) * s->w_row;
                    for (int32_t t = 0; t < cols; ++t) {
                        acc = vaddq_s32(acc, vmulq_s32(vldrbq_z_s32(xp, valid), vldrbq_z_s32(wp, valid)));
                        xp += s->x_col;
                        wp += channels;
                    }
                }
                acc = s->exact_min ? ptec_nn_requantize_any_mve(acc, multiplier, shift)
                                   : ptec_nn_requantize_mve(acc, multiplier, shift);
                acc = ptec_nn_output_stage_mve(acc, s->p.output_offset, s->p.activation.min, s->p.activation.max);
                vstrbq_p_s32(y, acc, valid);
            }
        }
    }
}

ptec_status ptec_nn_depthwise_conv_s8_mve(const ptec_nn_conv_params *params, const ptec_nn_per_channel_quant *quant,
                                          const ptec_nn_dims *input_dims, const int8_t *input,
                                          const ptec_nn_dims *filter_dims, const int8_t *filter,
                                          const int32_t *bias, const ptec_nn_dims *output_dims, int8_t *output)
{
    dw_shape s;
    s.in = *input_dims;
    s.f = *filter_dims;
    s.out = *output_dims;
    s.p = *params;
    s.quant = quant;
    s.exact_min = ptec_nn_any_min_multiplier(quant->multipliers, s.out.c);
    s.in_row = (size_t)s.in.w * (size_t)s.in.c;
    s.x_col = (size_t)s.p.dilation.w * (size_t)s.in.c;
    s.x_row = (size_t)s.p.dilation.h * s.in_row;
    s.w_row = (size_t)s.f.w * (size_t)s.out.c;
    int32_t c = 0;
    for (; c + 16 <= s.out.c; c += 16) {
        block16(&s, input, filter, bias, c, output);
    }
    for (; c < s.out.c; c += 4) {
        block4(&s, input, filter, bias, c, output);
    }
    return PTEC_OK;
}

#else
typedef int ptec_nn_depthwise_mve_unused; /* a translation unit must not be empty */
#endif
