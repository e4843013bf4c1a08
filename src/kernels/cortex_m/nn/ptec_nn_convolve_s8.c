/* int8 2-D convolution, NHWC input, OHWI filter, with groups, stride,
 * symmetric padding, dilation and batches (cortex-m-ops.md §3.9).
 *
 * Padded taps contribute nothing to the accumulator: padding is zero in the
 * real domain, not in the int8 domain. Only the in-bounds taps are visited.
 * Four output channels (and, where their windows agree, two output
 * pixels) are computed together, so that each loaded byte serves several
 * multiply-adds. Accumulators wrap as int32 on the
 * target. The reference needs no scratch. */
#include "ptec_nn.h"
#include "ptec_nn_math.h"
#include "ptec_nn_window.h"

uint32_t ptec_nn_convolve_s8_buffer_size(const ptec_nn_dims *input_dims,
                                         const ptec_nn_dims *filter_dims)
{
    (void)input_dims;
    (void)filter_dims;
    return 0;
}

typedef struct conv_geometry {
    const ptec_nn_conv_params *p;
    const ptec_nn_per_channel_quant *quant;
    const int32_t *bias;
    const int8_t *filter;
    size_t in_row, in_pixel;          /* input strides in bytes */
    size_t filter_row, filter_channel; /* filter strides in bytes */
    int32_t group_in, group_out, out_c;
} conv_geometry;

/* One output pixel's window: origin and in-bounds tap ranges. */
typedef struct conv_window {
    const int8_t *image; /* this batch's input, NHWC */
    int32_t y0, x0, ky0, ky1, kx0, kx1;
} conv_window;

static int8_t finish(const conv_geometry *g, uint32_t acc, int32_t o)
{
    const ptec_nn_conv_params *p = g->p;
    const int32_t r = ptec_nn_requantize((int32_t)acc, g->quant->multipliers[o], g->quant->shifts[o]);
    return (int8_t)ptec_nn_output_stage(r, p->output_offset, p->activation.min, p->activation.max);
}

static uint32_t bias_of(const conv_geometry *g, int32_t o)
{
    return g->bias != NULL ? (uint32_t)g->bias[o] : 0u;
}

/* The input bytes of tap (ky, kx) for the channels of group starting at in_c0. */
static const int8_t *tap_input(const conv_geometry *g, const conv_window *win, int32_t ky, int32_t kx,
                               size_t in_c0)
{
    const int32_t iy = win->y0 + ky * g->p->dilation.h;
    const int32_t ix = win->x0 + kx * g->p->dilation.w;
    return win->image + (size_t)iy * g->in_row + (size_t)ix * g->in_pixel + in_c0;
}

/* All output channels of one pixel, four channels at a time. */
static void conv_pixel(const conv_geometry *g, const conv_window *win, int8_t *y)
{
    const int32_t offset = g->p->input_offset;
    const size_t tap = (size_t)g->group_in;
    int32_t o = 0;
    while (o < g->out_c) {
        const int32_t group_end = (o / g->group_out + 1) * g->group_out;
        const size_t in_c0 = (size_t)(o / g->group_out) * tap;
        const int8_t *w_o = g->filter + (size_t)o * g->filter_channel;
        if (group_end - o >= 4) {
            uint32_t a0 = bias_of(g, o), a1 = bias_of(g, o + 1), a2 = bias_of(g, o + 2), a3 = bias_of(g, o + 3);
            for (int32_t ky = win->ky0; ky < win->ky1; ++ky) {
                for (int32_t kx = win->kx0; kx < win->kx1; ++kx) {
                    const int8_t *x = tap_input(g, win, ky, kx, in_c0);
                    const int8_t *w0 = w_o + (size_t)ky * g->filter_row + (size_t)kx * tap;
                    const int8_t *w1 = w0 + g->filter_channel;
                    const int8_t *w2 = w1 + g->filter_channel;
                    const int8_t *w3 = w2 + g->filter_channel;
                    for (size_t c = 0; c < tap; ++c) {
                        const int32_t v = x[c] + offset;
                        a0 += (uint32_t)(v * w0[c]);
                        a1 += (uint32_t)(v * w1[c]);
                        a2 += (uint32_t)(v * w2[c]);
                        a3 += (uint32_t)(v * w3[c]);
                    }
                }
            }
            y[o] = finish(g, a0, o);
            y[o + 1] = finish(g, a1, o + 1);
            y[o + 2] = finish(g, a2, o + 2);
            y[o + 3] = finish(g, a3, o + 3);
            o += 4;
        } else {
            uint32_t acc = bias_of(g, o);
            for (int32_t ky = win->ky0; ky < win->ky1; ++ky) {
                for (int32_t kx = win->kx0; kx < win->kx1; ++kx) {
                    const int8_t *x = tap_input(g, win, ky, kx, in_c0);
                    const int8_t *w = w_o + (size_t)ky * g->filter_row + (size_t)kx * tap;
                    for (size_t c = 0; c < tap; ++c) {
                        acc += (uint32_t)((x[c] + offset) * w[c]);
                    }
                }
            }
            y[o] = finish(g, acc, o);
            o += 1;
        }
    }
}

/* Two horizontally adjacent output pixels whose windows have the same
 * in-bounds taps (every pixel of an unpadded 1x1 conv, the interior of
 * others): each weight byte is loaded once for two pixels. win describes
 * the first; the second starts stride_w input pixels further right. */
static void conv_pixel_pair(const conv_geometry *g, const conv_window *win, int8_t *y_a, int8_t *y_b)
{
    const int32_t offset = g->p->input_offset;
    const size_t tap = (size_t)g->group_in;
    const size_t step = (size_t)g->p->stride.w * g->in_pixel;
    int32_t o = 0;
    while (o < g->out_c) {
        const int32_t group_end = (o / g->group_out + 1) * g->group_out;
        const size_t in_c0 = (size_t)(o / g->group_out) * tap;
        const int8_t *w_o = g->filter + (size_t)o * g->filter_channel;
        if (group_end - o >= 4) {
            uint32_t a0 = bias_of(g, o), a1 = bias_of(g, o + 1), a2 = bias_of(g, o + 2), a3 = bias_of(g, o + 3);
            uint32_t b0 = a0, b1 = a1, b2 = a2, b3 = a3;
            for (int32_t ky = win->ky0; ky < win->ky1; ++ky) {
                for (int32_t kx = win->kx0; kx < win->kx1; ++kx) {
                    const int8_t *xa = tap_input(g, win, ky, kx, in_c0);
                    const int8_t *xb = xa + step;
                    const int8_t *w0 = w_o + (size_t)ky * g->filter_row + (size_t)kx * tap;
                    const int8_t *w1 = w0 + g->filter_channel;
                    const int8_t *w2 = w1 + g->filter_channel;
                    const int8_t *w3 = w2 + g->filter_channel;
                    for (size_t c = 0; c < tap; ++c) {
                        const int32_t va = xa[c] + offset;
                        const int32_t vb = xb[c] + offset;
                        const int32_t k0 = w0[c], k1 = w1[c], k2 = w2[c], k3 = w3[c];
                        a0 += (uint32_t)(va * k0);
                        b0 += (uint32_t)(vb * k0);
                        a1 += (uint32_t)(va * k1);
                        b1 += (uint32_t)(vb * k1);
                        a2 += (uint32_t)(va * k2);
                        b2 += (uint32_t)(vb * k2);
                        a3 += (uint32_t)(va * k3);
                        b3 += (uint32_t)(vb * k3);
                    }
                }
            }
            y_a[o] = finish(g, a0, o);
            y_a[o + 1] = finish(g, a1, o + 1);
            y_a[o + 2] = finish(g, a2, o + 2);
            y_a[o + 3] = finish(g, a3, o + 3);
            y_b[o] = finish(g, b0, o);
            y_b[o + 1] = finish(g, b1, o + 1);
            y_b[o + 2] = finish(g, b2, o + 2);
            y_b[o + 3] = finish(g, b3, o + 3);
            o += 4;
        } else {
            uint32_t a = bias_of(g, o);
            uint32_t b = a;
            for (int32_t ky = win->ky0; ky < win->ky1; ++ky) {
                for (int32_t kx = win->kx0; kx < win->kx1; ++kx) {
                    const int8_t *xa = tap_input(g, win, ky, kx, in_c0);
                    const int8_t *xb = xa + step;
                    const int8_t *w = w_o + (size_t)ky * g->filter_row + (size_t)kx * tap;
                    for (size_t c = 0; c < tap; ++c) {
                        a += (uint32_t)((xa[c] + offset) * w[c]);
                        b += (uint32_t)((xb[c] + offset) * w[c]);
                    }
                }
            }
            y_a[o] = finish(g, a, o);
            y_b[o] = finish(g, b, o);
            o += 1;
        }
    }
}

ptec_status ptec_nn_convolve_s8(ptec_nn_buffer scratch, const ptec_nn_conv_params *params,
                                const ptec_nn_per_channel_quant *quant,
                                const ptec_nn_dims *input_dims, const int8_t *input,
                                const ptec_nn_dims *filter_dims, const int8_t *filter,
                                const int32_t *bias, const ptec_nn_dims *output_dims,
                                int8_t *output)
{
    (void)scratch;
    const ptec_nn_dims in = *input_dims;
    const ptec_nn_dims f = *filter_dims;
    const ptec_nn_dims out = *output_dims;
    if (f.c <= 0 || in.c < f.c || in.c % f.c != 0 || out.c != f.n || f.n % (in.c / f.c) != 0) {
        return PTEC_INVALID_ARGUMENT;
    }
    if ((size_t)out.n * (size_t)out.h * (size_t)out.w * (size_t)out.c == 0) {
        return PTEC_OK;
    }
    if (input == NULL || filter == NULL || output == NULL || quant == NULL) {
        return PTEC_INVALID_ARGUMENT;
    }
    const ptec_nn_conv_params p = *params;
    conv_geometry g;
    g.p = &p;
    g.quant = quant;
    g.bias = bias;
    g.filter = filter;
    g.in_pixel = (size_t)in.c;
    g.in_row = (size_t)in.w * g.in_pixel;
    g.filter_row = (size_t)f.w * (size_t)f.c;
    g.filter_channel = (size_t)f.h * g.filter_row;
    g.group_in = f.c;
    g.group_out = f.n / (in.c / f.c);
    g.out_c = out.c;
    const size_t out_pixel = (size_t)out.c;
    int8_t *y = output;
    for (int32_t n = 0; n < out.n; ++n) {
        conv_window win;
        win.image = input + (size_t)n * (size_t)in.h * g.in_row;
        for (int32_t oy = 0; oy < out.h; ++oy) {
            win.y0 = oy * p.stride.h - p.padding.h;
            ptec_nn_tap_range(win.y0, p.dilation.h, f.h, in.h, &win.ky0, &win.ky1);
            int32_t ox = 0;
            while (ox < out.w) {
                win.x0 = ox * p.stride.w - p.padding.w;
                ptec_nn_tap_range(win.x0, p.dilation.w, f.w, in.w, &win.kx0, &win.kx1);
                int32_t next_kx0 = -1, next_kx1 = -1;
                if (ox + 1 < out.w) {
                    ptec_nn_tap_range(win.x0 + p.stride.w, p.dilation.w, f.w, in.w, &next_kx0, &next_kx1);
                }
                if (next_kx0 == win.kx0 && next_kx1 == win.kx1) {
                    conv_pixel_pair(&g, &win, y, y + out_pixel);
                    y += 2 * out_pixel;
                    ox += 2;
                } else {
                    conv_pixel(&g, &win, y);
                    y += out_pixel;
                    ox += 1;
                }
            }
        }
    }
    return PTEC_OK;
}
