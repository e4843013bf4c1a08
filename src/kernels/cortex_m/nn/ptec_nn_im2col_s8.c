/* Gathers one output pixel's input window into a contiguous column, the
 * "im2col" step of the matrix-multiply convolutions (ptec_nn_variants.h).
 * Every tap is written, padded ones with pad_value, so that one dot
 * product with the whole filter row serves border and inner pixels alike. */
#include <string.h>

#include "ptec_nn_variants.h"
#include "ptec_nn_window.h"

#if defined(PTEC_NN_MVE)
#include "ptec_nn_mve.h"

/* Helium: whole vectors, the last one predicated (nothing read or written
 * past n). The word and byte loops of the other builds cost DS-CNN's
 * first layer 86,000 of its 230,000 instructions: ten rows of four bytes
 * per pixel, each row three loops that GCC sets up for long runs. */
static inline void copy(int8_t *dst, const int8_t *src, size_t n)
{
    for (; n > 16; n -= 16, dst += 16, src += 16) {
        vst1q_s8(dst, vld1q_s8(src));
    }
    const mve_pred16_t last = vctp8q((uint32_t)n);
    vstrbq_p_s8(dst, vldrbq_z_s8(src, last), last);
}

static inline void fill(int8_t *dst, int8_t value, size_t n)
{
    const int8x16_t v = vdupq_n_s8(value);
    for (; n > 16; n -= 16, dst += 16) {
        vst1q_s8(dst, v);
    }
    vstrbq_p_s8(dst, v, vctp8q((uint32_t)n));
}

#else
/* Runs are short (a kernel row of a one-channel input is a few bytes):
 * word copies inline beat a library call per run. memcpy of 4 bytes
 * compiles to one unaligned load or store. */
static inline void copy(int8_t *dst, const int8_t *src, size_t n)
{
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        uint32_t v;
        memcpy(&v, src + i, 4);
        memcpy(dst + i, &v, 4);
    }
    for (; i < n; ++i) {
        dst[i] = src[i];
    }
}

static inline void fill(int8_t *dst, int8_t value, size_t n)
{
    const uint32_t v = (uint32_t)(uint8_t)value * 0x01010101u;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        memcpy(dst + i, &v, 4);
    }
    for (; i < n; ++i) {
        dst[i] = value;
    }
}
#endif

void ptec_nn_im2col_s8(const ptec_nn_window_geometry *g, const int8_t *image, int32_t y0, int32_t x0,
                       int8_t *column)
{
    const ptec_nn_dims in = *g->input;
    const size_t count = (size_t)g->count;
    const size_t row_bytes = (size_t)g->kernel.w * count;
    const size_t in_row = (size_t)in.w * (size_t)in.c;
    const int8_t pad = g->pad_value;
    int32_t kx0, kx1, ky0, ky1;
    ptec_nn_tap_range(x0, g->dilation.w, g->kernel.w, in.w, &kx0, &kx1);
    ptec_nn_tap_range(y0, g->dilation.h, g->kernel.h, in.h, &ky0, &ky1);
    /* The first in-bounds tap can lie past the kernel (a window wholly in
     * the padding): clamp, so that the stretches below never exceed it. */
    kx0 = kx0 < g->kernel.w ? kx0 : g->kernel.w;
    kx1 = kx1 < g->kernel.w ? kx1 : g->kernel.w;
    ky0 = ky0 < g->kernel.h ? ky0 : g->kernel.h;
    ky1 = ky1 < g->kernel.h ? ky1 : g->kernel.h;
    if (kx1 <= kx0) {
        kx1 = kx0;
        ky1 = ky0; /* no tap of any row is inside */
    }
    /* Every in-bounds row has the same padded and copied stretches. */
    const size_t before = (size_t)kx0 * count;
    const size_t after = (size_t)(g->kernel.w - kx1) * count;
    const size_t inside = row_bytes - before - after;
    /* Without groups and dilation the in-bounds taps of a kernel row are
     * adjacent input bytes: one copy per row. */
    const int adjacent = count == (size_t)in.c && g->dilation.w == 1;
#if defined(PTEC_NN_MVE)
    if (adjacent && row_bytes <= 16) {
        /* Kernel rows of at most 16 bytes (DS-CNN's first layer: 4): the
         * whole window padded first, then each in-bounds row is one
         * predicated load and store of the lanes [before, before +
         * inside), the same predicate for every row. The load starts
         * `before` bytes ahead of the row's first tap, lanes that read
         * nothing. */
        fill(column, pad, (size_t)g->kernel.h * row_bytes);
        const mve_pred16_t lanes =
            (mve_pred16_t)(vctp8q((uint32_t)(before + inside)) & (mve_pred16_t)~vctp8q((uint32_t)before));
        const uintptr_t step = (uintptr_t)g->dilation.h * in_row;
        uintptr_t src = (uintptr_t)(image + (size_t)(y0 + ky0 * g->dilation.h) * in_row + (size_t)g->channel0 +
                                    (size_t)(x0 + kx0 * g->dilation.w) * (size_t)in.c) -
                        before;
        int8_t *dst = column + (size_t)ky0 * row_bytes;
        for (int32_t ky = ky0; ky < ky1; ++ky, dst += row_bytes, src += step) {
            vstrbq_p_s8(dst, vldrbq_z_s8((const int8_t *)src, lanes), lanes);
        }
        return;
    }
#endif
    fill(column, pad, (size_t)ky0 * row_bytes);
    column += (size_t)ky0 * row_bytes;
    const int8_t *row = image + (size_t)(y0 + ky0 * g->dilation.h) * in_row + (size_t)g->channel0 +
                        (size_t)(x0 + kx0 * g->dilation.w) * (size_t)in.c;
    for (int32_t ky = ky0; ky < ky1; ++ky, column += row_bytes, row += (size_t)g->dilation.h * in_row) {
        fill(column, pad, before);
        if (adjacent) {
            copy(column + before, row, inside);
        } else {
            const int8_t *tap = row;
            for (int8_t *dst = column + before; dst < column + before + inside; dst += count) {
                copy(dst, tap, count);
                tap += (size_t)g->dilation.w * (size_t)in.c;
            }
        }
        fill(column + before + inside, pad, after);
    }
    fill(column, pad, (size_t)(g->kernel.h - ky1) * row_bytes);
}
