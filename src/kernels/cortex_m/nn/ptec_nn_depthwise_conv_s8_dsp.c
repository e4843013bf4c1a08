/* DSP depthwise convolution, depth multiplier 1, one block of four
 * channels (one word) at a time over every output pixel; the channels past
 * the last multiple of 4 take a scalar block each. Per in-bounds tap, one
 * load brings four input bytes and SXTAB16 widens them to two int16 pairs
 * with the input offset already added (x + offset is within +-255); the
 * weight word splits the same way, and four SMLABB/SMLATT accumulate the
 * four channels. A 3x3 kernel takes its weights split once per block (also
 * for the windows the padding clips); other windows 3 wide have no column
 * loop. The block's requantization (shifts split, masks) is prepared once,
 * not per pixel. 3x3 kernels without dilation whose block of four channels
 * all have shift <= -2 take block4_fast3x3 (assembly pixels, the short
 * requantization of ptec_nn_dsp.h) when the padding is at most 1 and the
 * input at least 3x3. */
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

/* The short-requantization kernel (3x3, no dilation, padding at most 1,
 * an input at least 3x3, every pair of the block with shift <= -2): each
 * pixel reads a whole 3x3 window of the input, the window moved inside the
 * input where the padding clips it, with weights of 0 for the taps that
 * then do not belong to the pixel: the split weights with a border of
 * zeros, from which the table of a window moved by (dy, dx) in {-1, 0, 1}
 * starts at row 1 + dy, column 1 + dx. So every pixel is the same nine
 * taps, and no bounds are looked at per tap. A pixel is one assembly
 * block (14 values are live in the taps, more than compiled C keeps in
 * registers), which also stores the four outputs and moves the input and
 * output pointers to the next pixel of the row.
 *
 * The constants the block reads, by offset: */
typedef struct dw_fast {
    int32_t bias[4];      /* 0: the accumulators' start */
    uint32_t x_step;      /* 16: bytes between column taps */
    uint32_t x_row;       /* 20: bytes between row taps */
    uint32_t offset_pair; /* 24: the input offset in both halves */
    int32_t offset;       /* 28: the output offset */
    struct {
        int32_t multiplier, high; /* ptec_nn_requant_fast */
        uint32_t shift;
    } q[4];               /* 32 + 12 * j */
    uint32_t x_next;      /* 80: from the third window row to the next pixel */
    uint32_t y_step;      /* 84: bytes between output pixels */
    int32_t lo, hi;       /* 88, 92: the activation */
} dw_fast;

/* A tap: the four channels of the input word at ADDR times weight pair OFF
 * of the table (SXTAB16 adds the input offset to both halves). */
#define DW_TAP(ADDR, OFF)                                                                                          \
    "ldr %[xv], " ADDR "\n\t"                                                                                     \
    "ldrd %[we], %[wo], [%[tb], #" OFF "]\n\t"                                                                    \
    "sxtab16 %[xo], %[op], %[xv], ror #8\n\t"                                                                     \
    "sxtab16 %[xv], %[op], %[xv]\n\t"                                                                             \
    "smlabb %[a0], %[xv], %[we], %[a0]\n\t"                                                                       \
    "smlatt %[a2], %[xv], %[we], %[a2]\n\t"                                                                       \
    "smlabb %[a1], %[xo], %[wo], %[a1]\n\t"                                                                       \
    "smlatt %[a3], %[xo], %[wo], %[a3]\n\t"
#define DW_ROW(O0, O1, O2)                                                                                         \
    DW_TAP("[%[xp]]", O0) DW_TAP("[%[xp], %[xs]]", O1) DW_TAP("[%[xp], %[xs], lsl #1]", O2)
/* Channel A's requantization (constants at OFF), plus the output offset,
 * then the clamp CLAMP and the store to byte J of the pixel. */
#define DW_OUT(A, OFF_MH, OFF_S, CLAMP, J)                                                                        \
    "ldrd %[we], %[wo], [%[qp], #" OFF_MH "]\n\t"                                                                 \
    "ldr %[xs], [%[qp], #" OFF_S "]\n\t"                                                                          \
    "eor %[xv], %[" A "], %[we]\n\t"                                                                              \
    "add %[wo], %[wo], %[xv], asr #31\n\t"                                                                        \
    "bfi %[xv], %[xo], #0, #31\n\t"                                                                               \
    "smlal %[xv], %[wo], %[" A "], %[we]\n\t"                                                                     \
    "asr %[wo], %[wo], %[xs]\n\t"                                                                                 \
    "add %[wo], %[wo], %[op]\n\t" CLAMP "strb %[wo], [%[y], #" J "]\n\t"
#define DW_SSAT "ssat %[wo], #8, %[wo]\n\t"
#define DW_CLAMP                                                                                                   \
    "ldr %[xv], [%[qp], #88]\n\t"                                                                                 \
    "cmp %[wo], %[xv]\n\t"                                                                                        \
    "it lt\n\t"                                                                                                   \
    "movlt %[wo], %[xv]\n\t"                                                                                      \
    "ldr %[xv], [%[qp], #92]\n\t"                                                                                 \
    "cmp %[wo], %[xv]\n\t"                                                                                        \
    "it gt\n\t"                                                                                                   \
    "movgt %[wo], %[xv]\n\t"
#define DW_PIXEL(CLAMP)                                                                                             \
    __asm__ volatile("ldrd %[a0], %[a1], [%[qp], #0]\n\t"                                                           \
                     "ldrd %[a2], %[a3], [%[qp], #8]\n\t"                                                           \
                     "ldr %[xs], [%[qp], #16]\n\t"                                                                  \
                     "ldr %[op], [%[qp], #24]\n\t" DW_ROW("0", "8", "16") "ldr %[we], [%[qp], #20]\n\t"             \
                     "add %[xp], %[xp], %[we]\n\t" DW_ROW("40", "48", "56") "ldr %[we], [%[qp], #20]\n\t"           \
                     "add %[xp], %[xp], %[we]\n\t" DW_ROW("80", "88", "96") "ldr %[we], [%[qp], #80]\n\t"           \
                     "add %[xp], %[xp], %[we]\n\t"                                                                  \
                     "mov %[xo], #0x40000000\n\t"                                                                   \
                     "ldr %[op], [%[qp], #28]\n\t" DW_OUT("a0", "32", "40", CLAMP, "0")                             \
                         DW_OUT("a1", "44", "52", CLAMP, "1") DW_OUT("a2", "56", "64", CLAMP, "2")                  \
                             DW_OUT("a3", "68", "76", CLAMP, "3") "ldr %[we], [%[qp], #84]\n\t"                     \
                     "add %[y], %[y], %[we]\n\t"                                                                    \
                     : [a0] "=&r"(a0), [a1] "=&r"(a1), [a2] "=&r"(a2), [a3] "=&r"(a3), [xp] "+r"(xp),             \
                       [y] "+r"(y), [xs] "=&r"(xs), [op] "=&r"(op), [xv] "=&r"(xv), [xo] "=&r"(xo),                \
                       [we] "=&r"(we), [wo] "=&r"(wo)                                                               \
                     : [qp] "r"(qp), [tb] "r"(tb), "m"(*qp), "m"(*(const int32_t(*)[50])padded)                     \
                     : "cc", "memory")

/* `count` pixels of a row: windows at xp, xp + x_advance, ..., the weights
 * at tb; returns the output pointer past them. */
static inline __attribute__((always_inline)) int8_t *dw_pixels(const dw_fast *qp, const int32_t *padded,
                                                               const int32_t *tb, const int8_t *xp, int8_t *y,
                                                               int32_t count, int full_range)
{
    int32_t a0, a1, a2, a3;
    uint32_t xs, op, xv, xo, we, wo;
    do {
        if (full_range) {
            DW_PIXEL(DW_SSAT);
        } else {
            DW_PIXEL(DW_CLAMP);
        }
    } while (--count > 0);
    return y;
}

static inline __attribute__((always_inline)) void block4_fast3x3(const dw_shape *shape,
                                                                 const ptec_nn_per_channel_quant *quant,
                                                                 const int8_t *input, const int8_t *filter,
                                                                 const int32_t *bias, int32_t c, int8_t *output,
                                                                 int full_range)
{
    const dw_shape local = *shape; /* the byte stores below could alias *shape */
    const dw_shape *s = &local;
    const size_t channels = (size_t)s->out.c;
    const size_t x_step = (size_t)s->in.c, x_row = s->in_row;
    const size_t x_advance = (size_t)s->p.stride.w * x_step;
    dw_fast fast;
    fast.x_step = (uint32_t)x_step;
    fast.x_row = (uint32_t)x_row;
    fast.offset_pair = ((uint32_t)s->p.input_offset & 0xFFFFu) * 0x10001u;
    fast.offset = s->p.output_offset;
    fast.x_next = (uint32_t)(x_advance - 2u * x_row);
    fast.y_step = (uint32_t)channels;
    fast.lo = s->p.activation.min;
    fast.hi = s->p.activation.max;
    for (int32_t j = 0; j < 4; ++j) {
        const ptec_nn_requant_fast r = ptec_nn_requant_fast_make(quant->multipliers[c + j], quant->shifts[c + j]);
        fast.bias[j] = bias != NULL ? bias[c + j] : 0;
        fast.q[j].multiplier = r.multiplier;
        fast.q[j].high = r.high;
        fast.q[j].shift = r.shift;
    }
    /* 5x5 pairs, rows 40 bytes apart. */
    int32_t padded[50];
    for (int32_t i = 0; i < 50; ++i) {
        padded[i] = 0;
    }
    for (int32_t k = 0; k < 9; ++k) {
        const uint32_t wv = ptec_nn_load4(filter + c + (size_t)k * channels);
        int32_t *t = padded + 2 * (5 * (1 + k / 3) + 1 + k % 3);
        t[0] = (int32_t)ptec_nn_sxtb16_even(wv);
        t[1] = (int32_t)ptec_nn_sxtb16_odd(wv);
    }
    const int32_t in_h = s->in.h, in_w = s->in.w;
    const int32_t stride_h = s->p.stride.h, stride_w = s->p.stride.w;
    const int32_t pad_h = s->p.padding.h, pad_w = s->p.padding.w;
    /* Output columns [ox_lo, ox_hi) have windows inside the input's width. */
    const int32_t ox_lo = (pad_w + stride_w - 1) / stride_w < s->out.w ? (pad_w + stride_w - 1) / stride_w : s->out.w;
    int32_t ox_hi = (in_w - 3 + pad_w) / stride_w + 1;
    ox_hi = ox_hi < s->out.w ? ox_hi : s->out.w;
    ox_hi = ox_hi > ox_lo ? ox_hi : ox_lo;
    const dw_fast *qp = &fast;
    int8_t *y = output + c;
    for (int32_t n = 0; n < s->out.n; ++n) {
        const int8_t *image = input + (size_t)n * (size_t)in_h * x_row + c;
        for (int32_t oy = 0; oy < s->out.h; ++oy) {
            const int32_t y0 = oy * stride_h - pad_h;
            const int32_t row = ptec_nn_clamp(y0, 0, in_h - 3);
            const int8_t *x_line = image + (size_t)row * x_row;
            const int32_t *row_table = padded + 10 * (1 + row - y0) + 2;
            for (int32_t ox = 0; ox < ox_lo; ++ox) {
                const int32_t x0 = ox * stride_w - pad_w;
                const int32_t col = ptec_nn_clamp(x0, 0, in_w - 3);
                y = dw_pixels(qp, padded, row_table + 2 * (col - x0), x_line + (size_t)col * x_step, y, 1,
                              full_range);
            }
            if (ox_hi > ox_lo) {
                y = dw_pixels(qp, padded, row_table, x_line + (ptrdiff_t)(ox_lo * stride_w - pad_w) * (ptrdiff_t)x_step,
                              y, ox_hi - ox_lo, full_range);
            }
            for (int32_t ox = ox_hi; ox < s->out.w; ++ox) {
                const int32_t x0 = ox * stride_w - pad_w;
                const int32_t col = ptec_nn_clamp(x0, 0, in_w - 3);
                y = dw_pixels(qp, padded, row_table + 2 * (col - x0), x_line + (size_t)col * x_step, y, 1,
                              full_range);
            }
        }
    }
}

static void __attribute__((noinline)) block4_fast3x3_full(const dw_shape *s, const ptec_nn_per_channel_quant *quant,
                                                         const int8_t *input, const int8_t *filter,
                                                         const int32_t *bias, int32_t c, int8_t *output)
{
    block4_fast3x3(s, quant, input, filter, bias, c, output, 1);
}

static void __attribute__((noinline)) block4_fast3x3_clamp(const dw_shape *s, const ptec_nn_per_channel_quant *quant,
                                                          const int8_t *input, const int8_t *filter,
                                                          const int32_t *bias, int32_t c, int8_t *output)
{
    block4_fast3x3(s, quant, input, filter, bias, c, output, 0);
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
    const int fast3x3 = s.f.h == 3 && s.f.w == 3 && s.p.dilation.h == 1 && s.p.dilation.w == 1 && s.in.h >= 3 &&
                        s.in.w >= 3 && s.p.padding.h <= 1 && s.p.padding.w <= 1;
    const int full_range = s.p.activation.min == -128 && s.p.activation.max == 127;
    for (; c + 4 <= s.out.c; c += 4) {
        if (fast3x3 && ptec_nn_requant_fast_ok(quant->multipliers + c, quant->shifts + c, 4)) {
            if (full_range) {
                block4_fast3x3_full(&s, quant, input, filter, bias, c, output);
            } else {
                block4_fast3x3_clamp(&s, quant, input, filter, bias, c, output);
            }
        } else {
            block4(&s, quant, input, filter, bias, c, output);
        }
    }
    for (; c < s.out.c; ++c) {
        block1(&s, quant, input, filter, bias, c, output);
    }
    return PTEC_OK;
}

#else
typedef int ptec_nn_depthwise_dsp_unused; /* a translation unit must not be empty */
#endif
