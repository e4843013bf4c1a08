/* An inverted-residual block's 1x1 expansion and depthwise convolution in
 * one call (ptec_nn.h): the depthwise makes a few out rows per call from a
 * window of expanded rows kept in scratch; the rows the next window shares
 * with this one move to the window's start, and only the new ones are
 * expanded. Both steps are the out-of-place math calls, on
 * whatever ISA variant the build has, so the bytes are those of the
 * unfused pair, and the expanded tensor (the largest of MobileNet-V2's
 * early blocks) never exists whole. */
#include <string.h>

#include "ptec_nn.h"
#include "ptec_nn_geometry.h"

/* Out rows of the depthwise per math call: each call redoes per-call work
 * (the expansion's per-channel sums, the depthwise's filter tables), and
 * the DSP depthwise takes its fast 3x3 path for windows of 3 rows or
 * more; more rows per call widen the window (the scratch) by stride.h
 * expanded rows each. Four rows at stride 1 and two at stride 2 give a 3x3
 * layer a window of 6 and 5 rows: MobileNet-V2's largest window stays its
 * stride-2 block's, and its zoo model runs 2.5% more instructions fused
 * on the M55 than unfused, against 5.8% with two rows everywhere
 * (docs/performance.md). */
static int32_t block_rows(const ptec_nn_conv_params *p)
{
    return p->stride.h == 1 ? 4 : 2;
}

bool ptec_nn_expand_depthwise_fits(const ptec_nn_expand_depthwise_args *args)
{
    const ptec_nn_conv_params *p = &args->params, *ep = &args->expand_params;
    const ptec_nn_dims *in = &args->input_dims, *e = &args->expand_dims, *f = &args->filter_dims,
                       *out = &args->output_dims;
    /* The expansion: one E-channel pixel per input pixel (stride 1, no
     * padding, so each input row makes one expanded row). The depthwise:
     * depth multiplier 1 over E channels, and no out row whose taps all
     * fall in the padding (its window of expanded rows would be empty). */
    return ptec_nn_dims_non_negative(in) && ptec_nn_dims_non_negative(out) &&
           ep->stride.h == 1 && ep->stride.w == 1 && ep->padding.h == 0 && ep->padding.w == 0 &&
           ep->dilation.h >= 1 && ep->dilation.w >= 1 &&
           e->n >= 1 && e->h == 1 && e->w == 1 && e->c == in->c &&
           f->n == 1 && f->h >= 1 && f->w >= 1 && f->c == e->n && out->c == e->n && out->n == in->n &&
           p->stride.h >= 1 && p->stride.w >= 1 && p->dilation.h >= 1 && p->dilation.w >= 1 &&
           p->padding.h >= 0 && p->padding.w >= 0 &&
           (int64_t)p->padding.h <= (int64_t)p->dilation.h * (f->h - 1) &&
           ptec_nn_out_size(in->h, f->h, p->stride.h, p->padding.h, p->dilation.h) == out->h &&
           ptec_nn_out_size(in->w, f->w, p->stride.w, p->padding.w, p->dilation.w) == out->w;
}

/* Expanded rows a block of block_rows() out rows reads: at most the
 * image's height. */
static int64_t window_rows(const ptec_nn_expand_depthwise_args *args)
{
    const ptec_nn_conv_params *p = &args->params;
    const int64_t rows =
        (int64_t)(block_rows(p) - 1) * p->stride.h + (int64_t)p->dilation.h * (args->filter_dims.h - 1) + 1;
    return rows < args->input_dims.h ? rows : args->input_dims.h;
}

/* The math calls' own scratch: the larger of the two, for the widest
 * window (neither grows with fewer rows). */
static uint64_t math_bytes(const ptec_nn_expand_depthwise_args *args, int32_t window)
{
    const ptec_nn_dims in_rows = {1, window, args->input_dims.w, args->input_dims.c};
    const ptec_nn_dims e_rows = {1, window, args->input_dims.w, args->expand_dims.n};
    const uint64_t expand = ptec_nn_convolve_s8_buffer_size(&in_rows, &args->expand_dims);
    const uint64_t depthwise = ptec_nn_depthwise_conv_s8_buffer_size(&e_rows, &args->filter_dims);
    return ptec_nn_align16(expand > depthwise ? expand : depthwise);
}

uint32_t ptec_nn_expand_depthwise_s8_buffer_size(const ptec_nn_expand_depthwise_args *args)
{
    if (!ptec_nn_expand_depthwise_fits(args) || ptec_nn_elements(&args->input_dims) == 0 ||
        ptec_nn_elements(&args->output_dims) == 0) {
        return 0;
    }
    const uint64_t row = (uint64_t)args->input_dims.w * (uint64_t)args->expand_dims.n;
    const int64_t window = window_rows(args);
    if (row > UINT32_MAX || window > INT32_MAX) {
        return 0;
    }
    /* row < 2^32 and window < 2^31: the product stays below 2^63. */
    const uint64_t total = math_bytes(args, (int32_t)window) + (uint64_t)window * row;
    return total > UINT32_MAX ? 0u : (uint32_t)total;
}

ptec_status ptec_nn_expand_depthwise_s8(ptec_nn_buffer scratch, const ptec_nn_expand_depthwise_args *args,
                                        const int8_t *input, int8_t *output)
{
    if (!ptec_nn_expand_depthwise_fits(args)) {
        return PTEC_INVALID_ARGUMENT;
    }
    if (ptec_nn_elements(&args->input_dims) == 0 || ptec_nn_elements(&args->output_dims) == 0) {
        return PTEC_OK;
    }
    const uint32_t need = ptec_nn_expand_depthwise_s8_buffer_size(args);
    if (need == 0 || scratch.buf == NULL || scratch.size < need || input == NULL || output == NULL) {
        return PTEC_INVALID_ARGUMENT;
    }
    const ptec_nn_dims in = args->input_dims, out = args->output_dims;
    const int32_t e_channels = args->expand_dims.n;
    const uint32_t math = (uint32_t)math_bytes(args, (int32_t)window_rows(args));
    const ptec_nn_buffer math_buf = {scratch.buf, math};
    int8_t *window = (int8_t *)scratch.buf + math;
    const size_t in_row = (size_t)in.w * (size_t)in.c, e_row = (size_t)in.w * (size_t)e_channels;
    const size_t out_row = (size_t)out.w * (size_t)out.c;
    const int32_t stride = args->params.stride.h, pad = args->params.padding.h, block = block_rows(&args->params);
    const int32_t span = args->params.dilation.h * (args->filter_dims.h - 1);
    ptec_nn_conv_params p = args->params;
    for (int32_t n = 0; n < in.n; ++n) {
        const int8_t *image = input + (size_t)n * (size_t)in.h * in_row;
        int32_t have0 = 0, have1 = 0; /* the window holds expanded rows have0 .. have1 - 1 */
        for (int32_t y0 = 0; y0 < out.h; y0 += block) {
            const int32_t rows = out.h - y0 < block ? out.h - y0 : block;
            /* The expanded rows out rows y0 .. y0 + rows - 1 read, clipped
             * to the image (fits() keeps the clip non-empty). */
            const int64_t top = (int64_t)y0 * stride - pad;
            const int64_t bottom = (int64_t)(y0 + rows - 1) * stride - pad + span;
            const int32_t r0 = top < 0 ? 0 : (int32_t)top;
            const int32_t r1 = bottom >= in.h ? in.h - 1 : (int32_t)bottom;
            /* r0 never decreases: rows before it are done with. */
            if (r0 < have1) {
                memmove(window, window + (size_t)(r0 - have0) * e_row, (size_t)(have1 - r0) * e_row);
            } else {
                have1 = r0;
            }
            have0 = r0;
            if (have1 <= r1) {
                const ptec_nn_dims x = {1, r1 + 1 - have1, in.w, in.c};
                const ptec_nn_dims e = {1, r1 + 1 - have1, in.w, e_channels};
                const ptec_status st = ptec_nn_convolve_s8(
                    math_buf, &args->expand_params, &args->expand_quant, &x, image + (size_t)have1 * in_row,
                    &args->expand_dims, args->expand_filter, args->expand_bias, &e,
                    window + (size_t)(have1 - have0) * e_row);
                if (st != PTEC_OK) {
                    return st;
                }
                have1 = r1 + 1;
            }
            const ptec_nn_dims win = {1, r1 - r0 + 1, in.w, e_channels};
            const ptec_nn_dims o = {1, rows, out.w, out.c};
            p.padding.h = (int32_t)(r0 - top);
            const ptec_status st = ptec_nn_depthwise_conv_s8(
                math_buf, &p, 1, &args->quant, &win, window, &args->filter_dims, args->filter, args->bias, &o,
                output + ((size_t)n * (size_t)out.h + (size_t)y0) * out_row);
            if (st != PTEC_OK) {
                return st;
            }
        }
    }
    return PTEC_OK;
}
