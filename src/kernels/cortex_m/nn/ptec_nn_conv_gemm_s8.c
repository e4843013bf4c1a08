/* Convolution as a matrix multiply, for the DSP and Helium builds: each
 * output pixel's window becomes a column of k = KH * KW * Cin/groups
 * bytes (im2col, padded taps holding -input_offset), and each output
 * channel is one dot product of that column with its filter row, which is
 * contiguous in the OHWI layout. The input offset and the bias are folded
 * into one constant per channel (ptec_nn_conv_bases_s8), so the inner loops
 * multiply raw int8 values, the shape SMLAD and VMLADAV want.
 *
 * A 1x1 kernel without padding or groups needs no gather: the column is
 * the input pixel itself (the pointwise layers of DS-CNN and MobileNet).
 *
 * Both builds work on two pixels at a time, so that each weight load
 * serves two columns: the DSP build widens them to int16 once per pixel
 * pair and reuses them for every output channel (see the rows_dot
 * kernels).
 *
 * Scratch, in this order: base[Cout] (int32), then two int8 columns (k
 * rounded up to 4 bytes each), then for DSP the interleaved int16 pair
 * (4k bytes).
 *
 * Packed 4-bit filters (ptec_nn_convolve_s4) take the same path in the
 * same scratch: only the bases and the rows kernels differ, which unpack
 * the nibbles in registers as they load them. */
#include "ptec_nn_variants.h"

#if defined(PTEC_NN_DSP)
#include "ptec_nn_dsp.h"
#elif defined(PTEC_NN_MVE)
#include "ptec_nn_mve.h"
#endif

#if defined(PTEC_NN_MVE) || defined(PTEC_NN_DSP)

enum { COLUMNS = 2 }; /* both builds work on pixel pairs */

uint32_t ptec_nn_conv_gemm_buffer_size(int32_t out_channels, int32_t k)
{
    const uint32_t column = ((uint32_t)k + 3u) & ~3u;
    uint32_t bytes = 4u * (uint32_t)out_channels + COLUMNS * column;
#if defined(PTEC_NN_DSP)
    bytes += 4u * (uint32_t)k;
#endif
    return bytes;
}

/* Where output pixel `index` (over batches, rows, columns) reads its
 * column: straight from the input, or gathered into `column`. */
typedef struct gemm_geometry {
    ptec_nn_window_geometry window;
    const ptec_nn_conv_params *params;
    const ptec_nn_dims *output;
    const int8_t *input;
    size_t image_bytes;
    int direct;
} gemm_geometry;

static const int8_t *pixel_column(const gemm_geometry *g, int32_t index, int32_t group, int8_t *column)
{
    const ptec_nn_dims *in = g->window.input;
    const int32_t pixels = g->output->h * g->output->w;
    const int32_t n = index / pixels;
    const int32_t r = index - n * pixels;
    const int32_t oy = r / g->output->w;
    const int32_t ox = r - oy * g->output->w;
    const int32_t y0 = oy * g->params->stride.h - g->params->padding.h;
    const int32_t x0 = ox * g->params->stride.w - g->params->padding.w;
    const int8_t *image = g->input + (size_t)n * g->image_bytes;
    if (g->direct) {
        return image + ((size_t)y0 * (size_t)in->w + (size_t)x0) * (size_t)in->c;
    }
    ptec_nn_window_geometry window = g->window;
    window.channel0 = group * window.count;
    ptec_nn_im2col_s8(&window, image, y0, x0, column);
    return column;
}

/* What differs between int8 and packed 4-bit filters (ptec_nn_s4.h): the
 * channel bases and the row kernel, which takes the filter and the index
 * of the group's first weight. Passed in by each entry point, so that a
 * firmware that only runs int8 convolutions links no 4-bit code. */
#if defined(PTEC_NN_MVE)
typedef void rows_fn(const int8_t *x0, const int8_t *x1, const int8_t *filter, size_t first, int32_t k,
                     int32_t rows, const ptec_nn_out_stage *stage, int8_t *y0, int8_t *y1);
#else
typedef void rows_fn(const uint32_t *pair, const int8_t *filter, size_t first, int32_t k, int32_t rows,
                     const ptec_nn_out_stage *stage, int8_t *y0, int8_t *y1);
#endif
typedef void bases_fn(const int8_t *filter, int32_t rows, int32_t k, const int32_t *bias, int32_t input_offset,
                      int32_t *base);
typedef struct filter_kind {
    bases_fn *bases;
    rows_fn *rows;
} filter_kind;

static ptec_status conv_gemm(void *scratch, const ptec_nn_conv_params *params, const ptec_nn_per_channel_quant *quant,
                             const ptec_nn_dims *input_dims, const int8_t *input, const ptec_nn_dims *filter_dims,
                             const int8_t *filter, const filter_kind *kind, const int32_t *bias,
                             const ptec_nn_dims *output_dims, int8_t *output)
{
    const ptec_nn_dims in = *input_dims;
    const ptec_nn_dims f = *filter_dims;
    const ptec_nn_dims out = *output_dims;
    const ptec_nn_conv_params *p = params;
    const int32_t groups = in.c / f.c;
    const int32_t group_out = f.n / groups;
    const int32_t k = f.h * f.w * f.c;

    int32_t *base = (int32_t *)scratch;
    int8_t *columns = (int8_t *)(base + out.c);
    kind->bases(filter, out.c, k, bias, p->input_offset, base);

    gemm_geometry g;
    g.window.input = input_dims;
    g.window.kernel.h = f.h;
    g.window.kernel.w = f.w;
    g.window.dilation = p->dilation;
    g.window.channel0 = 0;
    g.window.count = f.c;
    g.window.pad_value = (int8_t)-p->input_offset; /* input_offset is in [-127, 128] */
    g.params = p;
    g.output = output_dims;
    g.input = input;
    g.image_bytes = (size_t)in.h * (size_t)in.w * (size_t)in.c;
    g.direct = f.h == 1 && f.w == 1 && groups == 1 && p->padding.h == 0 && p->padding.w == 0;

    ptec_nn_out_stage stage;
    stage.output_offset = p->output_offset;
    stage.activation = p->activation;
    stage.any_min_multiplier = ptec_nn_any_min_multiplier(quant->multipliers, out.c);
    stage.fast_requant = 0;
#if defined(PTEC_NN_DSP)
    stage.fast_requant = ptec_nn_requant_fast_ok(quant->multipliers, quant->shifts, out.c);
    stage.fold_offset = stage.fast_requant && ptec_nn_requant_fold_ok(quant->shifts, out.c);
#else
    stage.fast_requant = ptec_nn_requant_short_ok_mve(quant->multipliers, quant->shifts, out.c);
#endif
    const int32_t total = out.n * out.h * out.w;
    const size_t column_bytes = ((size_t)k + 3u) & ~(size_t)3u;
#if defined(PTEC_NN_DSP)
    uint32_t *pair = (uint32_t *)(void *)(columns + 2 * column_bytes);
#endif
    for (int32_t index = 0; index < total; index += 2) {
        const int second = index + 1 < total;
        int8_t *y0 = output + (size_t)index * (size_t)out.c;
        for (int32_t group = 0; group < groups; ++group) {
            const int32_t o = group * group_out;
            stage.base = base + o;
            stage.multipliers = quant->multipliers + o;
            stage.shifts = quant->shifts + o;
            const int8_t *x0 = pixel_column(&g, index, group, columns);
            const int8_t *x1 = second ? pixel_column(&g, index + 1, group, columns + column_bytes) : x0;
            int8_t *y1 = second ? y0 + out.c + o : NULL;
            const size_t first = (size_t)o * (size_t)k; /* the group's first weight */
#if defined(PTEC_NN_MVE)
            kind->rows(x0, x1, filter, first, k, group_out, &stage, y0 + o, y1);
#else
            ptec_nn_widen2_q15_dsp(x0, x1, k, pair);
            kind->rows(pair, filter, first, k, group_out, &stage, y0 + o, y1);
#endif
        }
    }
    return PTEC_OK;
}

#if defined(PTEC_NN_MVE)
static void rows_s8(const int8_t *x0, const int8_t *x1, const int8_t *filter, size_t first, int32_t k, int32_t rows,
                    const ptec_nn_out_stage *stage, int8_t *y0, int8_t *y1)
{
    ptec_nn_rows_dot2_s8_mve(x0, x1, filter + first, k, rows, stage, y0, y1);
}
static const filter_kind int8_filter = {ptec_nn_conv_bases_s8, rows_s8};
static const filter_kind packed_filter = {ptec_nn_conv_bases_s4, ptec_nn_rows_dot2_s4_mve};
#else
static void rows_s8(const uint32_t *pair, const int8_t *filter, size_t first, int32_t k, int32_t rows,
                    const ptec_nn_out_stage *stage, int8_t *y0, int8_t *y1)
{
    ptec_nn_rows_dot2_q15_dsp(pair, filter + first, k, rows, stage, y0, y1);
}
static const filter_kind int8_filter = {ptec_nn_conv_bases_s8, rows_s8};
static const filter_kind packed_filter = {ptec_nn_conv_bases_s4, ptec_nn_rows_dot2_s4_dsp};
#endif

ptec_status ptec_nn_conv_gemm_s8(void *scratch, const ptec_nn_conv_params *params,
                                 const ptec_nn_per_channel_quant *quant, const ptec_nn_dims *input_dims,
                                 const int8_t *input, const ptec_nn_dims *filter_dims, const int8_t *filter,
                                 const int32_t *bias, const ptec_nn_dims *output_dims, int8_t *output)
{
    return conv_gemm(scratch, params, quant, input_dims, input, filter_dims, filter, &int8_filter, bias, output_dims,
                     output);
}

ptec_status ptec_nn_conv_gemm_s4(void *scratch, const ptec_nn_conv_params *params,
                                 const ptec_nn_per_channel_quant *quant, const ptec_nn_dims *input_dims,
                                 const int8_t *input, const ptec_nn_dims *filter_dims, const int8_t *packed,
                                 const int32_t *bias, const ptec_nn_dims *output_dims, int8_t *output)
{
    return conv_gemm(scratch, params, quant, input_dims, input, filter_dims, packed, &packed_filter, bias,
                     output_dims, output);
}

#else
typedef int ptec_nn_conv_gemm_unused; /* a translation unit must not be empty */
#endif
