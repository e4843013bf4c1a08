/* The walk over output pixels shared by the DSP and Helium int16 pools
 * (ptec_nn_maxpool_s16_dsp.c, ptec_nn_maxpool_s16_mve.c,
 * ptec_nn_avgpool_s16_mve.c): each variant supplies only the step that
 * reduces one pixel's window, all channels, and writes it. */
#ifndef PTEC_NN_POOL_S16_H
#define PTEC_NN_POOL_S16_H

#include "ptec_nn_variants.h"
#include "ptec_nn_window.h"

/* One output pixel's window: input rows ys, columns xs of `image`, where
 * channel c of position (iy, ix) is image[iy * row + ix * col + c]. */
typedef struct ptec_nn_pool_s16_window {
    const int16_t *image;
    ptec_nn_span ys, xs;
    size_t row, col;
} ptec_nn_pool_s16_window;

/* A variant's step: all `channels` outputs of one pixel into y, or a
 * status that stops the walk (with the pixels before it written). */
typedef ptec_status (*ptec_nn_pool_s16_pixel)(const ptec_nn_pool_s16_window *win, int32_t channels,
                                              ptec_nn_activation act, int16_t *y);

/* Inlined into each variant with its own step, which the compiler then
 * inlines too (a static function called once): no call per pixel. */
static inline __attribute__((always_inline)) ptec_status
ptec_nn_pool_s16_walk(const ptec_nn_pool_params *params, const ptec_nn_dims *input_dims, const int16_t *input,
                      const ptec_nn_dims *output_dims, int16_t *output, ptec_nn_pool_s16_pixel pixel)
{
    const ptec_nn_pool_params p = *params;
    const ptec_nn_dims in = *input_dims;
    const ptec_nn_dims out = *output_dims;
    ptec_nn_pool_s16_window win;
    win.col = (size_t)in.c;
    win.row = (size_t)in.w * win.col;
    int16_t *y = output;
    for (int32_t n = 0; n < out.n; ++n) {
        win.image = input + (size_t)n * (size_t)in.h * win.row;
        for (int32_t oy = 0; oy < out.h; ++oy) {
            win.ys = ptec_nn_pool_span(oy, p.stride.h, p.padding.h, p.kernel.h, in.h);
            for (int32_t ox = 0; ox < out.w; ++ox, y += out.c) {
                win.xs = ptec_nn_pool_span(ox, p.stride.w, p.padding.w, p.kernel.w, in.w);
                const ptec_status status = pixel(&win, out.c, p.activation, y);
                if (status != PTEC_OK) {
                    return status;
                }
            }
        }
    }
    return PTEC_OK;
}

#endif
