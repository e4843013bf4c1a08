/* int8 2-D convolution, NHWC input, OHWI filter, with groups, stride,
 * symmetric padding, dilation and batches (cortex-m-ops.md §3.9).
 *
 * Padded taps contribute nothing to the accumulator: padding is zero in the
 * real domain, not in the int8 domain. Only in-bounds taps are visited.
 *
 * The input offset is taken out of the inner loop:
 *   sum (x + offset) * w = sum x * w + offset * sum w,
 * with bias + offset * (sum w over the whole kernel) precomputed per output
 * channel in the scratch buffer, and sum w over the in-bounds taps computed
 * for border pixels only. All
 * sums are modulo 2^32, so the result is bit-identical to accumulating
 * (x + offset) * w in a wrapping int32. */
#include "ptec_nn.h"
#include "ptec_nn_dot.h"
#include "ptec_nn_math.h"
#include "ptec_nn_variants.h"
#include "ptec_nn_window.h"

uint32_t ptec_nn_convolve_s8_buffer_size(const ptec_nn_dims *input_dims,
                                         const ptec_nn_dims *filter_dims)
{
    (void)input_dims;
    const int32_t out_channels = filter_dims->n > 0 ? filter_dims->n : 0;
#if defined(PTEC_NN_MVE) || defined(PTEC_NN_DSP)
    return ptec_nn_conv_gemm_buffer_size(out_channels, filter_dims->h * filter_dims->w * filter_dims->c);
#else
    return 4u * (uint32_t)out_channels; /* per-channel bases */
#endif
}

ptec_status ptec_nn_convolve_s8(ptec_nn_buffer scratch, const ptec_nn_conv_params *params,
                                const ptec_nn_per_channel_quant *quant,
                                const ptec_nn_dims *input_dims, const int8_t *input,
                                const ptec_nn_dims *filter_dims, const int8_t *filter,
                                const int32_t *bias, const ptec_nn_dims *output_dims,
                                int8_t *output)
{
    const ptec_nn_dims in = *input_dims;
    const ptec_nn_dims f = *filter_dims;
    const ptec_nn_dims out = *output_dims;
    if (f.c <= 0 || in.c < f.c || in.c % f.c != 0 || out.c != f.n || f.n % (in.c / f.c) != 0) {
        return PTEC_INVALID_ARGUMENT;
    }
    if ((size_t)out.n * (size_t)out.h * (size_t)out.w * (size_t)out.c == 0) {
        return PTEC_OK;
    }
    if (input == NULL || filter == NULL || output == NULL || quant == NULL || scratch.buf == NULL ||
        scratch.size < ptec_nn_convolve_s8_buffer_size(input_dims, filter_dims)) {
        return PTEC_INVALID_ARGUMENT;
    }
#if defined(PTEC_NN_MVE) || defined(PTEC_NN_DSP)
    /* The DSP and Helium builds compute the same sums as a matrix multiply. */
    return ptec_nn_conv_gemm_s8(scratch.buf, params, quant, input_dims, input, filter_dims, filter, bias,
                                output_dims, output);
#else
    const ptec_nn_conv_params p = *params;
    const size_t group_in = (size_t)f.c;
    const int32_t group_out = f.n / (in.c / f.c);
    const size_t in_pixel = (size_t)in.c;
    const size_t in_row = (size_t)in.w * in_pixel;
    const size_t filter_row = (size_t)f.w * group_in;
    const size_t filter_channel = (size_t)f.h * filter_row;
    const uint32_t offset = (uint32_t)p.input_offset;
    /* Without groups and dilation, a kernel row covers adjacent bytes. */
    const int contiguous_row = group_in == in_pixel && p.dilation.w == 1;

    const int32_t groups = in.c / f.c;
    uint32_t *base = (uint32_t *)scratch.buf;
    for (int32_t o = 0; o < out.c; ++o) {
        base[o] = offset * ptec_nn_sum_s8(filter + (size_t)o * filter_channel, filter_channel) +
                  (bias != NULL ? (uint32_t)bias[o] : 0u);
    }

    int8_t *y = output;
    for (int32_t n = 0; n < out.n; ++n) {
        const int8_t *image = input + (size_t)n * (size_t)in.h * in_row;
        for (int32_t oy = 0; oy < out.h; ++oy) {
            const int32_t y0 = oy * p.stride.h - p.padding.h;
            int32_t ky0, ky1;
            ptec_nn_tap_range(y0, p.dilation.h, f.h, in.h, &ky0, &ky1);
            for (int32_t ox = 0; ox < out.w; ++ox) {
                const int32_t x0 = ox * p.stride.w - p.padding.w;
                int32_t kx0, kx1;
                ptec_nn_tap_range(x0, p.dilation.w, f.w, in.w, &kx0, &kx1);
                const int whole_kernel = ky0 == 0 && ky1 == f.h && kx0 == 0 && kx1 == f.w;
                /* A run is a stretch of taps adjacent in both input and filter:
                 * a whole kernel row without groups or dilation, else one tap. */
                const size_t run_bytes = contiguous_row ? (size_t)(kx1 - kx0) * group_in : group_in;
                const int32_t runs_per_row = contiguous_row ? (kx1 > kx0 ? 1 : 0) : kx1 - kx0;
                const int32_t run_step = p.dilation.w; /* in taps, when one run is one tap */
                for (int32_t g = 0; g < groups; ++g) {
                    const size_t in_c0 = (size_t)g * group_in;
                    const int32_t o_end = (g + 1) * group_out;
                    int32_t o = g * group_out;
                    while (o < o_end) {
                        /* Up to four output channels of one group share each input load. */
                        const int32_t tile = o_end - o >= 4 ? 4 : 1;
                        const int8_t *w_o = filter + (size_t)o * filter_channel;
                        uint32_t acc[4] = {0, 0, 0, 0};
                        uint32_t weight_sum[4] = {0, 0, 0, 0};
                        for (int32_t ky = ky0; ky < ky1; ++ky) {
                            const int8_t *x_row = image + (size_t)(y0 + ky * p.dilation.h) * in_row + in_c0 +
                                                  (size_t)(x0 + kx0 * p.dilation.w) * in_pixel;
                            const int8_t *w_row = w_o + (size_t)ky * filter_row + (size_t)kx0 * group_in;
                            for (int32_t r = 0; r < runs_per_row; ++r) {
                                const int8_t *x = x_row + (size_t)(r * run_step) * in_pixel;
                                const int8_t *w0 = w_row + (size_t)r * group_in;
                                if (tile == 4) {
                                    ptec_nn_dot4_s8(x, w0, filter_channel, run_bytes, acc);
                                } else {
                                    acc[0] += ptec_nn_dot_s8(x, w0, run_bytes);
                                }
                                for (int32_t t = 0; !whole_kernel && t < tile; ++t) {
                                    weight_sum[t] += ptec_nn_sum_s8(w0 + (size_t)t * filter_channel, run_bytes);
                                }
                            }
                        }
                        for (int32_t t = 0; t < tile; ++t) {
                            const int32_t oc = o + t;
                            /* base[oc] = bias + offset * (whole-kernel weight sum) */
                            uint32_t total = acc[t];
                            if (whole_kernel) {
                                total += base[oc];
                            } else {
                                total += offset * weight_sum[t] + (bias != NULL ? (uint32_t)bias[oc] : 0u);
                            }
                            *y++ = ptec_nn_requantize_s8((int32_t)total, quant->multipliers[oc], quant->shifts[oc],
                                                         p.output_offset, p.activation.min, p.activation.max);
                        }
                        o += tile;
                    }
                }
            }
        }
    }
    return PTEC_OK;
#endif
}
