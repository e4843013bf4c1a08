/* int8 depthwise and pointwise convolutions in place: input and output are
 * the same bytes (ptec_nn.h). Out rows (pixels) are made by the
 * out-of-place kernels, on whatever ISA variant the build has, from a
 * window of input rows that are all still unwritten, so the results are
 * those of the out-of-place call bit for bit. */
#include <string.h>

#include "ptec_nn.h"
#include "ptec_nn_geometry.h"

/* Out rows of a depthwise layer, and pixels of a pointwise one, per math
 * call: the math layers redo per-call work (filter tables per channel
 * block, per-channel sums), and the DSP depthwise takes its fast 3x3 path
 * only for windows of 3 rows or more; one row per call cost the DS-CNN's
 * depthwise layers half again their instructions on the M55 and M33. These
 * sizes keep its in-place scratch under what its other layers ask anyway
 * (docs/performance.md has the cost that remains). */
enum { DEPTHWISE_BLOCK_ROWS = 4, POINTWISE_CHUNK_PIXELS = 32 };

bool ptec_nn_depthwise_in_place_fits(const ptec_nn_conv_params *params, const ptec_nn_dims *dims,
                                     const ptec_nn_dims *filter_dims)
{
    const ptec_nn_conv_params *p = params;
    const ptec_nn_dims *d = dims, *f = filter_dims;
    /* Stride 1 along H with out.h == in.h: 2 * padding.h == dilation.h *
     * (KH - 1), so out row y reads input rows y - padding.h .. y + padding.h. */
    return ptec_nn_dims_non_negative(d) && f->n == 1 && f->h >= 1 && f->w >= 1 && f->c == d->c && p->stride.h == 1 &&
           p->padding.h >= 0 && p->padding.w >= 0 && p->dilation.h >= 1 && p->dilation.w >= 1 &&
           ptec_nn_out_size(d->h, f->h, 1, p->padding.h, p->dilation.h) == d->h &&
           ptec_nn_out_size(d->w, f->w, p->stride.w, p->padding.w, p->dilation.w) == d->w;
}

bool ptec_nn_pointwise_in_place_fits(const ptec_nn_conv_params *params, const ptec_nn_dims *dims,
                                     const ptec_nn_dims *filter_dims)
{
    const ptec_nn_conv_params *p = params;
    const ptec_nn_dims *d = dims, *f = filter_dims;
    /* Every out pixel reads only the input pixel under it. */
    return ptec_nn_dims_non_negative(d) && f->h == 1 && f->w == 1 && f->n == d->c && f->c >= 1 && d->c % f->c == 0 &&
           p->stride.h == 1 && p->stride.w == 1 && p->padding.h == 0 && p->padding.w == 0;
}

/* Out rows made per call: DEPTHWISE_BLOCK_ROWS, at most the image's height. */
static int64_t block_rows(const ptec_nn_dims *d)
{
    return d->h < DEPTHWISE_BLOCK_ROWS ? d->h : DEPTHWISE_BLOCK_ROWS;
}

/* Out rows held in scratch at once: a block, and the padding.h rows before
 * it that wait until no later out row reads the input row under them; at
 * most the image's height. */
static uint64_t pending_rows(const ptec_nn_conv_params *p, const ptec_nn_dims *d)
{
    const uint64_t rows = (uint64_t)p->padding.h + (uint64_t)block_rows(d);
    return rows < (uint64_t)d->h ? rows : (uint64_t)d->h;
}

uint32_t ptec_nn_depthwise_in_place_s8_buffer_size(const ptec_nn_conv_params *params, const ptec_nn_dims *dims,
                                                   const ptec_nn_dims *filter_dims)
{
    if (!ptec_nn_depthwise_in_place_fits(params, dims, filter_dims) || ptec_nn_elements(dims) == 0) {
        return 0;
    }
    const uint64_t row = (uint64_t)dims->w * (uint64_t)dims->c;
    const int64_t window = 2 * (int64_t)params->padding.h + block_rows(dims);
    if (row > UINT32_MAX || window > INT32_MAX) {
        return 0;
    }
    const ptec_nn_dims widest = {1, (int32_t)window, dims->w, dims->c};
    /* row < 2^32 and pending_rows < 2^31: the product stays below 2^63. */
    const uint64_t total = ptec_nn_align16(ptec_nn_depthwise_conv_s8_buffer_size(&widest, filter_dims)) +
                           pending_rows(params, dims) * row;
    return total > UINT32_MAX ? 0u : (uint32_t)total;
}

static uint64_t pointwise_chunk(const ptec_nn_dims *d)
{
    const uint64_t pixels = (uint64_t)d->n * (uint64_t)d->h * (uint64_t)d->w;
    return pixels < POINTWISE_CHUNK_PIXELS ? pixels : POINTWISE_CHUNK_PIXELS;
}

uint32_t ptec_nn_pointwise_in_place_s8_buffer_size(const ptec_nn_conv_params *params, const ptec_nn_dims *dims,
                                                   const ptec_nn_dims *filter_dims)
{
    if (!ptec_nn_pointwise_in_place_fits(params, dims, filter_dims) || ptec_nn_elements(dims) == 0) {
        return 0;
    }
    const ptec_nn_dims run = {1, 1, (int32_t)pointwise_chunk(dims), dims->c};
    const uint64_t total = ptec_nn_align16(ptec_nn_convolve_s8_buffer_size(&run, filter_dims)) +
                           (uint64_t)run.w * (uint64_t)run.c;
    return total > UINT32_MAX ? 0u : (uint32_t)total;
}

ptec_status ptec_nn_depthwise_in_place_s8(ptec_nn_buffer scratch, const ptec_nn_conv_params *params,
                                          const ptec_nn_per_channel_quant *quant, const ptec_nn_dims *dims,
                                          int8_t *data, const ptec_nn_dims *filter_dims, const int8_t *filter,
                                          const int32_t *bias)
{
    if (!ptec_nn_depthwise_in_place_fits(params, dims, filter_dims)) {
        return PTEC_INVALID_ARGUMENT;
    }
    if (ptec_nn_elements(dims) == 0) {
        return PTEC_OK;
    }
    const uint32_t need = ptec_nn_depthwise_in_place_s8_buffer_size(params, dims, filter_dims);
    if (need == 0 || scratch.buf == NULL || scratch.size < need || data == NULL) {
        return PTEC_INVALID_ARGUMENT;
    }
    const ptec_nn_dims d = *dims;
    const int32_t pad = params->padding.h;
    const ptec_nn_dims widest = {1, 2 * pad + (int32_t)block_rows(dims), d.w, d.c};
    const uint32_t math = (uint32_t)ptec_nn_align16(ptec_nn_depthwise_conv_s8_buffer_size(&widest, filter_dims));
    const ptec_nn_buffer math_buf = {scratch.buf, math};
    int8_t *pending = (int8_t *)scratch.buf + math;
    const size_t row = (size_t)d.w * (size_t)d.c;
    /* Blocks of nearly equal height (the last one is not a lone row, whose
     * window would be too short for the fast 3x3 paths). */
    const int32_t blocks = (int32_t)((d.h + block_rows(dims) - 1) / block_rows(dims));
    const int32_t base = d.h / blocks, extra = d.h % blocks;
    ptec_nn_conv_params p = *params;
    for (int32_t n = 0; n < d.n; ++n) {
        int8_t *image = data + (size_t)n * (size_t)d.h * row;
        int32_t y0 = 0, held = 0; /* pending holds out rows y0 - held .. y0 - 1 */
        for (int32_t b = 0; b < blocks; ++b) {
            const int32_t rows = base + (b < extra ? 1 : 0);
            /* The input rows out rows y0 .. y0 + rows - 1 read: none written
             * yet, since an out row goes back only after every out row that
             * reads the input row under it is made. */
            const int64_t top = (int64_t)y0 - pad, bottom = (int64_t)y0 + rows - 1 + pad;
            const int32_t r0 = top < 0 ? 0 : (int32_t)top;
            const int32_t r1 = bottom >= d.h ? d.h - 1 : (int32_t)bottom;
            const ptec_nn_dims window = {1, r1 - r0 + 1, d.w, d.c};
            const ptec_nn_dims out = {1, rows, d.w, d.c};
            p.padding.h = (int32_t)(r0 - top);
            const ptec_status st = ptec_nn_depthwise_conv_s8(math_buf, &p, 1, quant, &window, image + (size_t)r0 * row,
                                                             filter_dims, filter, bias, &out,
                                                             pending + (size_t)held * row);
            if (st != PTEC_OK) {
                return st;
            }
            held += rows;
            y0 += rows;
            /* No later block reads the input rows under out rows before
             * y0 - pad: those go back (after the last block, all do). */
            const int32_t keep = b + 1 < blocks ? (pad < held ? pad : held) : 0;
            const int32_t back = held - keep;
            memcpy(image + (size_t)(y0 - held) * row, pending, (size_t)back * row);
            memmove(pending, pending + (size_t)back * row, (size_t)keep * row);
            held = keep;
        }
    }
    return PTEC_OK;
}

ptec_status ptec_nn_pointwise_in_place_s8(ptec_nn_buffer scratch, const ptec_nn_conv_params *params,
                                          const ptec_nn_per_channel_quant *quant, const ptec_nn_dims *dims,
                                          int8_t *data, const ptec_nn_dims *filter_dims, const int8_t *filter,
                                          const int32_t *bias)
{
    if (!ptec_nn_pointwise_in_place_fits(params, dims, filter_dims)) {
        return PTEC_INVALID_ARGUMENT;
    }
    if (ptec_nn_elements(dims) == 0) {
        return PTEC_OK;
    }
    const uint32_t need = ptec_nn_pointwise_in_place_s8_buffer_size(params, dims, filter_dims);
    if (need == 0 || scratch.buf == NULL || scratch.size < need || data == NULL) {
        return PTEC_INVALID_ARGUMENT;
    }
    const uint64_t pixels = (uint64_t)dims->n * (uint64_t)dims->h * (uint64_t)dims->w;
    const uint64_t chunk = pointwise_chunk(dims);
    const ptec_nn_dims full = {1, 1, (int32_t)chunk, dims->c};
    const uint32_t math = (uint32_t)ptec_nn_align16(ptec_nn_convolve_s8_buffer_size(&full, filter_dims));
    const ptec_nn_buffer math_buf = {scratch.buf, math};
    int8_t *saved = (int8_t *)scratch.buf + math;
    const size_t pixel = (size_t)dims->c;
    for (uint64_t at = 0; at < pixels; at += chunk) {
        /* Copy a run of pixels aside, then write their outputs over them. */
        const uint64_t count = pixels - at < chunk ? pixels - at : chunk;
        const ptec_nn_dims run = {1, 1, (int32_t)count, dims->c};
        int8_t *x = data + (size_t)at * pixel;
        memcpy(saved, x, (size_t)count * pixel);
        const ptec_status st = ptec_nn_convolve_s8(math_buf, params, quant, &run, saved, filter_dims, filter, bias,
                                                   &run, x);
        if (st != PTEC_OK) {
            return st;
        }
    }
    return PTEC_OK;
}
