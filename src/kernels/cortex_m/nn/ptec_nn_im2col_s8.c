/* Gathers one output pixel's input window into a contiguous column, the
 * "im2col" step of the matrix-multiply convolutions (ptec_nn_variants.h).
 * Every tap is written, padded ones with pad_value, so that one dot
 * product with the whole filter row serves border and inner pixels alike. */
#include <string.h>

#include "ptec_nn_variants.h"
#include "ptec_nn_window.h"

void ptec_nn_im2col_s8(const ptec_nn_window_geometry *g, const int8_t *image, int32_t y0, int32_t x0,
                       int8_t *column)
{
    const ptec_nn_dims in = *g->input;
    const size_t count = (size_t)g->count;
    const size_t row_bytes = (size_t)g->kernel.w * count;
    int32_t kx0, kx1;
    ptec_nn_tap_range(x0, g->dilation.w, g->kernel.w, in.w, &kx0, &kx1);
    /* Without groups and dilation the in-bounds taps of a kernel row are
     * adjacent input bytes: one copy per row. */
    const int adjacent = count == (size_t)in.c && g->dilation.w == 1;
    for (int32_t ky = 0; ky < g->kernel.h; ++ky, column += row_bytes) {
        const int32_t iy = y0 + ky * g->dilation.h;
        if (iy < 0 || iy >= in.h || kx1 <= kx0) {
            memset(column, g->pad_value, row_bytes);
            continue;
        }
        const int8_t *row = image + ((size_t)iy * (size_t)in.w) * (size_t)in.c + (size_t)g->channel0;
        memset(column, g->pad_value, (size_t)kx0 * count);
        if (adjacent) {
            memcpy(column + (size_t)kx0 * count, row + (size_t)(x0 + kx0) * count, (size_t)(kx1 - kx0) * count);
        } else {
            for (int32_t kx = kx0; kx < kx1; ++kx) {
                const int8_t *tap = row + (size_t)(x0 + kx * g->dilation.w) * (size_t)in.c;
                int8_t *dst = column + (size_t)kx * count;
                if (count == 1) {
                    *dst = *tap; /* depthwise layers with one input channel */
                } else {
                    memcpy(dst, tap, count);
                }
            }
        }
        memset(column + (size_t)kx1 * count, g->pad_value, (size_t)(g->kernel.w - kx1) * count);
    }
}
