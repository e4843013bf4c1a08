/* 2-D convolution with int16 activations and int8 weights: NHWC input,
 * OHWI filter, groups, stride, symmetric padding, dilation and batches
 * (docs/kernels.md, "16-bit activations"; CMSIS-NN arm_convolve_s16).
 *
 * int16 tensors are symmetric, so padded taps are 0 in both the real and
 * the quantized domain and are simply skipped. The accumulator is exact:
 * each product is at most 2^22 in magnitude, so a stretch of up to 511
 * products is summed in int32 (cheap on Cortex-M) and then added to the
 * int64 total, which is what CMSIS-NN's int64 accumulation means to give
 * (it sums its first 512 columns in int32, which only the all-extreme
 * window -32768 * -128 * 512 = 2^31 could overflow). The DSP and Helium
 * builds hand over to ptec_nn_convolve_s16_rows.c (the same exact sums). */
#include "ptec_nn.h"
#include "ptec_nn_math.h"
#include "ptec_nn_variants.h"
#include "ptec_nn_window.h"

#if !defined(PTEC_NN_MVE) && !defined(PTEC_NN_DSP)
/* Products per int32 partial sum: 511 * 2^22 < 2^31. */
enum { PARTIAL_TAPS = 511 };
#endif

uint32_t ptec_nn_convolve_s16_buffer_size(const ptec_nn_dims *input_dims, const ptec_nn_dims *filter_dims)
{
    (void)input_dims;
    (void)filter_dims;
    return 0; /* the reference reads the input in place */
}

#if !defined(PTEC_NN_MVE) && !defined(PTEC_NN_DSP)
/* sum x[i] * w[i] for i < n, exactly. */
static int64_t dot_s16_s8(const int16_t *x, const int8_t *w, size_t n)
{
    int64_t total = 0;
    while (n > 0) {
        const size_t chunk = n < PARTIAL_TAPS ? n : PARTIAL_TAPS;
        int32_t partial = 0;
        for (size_t i = 0; i < chunk; ++i) {
            partial += (int32_t)x[i] * (int32_t)w[i];
        }
        total += partial;
        x += chunk;
        w += chunk;
        n -= chunk;
    }
    return total;
}
#endif

ptec_status ptec_nn_convolve_s16(ptec_nn_buffer scratch, const ptec_nn_conv_s16_params *params,
                                 const ptec_nn_per_channel_quant *quant, const ptec_nn_dims *input_dims,
                                 const int16_t *input, const ptec_nn_dims *filter_dims, const int8_t *filter,
                                 const int64_t *bias, const ptec_nn_dims *output_dims, int16_t *output)
{
    (void)scratch;
    const ptec_nn_dims in = *input_dims;
    const ptec_nn_dims f = *filter_dims;
    const ptec_nn_dims out = *output_dims;
    if (f.c <= 0 || in.c < f.c || in.c % f.c != 0 || out.c != f.n || f.n % (in.c / f.c) != 0 ||
        in.n != out.n) {
        return PTEC_INVALID_ARGUMENT;
    }
    if ((size_t)out.n * (size_t)out.h * (size_t)out.w * (size_t)out.c == 0) {
        return PTEC_OK;
    }
    if (input == NULL || filter == NULL || output == NULL || quant == NULL || params == NULL ||
        !ptec_nn_shifts_s64_ok(quant->shifts, out.c)) {
        return PTEC_INVALID_ARGUMENT;
    }
#if defined(PTEC_NN_MVE) || defined(PTEC_NN_DSP)
    return ptec_nn_convolve_s16_rows(params, quant, input_dims, input, filter_dims, filter, bias, output_dims,
                                     output);
#else
    const ptec_nn_conv_s16_params p = *params;
    const int32_t groups = in.c / f.c;
    const int32_t group_out = f.n / groups;
    const size_t group_in = (size_t)f.c;
    const size_t in_row = (size_t)in.w * (size_t)in.c;
    const size_t filter_row = (size_t)f.w * group_in;
    const size_t filter_channel = (size_t)f.h * filter_row;
    int16_t *y = output;
    for (int32_t n = 0; n < out.n; ++n) {
        const int16_t *image = input + (size_t)n * (size_t)in.h * in_row;
        for (int32_t oy = 0; oy < out.h; ++oy) {
            const int32_t y0 = oy * p.stride.h - p.padding.h;
            int32_t ky0, ky1;
            ptec_nn_tap_range(y0, p.dilation.h, f.h, in.h, &ky0, &ky1);
            for (int32_t ox = 0; ox < out.w; ++ox) {
                const int32_t x0 = ox * p.stride.w - p.padding.w;
                int32_t kx0, kx1;
                ptec_nn_tap_range(x0, p.dilation.w, f.w, in.w, &kx0, &kx1);
                for (int32_t o = 0; o < out.c; ++o) {
                    const size_t c0 = (size_t)(o / group_out) * group_in;
                    const int8_t *w_o = filter + (size_t)o * filter_channel;
                    int64_t acc = 0;
                    for (int32_t ky = ky0; ky < ky1; ++ky) {
                        const int16_t *x_row = image + (size_t)(y0 + ky * p.dilation.h) * in_row + c0;
                        const int8_t *w_row = w_o + (size_t)ky * filter_row;
                        for (int32_t kx = kx0; kx < kx1; ++kx) {
                            acc += dot_s16_s8(x_row + (size_t)(x0 + kx * p.dilation.w) * (size_t)in.c,
                                              w_row + (size_t)kx * group_in, group_in);
                        }
                    }
                    *y++ = ptec_nn_output_s16(acc, bias, o, ptec_nn_reduce_multiplier(quant->multipliers[o]),
                                              quant->shifts[o], p.activation.min, p.activation.max);
                }
            }
        }
    }
    return PTEC_OK;
#endif
}
