/* int8 2-D convolution with packed 4-bit weights (ptec_nn_s4.h): the
 * numerics of ptec_nn_convolve_s8 (groups, stride, padding, dilation,
 * batches, per-channel requantization), the filter OHWI
 * [Cout, KH, KW, Cin/groups] packed two elements per byte.
 *
 * The scratch is the s8 convolution's, for the same dims, on every build:
 * the compiler sizes it with the s8 formula, and the DSP and Helium
 * variants (the matrix-multiply convolution with the weights unpacked in
 * registers, ptec_nn_conv_gemm_s8.c) need no more than the s8 ones do.
 *
 * The reference below adds (x + input_offset) * w over the in-bounds taps
 * only (padding is zero in the real domain), modulo 2^32 as a wrapping
 * int32 accumulator would. It needs no scratch; it is the source of truth
 * the variants and the numpy model are compared with, so it stays plain. */
#include "ptec_nn.h"
#include "ptec_nn_math.h"
#include "ptec_nn_s4.h"
#include "ptec_nn_variants.h"
#include "ptec_nn_window.h"

uint32_t ptec_nn_convolve_s4_buffer_size(const ptec_nn_dims *input_dims, const ptec_nn_dims *filter_dims)
{
    return ptec_nn_convolve_s8_buffer_size(input_dims, filter_dims);
}

ptec_status ptec_nn_convolve_s4(ptec_nn_buffer scratch, const ptec_nn_conv_params *params,
                                const ptec_nn_per_channel_quant *quant, const ptec_nn_dims *input_dims,
                                const int8_t *input, const ptec_nn_dims *filter_dims, const int8_t *filter,
                                const int32_t *bias, const ptec_nn_dims *output_dims, int8_t *output)
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
        scratch.size < ptec_nn_convolve_s4_buffer_size(input_dims, filter_dims)) {
        return PTEC_INVALID_ARGUMENT;
    }
#if defined(PTEC_NN_MVE) || defined(PTEC_NN_DSP)
    return ptec_nn_conv_gemm_s4(scratch.buf, params, quant, input_dims, input, filter_dims, filter, bias,
                                output_dims, output);
#else
    const ptec_nn_conv_params p = *params;
    const int32_t groups = in.c / f.c;
    const int32_t group_out = f.n / groups;
    const size_t group_in = (size_t)f.c;
    const size_t in_row = (size_t)in.w * (size_t)in.c;
    const size_t filter_channel = (size_t)f.h * (size_t)f.w * group_in; /* elements per output channel */
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
                for (int32_t o = 0; o < out.c; ++o) {
                    const size_t channel0 = (size_t)(o / group_out) * group_in;
                    uint32_t acc = bias != NULL ? (uint32_t)bias[o] : 0u;
                    for (int32_t ky = ky0; ky < ky1; ++ky) {
                        const int8_t *x_row = image + (size_t)(y0 + ky * p.dilation.h) * in_row + channel0;
                        for (int32_t kx = kx0; kx < kx1; ++kx) {
                            const int8_t *x = x_row + (size_t)(x0 + kx * p.dilation.w) * (size_t)in.c;
                            const size_t first = (size_t)o * filter_channel + ((size_t)ky * (size_t)f.w + (size_t)kx) * group_in;
                            acc += ptec_nn_dot_s4(x, p.input_offset, filter, first, group_in);
                        }
                    }
                    *y++ = ptec_nn_requantize_s8((int32_t)acc, quant->multipliers[o], quant->shifts[o], p.output_offset,
                                                 p.activation.min, p.activation.max);
                }
            }
        }
    }
    return PTEC_OK;
#endif
}
