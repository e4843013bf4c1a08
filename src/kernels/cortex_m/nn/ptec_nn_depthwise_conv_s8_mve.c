/* Helium depthwise convolution, depth multiplier 1, one block of channels
 * at a time over every output pixel: sixteen channels (four vectors) while
 * that many are left, then four with a predicated vector (no bytes read or
 * written past the last channel).
 *
 * A window that the padding leaves whole does not add the input offset
 * per tap: sum (x + offset) * w is sum x * w + offset * sum w, and the
 * block's bias + offset * (sum of the kernel) is computed once. A clipped
 * window starts from the bias and adds the offset to each in-bounds x.
 * Everything wraps modulo 2^32, as the reference's accumulator, so the
 * reordering is bit-exact. Per tap and four channels: VLDRB.S32 twice,
 * VMUL and VADD (MVE has no lane-wise multiply-accumulate of two vectors);
 * a whole window 3 wide has no column loop. The four sums are requantized
 * as one vector, in four instructions when every channel's shift is <= -1
 * (ptec_nn_requantize_short_mve, its own copy of block16). */
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

/* Four channels' output. No multiplier of -2^31 here: such a call runs on
 * block4 alone (it never comes from quantize_multiplier; a second copy of
 * block16 for it would cost 1.3 KB). */
static inline int32x4_t requantize(const dw_shape *s, int32x4_t acc, const int32_t *multipliers,
                                   const int32_t *shifts, int short_requant)
{
    if (short_requant) {
        /* Every shift <= -1: |acc| <= 2^30 after it, the add cannot wrap. */
        acc = ptec_nn_requantize_short_mve(acc, vld1q_s32(multipliers), vld1q_s32(shifts));
        acc = vaddq_n_s32(acc, s->p.output_offset);
        return vminq_s32(vmaxq_s32(acc, vdupq_n_s32(s->p.activation.min)), vdupq_n_s32(s->p.activation.max));
    }
    acc = ptec_nn_requantize_mve(acc, vld1q_s32(multipliers), vld1q_s32(shifts));
    return ptec_nn_output_stage_mve(acc, s->p.output_offset, s->p.activation.min, s->p.activation.max);
}

/* acc[j] += x[4j .. 4j + 3] * w[4j .. 4j + 3] (plus the offset on x in
 * the _OFFSET form): sixteen channels of one tap. Written in assembly:
 * GCC 12 spends a register and an ADD on each offset load, ten
 * instructions more per tap than the sixteen here. VLDRB.S32 takes a low
 * base register ("l"). */
#define DW_LOAD(imm) "vldrb.s32 %q[x], [%[xa], #" imm "]\n\tvldrb.s32 %q[w], [%[wa], #" imm "]\n\t"
#define DW_MAC(acc) "vmul.i32 %q[x], %q[x], %q[w]\n\tvadd.i32 %q[" acc "], %q[" acc "], %q[x]\n\t"
#define DW_OFF "vadd.i32 %q[x], %q[x], %[off]\n\t"
#define DW_OUTPUTS(acc0, acc1, acc2, acc3)                                                                         \
    [a0] "+w"(acc0), [a1] "+w"(acc1), [a2] "+w"(acc2), [a3] "+w"(acc3), [x] "=&w"(x_), [w] "=&w"(w_)

#define TAP16(acc0, acc1, acc2, acc3, xp, wp)                                                                      \
    do {                                                                                                           \
        int32x4_t x_, w_;                                                                                          \
        __asm__(DW_LOAD("0") DW_MAC("a0") DW_LOAD("4") DW_MAC("a1") DW_LOAD("8") DW_MAC("a2") DW_LOAD("12")       \
                    DW_MAC("a3")                                                                                   \
                : DW_OUTPUTS(acc0, acc1, acc2, acc3)                                                               \
                : [xa] "l"(xp), [wa] "l"(wp)                                                                       \
                : "memory");                                                                                       \
    } while (0)

#define TAP16_OFFSET(acc0, acc1, acc2, acc3, xp, wp, offset)                                                       \
    do {                                                                                                           \
        int32x4_t x_, w_;                                                                                          \
        __asm__(DW_LOAD("0") DW_OFF DW_MAC("a0") DW_LOAD("4") DW_OFF DW_MAC("a1") DW_LOAD("8") DW_OFF             \
                    DW_MAC("a2") DW_LOAD("12") DW_OFF DW_MAC("a3")                                                 \
                : DW_OUTPUTS(acc0, acc1, acc2, acc3)                                                               \
                : [xa] "l"(xp), [wa] "l"(wp), [off] "r"(offset)                                                    \
                : "memory");                                                                                       \
    } while (0)

/* Channels c .. c + 15 of every pixel; short_requant: every channel's
 * pair takes ptec_nn_requantize_short_mve (a copy of its own). */
static inline __attribute__((always_inline)) void block16(const dw_shape *shape, const int8_t *input,
                                                          const int8_t *filter, const int32_t *bias, int32_t c,
                                                          int8_t *output, int short_requant)
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
    const int32_t *multipliers = s->quant->multipliers + c, *shifts = s->quant->shifts + c;
    const int8_t *wc = filter + c;
    int8_t *y = output + c;
    for (int32_t n = 0; n < s->out.n; ++n) {
        const int8_t *image = input + (size_t)n * (size_t)s->in.h * s->in_row + c;
        for (int32_t oy = 0; oy < s->out.h; ++oy) {
            const int32_t y0 = oy * s->p.stride.h - s->p.padding.h;
            int32_t ky0, ky1;
            ptec_nn_tap_range(y0, s->p.dilation.h, s->f.h, s->in.h, &ky0, &ky1);
            const int32_t rows = ky1 - ky0;
            const int8_t *x_line = image + (size_t)(y0 + ky0 * s->p.dilation.h) * s->in_row;
            const int8_t *w_line = wc + (size_t)ky0 * w_step_row;
            for (int32_t ox = 0; ox < s->out.w; ++ox, y += channels) {
                const int32_t x0 = ox * s->p.stride.w - s->p.padding.w;
                int32_t kx0, kx1;
                ptec_nn_tap_range(x0, s->p.dilation.w, s->f.w, s->in.w, &kx0, &kx1);
                const int32_t cols = kx1 - kx0;
                const int8_t *x_row = x_line + (size_t)(x0 + kx0 * s->p.dilation.w) * (size_t)s->in.c;
                const int8_t *w_row = w_line + (size_t)kx0 * channels;
                int32x4_t acc0, acc1, acc2, acc3;
                if (rows == s->f.h && cols == s->f.w) {
                    acc0 = vld1q_s32(base);
                    acc1 = vld1q_s32(base + 4);
                    acc2 = vld1q_s32(base + 8);
                    acc3 = vld1q_s32(base + 12);
                    if (cols == 3) { /* no column loop: its setup costs as much as a tap */
                        for (int32_t r = 0; r < rows; ++r, x_row += x_step_row, w_row += w_step_row) {
                            TAP16(acc0, acc1, acc2, acc3, x_row, w_row);
                            TAP16(acc0, acc1, acc2, acc3, x_row + x_step, w_row + channels);
                            TAP16(acc0, acc1, acc2, acc3, x_row + 2 * x_step, w_row + 2 * channels);
                        }
                    } else {
                        for (int32_t r = 0; r < rows; ++r, x_row += x_step_row, w_row += w_step_row) {
                        const int8_t *xp = x_row, *wp = w_row;
                        for (int32_t t = 0; t < cols; ++t, xp += x_step, wp += channels) {
                            TAP16(acc0, acc1, acc2, acc3, xp, wp);
                        }
                    }
                    }
                } else {
                    /* A clipped window: the offset goes back into the taps. */
                    acc0 = vld1q_s32(bias16);
                    acc1 = vld1q_s32(bias16 + 4);
                    acc2 = vld1q_s32(bias16 + 8);
                    acc3 = vld1q_s32(bias16 + 12);
                    for (int32_t r = 0; r < rows; ++r, x_row += x_step_row, w_row += w_step_row) {
                        if (cols == 2) { /* a 3-wide kernel at the left or right edge */
                            TAP16_OFFSET(acc0, acc1, acc2, acc3, x_row, w_row, offset);
                            TAP16_OFFSET(acc0, acc1, acc2, acc3, x_row + x_step, w_row + channels, offset);
                            continue;
                        }
                        const int8_t *xp = x_row, *wp = w_row;
                        for (int32_t t = 0; t < cols; ++t, xp += x_step, wp += channels) {
                            TAP16_OFFSET(acc0, acc1, acc2, acc3, xp, wp, offset);
                        }
                    }
                }
                vstrbq_s32(y, requantize(s, acc0, multipliers, shifts, short_requant));
                vstrbq_s32(y + 4, requantize(s, acc1, multipliers + 4, shifts + 4, short_requant));
                vstrbq_s32(y + 8, requantize(s, acc2, multipliers + 8, shifts + 8, short_requant));
                vstrbq_s32(y + 12, requantize(s, acc3, multipliers + 12, shifts + 12, short_requant));
            }
        }
    }
}

static void __attribute__((noinline)) block16_general(const dw_shape *shape, const int8_t *input,
                                                      const int8_t *filter, const int32_t *bias, int32_t c,
                                                      int8_t *output)
{
    block16(shape, input, filter, bias, c, output, 0);
}

static void __attribute__((noinline)) block16_short(const dw_shape *shape, const int8_t *input,
                                                    const int8_t *filter, const int32_t *bias, int32_t c,
                                                    int8_t *output)
{
    block16(shape, input, filter, bias, c, output, 1);
}

/* Channels c .. c + 3 of every pixel, those past the last one masked off
 * (the channel count's remainder: one vector, no assembly). */
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
            const int32_t y0 = oy * s->p.stride.h - s->p.padding.h;
            int32_t ky0, ky1;
            ptec_nn_tap_range(y0, s->p.dilation.h, s->f.h, s->in.h, &ky0, &ky1);
            const int32_t rows = ky1 - ky0;
            const int8_t *x_line = image + (size_t)(y0 + ky0 * s->p.dilation.h) * s->in_row;
            const int8_t *w_line = wc + (size_t)ky0 * s->w_row;
            for (int32_t ox = 0; ox < s->out.w; ++ox, y += channels) {
                const int32_t x0 = ox * s->p.stride.w - s->p.padding.w;
                int32_t kx0, kx1;
                ptec_nn_tap_range(x0, s->p.dilation.w, s->f.w, s->in.w, &kx0, &kx1);
                const int32_t cols = kx1 - kx0;
                const int clipped = rows != s->f.h || cols != s->f.w;
                const int32_t x_offset = clipped ? offset : 0;
                int32x4_t acc = clipped ? b : base;
                const int8_t *x_row = x_line + (size_t)(x0 + kx0 * s->p.dilation.w) * (size_t)s->in.c;
                const int8_t *w_row = w_line + (size_t)kx0 * channels;
                for (int32_t r = 0; r < rows; ++r, x_row += s->x_row, w_row += s->w_row) {
                    const int8_t *xp = x_row, *wp = w_row;
                    for (int32_t t = 0; t < cols; ++t, xp += s->x_col, wp += channels) {
                        const int32x4_t x = vaddq_n_s32(vldrbq_z_s32(xp, valid), x_offset);
                        acc = vaddq_s32(acc, vmulq_s32(x, vldrbq_z_s32(wp, valid)));
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
    const int short_requant = ptec_nn_requant_short_ok_mve(quant->multipliers, quant->shifts, s.out.c);
    for (; c + 16 <= s.out.c && !s.exact_min; c += 16) {
        if (short_requant) {
            block16_short(&s, input, filter, bias, c, output);
        } else {
            block16_general(&s, input, filter, bias, c, output);
        }
    }
    for (; c < s.out.c; c += 4) {
        block4(&s, input, filter, bias, c, output);
    }
    return PTEC_OK;
}

#else
typedef int ptec_nn_depthwise_mve_unused; /* a translation unit must not be empty */
#endif
