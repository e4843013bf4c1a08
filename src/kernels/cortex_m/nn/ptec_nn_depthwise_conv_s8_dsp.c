/* DSP depthwise convolution, depth multiplier 1, one block of four
 * channels (one word) at a time over every output pixel; the channels past
 * the last multiple of 4 take a scalar block each. Per in-bounds tap, one
 * load brings four input bytes and SXTAB16 widens them to two int16 pairs
 * with the input offset already added (x + offset is within +-255); the
 * weight word splits the same way, and four SMLABB/SMLATT accumulate the
 * four channels. A 3x3 kernel takes its weights split once per block (also
 * for the windows the padding clips); other windows 3 wide have no column
 * loop. The block's requantization (shifts split, masks) is prepared once,
 * not per pixel. */
#include "ptec_nn_variants.h"

#if defined(PTEC_NN_DSP)
#include "ptec_nn_dsp.h"
#include "ptec_nn_math.h"
#include "ptec_nn_window.h"

/* What every block shares. */
typedef struct dw_shape {
    ptec_nn_dims in, f, out;
    ptec_nn_conv_params p;
    size_t in_row, x_col, x_row, w_row;
} dw_shape;

/* Four channels of one tap into a0 .. a3. */
#define TAP4(xp, wp)                                                                                                \
    do {                                                                                                            \
        const uint32_t xv = ptec_nn_load4(xp), wv = ptec_nn_load4(wp);                                              \
        const int32_t x_even = (int32_t)ptec_nn_sxtab16_even(offset_pair, xv);                                      \
        const int32_t x_odd = (int32_t)ptec_nn_sxtab16_odd(offset_pair, xv);                                        \
        const int32_t w_even = (int32_t)ptec_nn_sxtb16_even(wv);                                                    \
        const int32_t w_odd = (int32_t)ptec_nn_sxtb16_odd(wv);                                                      \
        a0 = __smlabb(x_even, w_even, a0);                                                                          \
        a2 = __smlatt(x_even, w_even, a2);                                                                          \
        a1 = __smlabb(x_odd, w_odd, a1);                                                                            \
        a3 = __smlatt(x_odd, w_odd, a3);                                                                            \
    } while (0)

/* The same with the weight word already split into w[0], w[1]. */
#define TAP4_SPLIT_AT(xp, w)                                                                                        \
    do {                                                                                                            \
        const uint32_t xv = ptec_nn_load4(xp);                                                                      \
        const int32_t x_even = (int32_t)ptec_nn_sxtab16_even(offset_pair, xv);                                      \
        const int32_t x_odd = (int32_t)ptec_nn_sxtab16_odd(offset_pair, xv);                                        \
        a0 = __smlabb(x_even, (w)[0], a0);                                                                          \
        a2 = __smlatt(x_even, (w)[0], a2);                                                                          \
        a1 = __smlabb(x_odd, (w)[1], a1);                                                                           \
        a3 = __smlatt(x_odd, (w)[1], a3);                                                                           \
    } while (0)
#define TAP4_SPLIT(xp, k) TAP4_SPLIT_AT(xp, wk + 2 * (k))

static inline int8_t finish(uint32_t acc, const ptec_nn_requant_dsp *r, const dw_shape *s)
{
    return (int8_t)ptec_nn_output_stage(ptec_nn_requantize_dsp((int32_t)acc, r), s->p.output_offset,
                                        s->p.activation.min, s->p.activation.max);
}

/* Channels c .. c + 3 of every pixel. */
static void __attribute__((noinline)) block4(const dw_shape *shape, const ptec_nn_per_channel_quant *quant,
                                             const int8_t *input, const int8_t *filter, const int32_t *bias,
                                             int32_t c, int8_t *output)
{
    const dw_shape local = *shape; /* the byte stores below could alias *shape */
    const dw_shape *s = &local;
    const size_t channels = (size_t)s->out.c;
    const size_t x_step = s->x_col;
    const uint32_t offset_pair = ((uint32_t)s->p.input_offset & 0xFFFFu) * 0x10001u;
    ptec_nn_requant_dsp rq[4];
    uint32_t b[4];
    for (int32_t j = 0; j < 4; ++j) {
        rq[j] = ptec_nn_requant_dsp_make(quant->multipliers[c + j], quant->shifts[c + j]);
        b[j] = bias != NULL ? (uint32_t)bias[c + j] : 0u;
    }
    const int8_t *wc = filter + c;
    /* A 3x3 kernel's weights, split once for the whole windows. */
    const int whole3x3 = s->f.h == 3 && s->f.w == 3;
    int32_t wk[18];
    if (whole3x3) {
        for (int32_t k = 0; k < 9; ++k) {
            const uint32_t wv = ptec_nn_load4(wc + (size_t)k * channels);
            wk[2 * k] = (int32_t)ptec_nn_sxtb16_even(wv);
            wk[2 * k + 1] = (int32_t)ptec_nn_sxtb16_odd(wv);
        }
    }
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
                const int8_t *x_row = x_line + (size_t)(x0 + kx0 * s->p.dilation.w) * (size_t)s->in.c;
                const int8_t *w_row = w_line + (size_t)kx0 * channels;
                int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
                if (whole3x3 && rows == 3 && cols == 3) {
                    const size_t x_step_row = s->x_row;
                    TAP4_SPLIT(x_row, 0);
                    TAP4_SPLIT(x_row + x_step, 1);
                    TAP4_SPLIT(x_row + 2 * x_step, 2);
                    x_row += x_step_row;
                    TAP4_SPLIT(x_row, 3);
                    TAP4_SPLIT(x_row + x_step, 4);
                    TAP4_SPLIT(x_row + 2 * x_step, 5);
                    x_row += x_step_row;
                    TAP4_SPLIT(x_row, 6);
                    TAP4_SPLIT(x_row + x_step, 7);
                    TAP4_SPLIT(x_row + 2 * x_step, 8);
                } else if (whole3x3) {
                    /* A 3x3 window clipped by the padding: the split weights of its taps. */
                    const int32_t *w_split = wk + 2 * (ky0 * 3 + kx0);
                    for (int32_t r = 0; r < rows; ++r, x_row += s->x_row, w_split += 6) {
                        if (cols == 3) {
                            TAP4_SPLIT_AT(x_row, w_split);
                            TAP4_SPLIT_AT(x_row + x_step, w_split + 2);
                            TAP4_SPLIT_AT(x_row + 2 * x_step, w_split + 4);
                        } else if (cols == 2) {
                            TAP4_SPLIT_AT(x_row, w_split);
                            TAP4_SPLIT_AT(x_row + x_step, w_split + 2);
                        } else if (cols == 1) {
                            TAP4_SPLIT_AT(x_row, w_split);
                        }
                    }
                } else if (cols == 3) {
                    for (int32_t r = 0; r < rows; ++r, x_row += s->x_row, w_row += s->w_row) {
                        TAP4(x_row, w_row);
                        TAP4(x_row + x_step, w_row + channels);
                        TAP4(x_row + 2 * x_step, w_row + 2 * channels);
                    }
                } else {
                    for (int32_t r = 0; r < rows; ++r, x_row += s->x_row, w_row += s->w_row) {
                        const int8_t *xp = x_row, *wp = w_row;
                        for (int32_t t = 0; t < cols; ++t, xp += x_step, wp += channels) {
                            TAP4(xp, wp);
                        }
                    }
                }
                y[0] = finish((uint32_t)a0 + b[0], &rq[0], s);
                y[1] = finish((uint32_t)a1 + b[1], &rq[1], s);
                y[2] = finish((uint32_t)a2 + b[2], &rq[2], s);
                y[3] = finish((uint32_t)a3 + b[3], &rq[3], s);
            }
        }
    }
}

/* Channel c of every pixel. */
static void __attribute__((noinline)) block1(const dw_shape *shape, const ptec_nn_per_channel_quant *quant,
                                             const int8_t *input, const int8_t *filter, const int32_t *bias,
                                             int32_t c, int8_t *output)
{
    const dw_shape local = *shape;
    const dw_shape *s = &local;
    const size_t channels = (size_t)s->out.c;
    const ptec_nn_requant_dsp rq = ptec_nn_requant_dsp_make(quant->multipliers[c], quant->shifts[c]);
    const uint32_t b = bias != NULL ? (uint32_t)bias[c] : 0u;
    int8_t *y = output + c;
    for (int32_t n = 0; n < s->out.n; ++n) {
        const int8_t *image = input + (size_t)n * (size_t)s->in.h * s->in_row + c;
        for (int32_t oy = 0; oy < s->out.h; ++oy) {
            const int32_t y0 = oy * s->p.stride.h - s->p.padding.h;
            int32_t ky0, ky1;
            ptec_nn_tap_range(y0, s->p.dilation.h, s->f.h, s->in.h, &ky0, &ky1);
            for (int32_t ox = 0; ox < s->out.w; ++ox, y += channels) {
                const int32_t x0 = ox * s->p.stride.w - s->p.padding.w;
                int32_t kx0, kx1;
                ptec_nn_tap_range(x0, s->p.dilation.w, s->f.w, s->in.w, &kx0, &kx1);
                const int8_t *x_row = image + (size_t)(y0 + ky0 * s->p.dilation.h) * s->in_row +
                                      (size_t)(x0 + kx0 * s->p.dilation.w) * (size_t)s->in.c;
                const int8_t *w_row = filter + c + ((size_t)ky0 * (size_t)s->f.w + (size_t)kx0) * channels;
                uint32_t acc = b;
                for (int32_t r = ky0; r < ky1; ++r, x_row += s->x_row, w_row += s->w_row) {
                    const int8_t *xp = x_row, *wp = w_row;
                    for (int32_t t = kx0; t < kx1; ++t, xp += s->x_col, wp += channels) {
                        acc += (uint32_t)((*xp + s->p.input_offset) * *wp);
                    }
                }
                *y = finish(acc, &rq, s);
            }
        }
    }
}

ptec_status ptec_nn_depthwise_conv_s8_dsp(const ptec_nn_conv_params *params, const ptec_nn_per_channel_quant *quant,
                                          const ptec_nn_dims *input_dims, const int8_t *input,
                                          const ptec_nn_dims *filter_dims, const int8_t *filter,
                                          const int32_t *bias, const ptec_nn_dims *output_dims, int8_t *output)
{
    dw_shape s;
    s.in = *input_dims;
    s.f = *filter_dims;
    s.out = *output_dims;
    s.p = *params;
    s.in_row = (size_t)s.in.w * (size_t)s.in.c;
    s.x_col = (size_t)s.p.dilation.w * (size_t)s.in.c;
    s.x_row = (size_t)s.p.dilation.h * s.in_row;
    s.w_row = (size_t)s.f.w * (size_t)s.out.c;
    int32_t c = 0;
    for (; c + 4 <= s.out.c; c += 4) {
        block4(&s, quant, input, filter, bias, c, output);
    }
    for (; c < s.out.c; ++c) {
        block1(&s, quant, input, filter, bias, c, output);
    }
    return PTEC_OK;
}

#else
typedef int ptec_nn_depthwise_dsp_unused; /* a translation unit must not be empty */
#endif
