/* A depthwise convolution of a single input channel with a depth
 * multiplier of Cout computes, for each output channel o,
 * sum over taps (x + input_offset) * w[tap][o]: a plain convolution with
 * one input channel and the filter [Cout, KH, KW, 1]. The IHWO filter
 * [1, KH, KW, Cout] is transposed into the scratch so that each channel's
 * taps are contiguous, then the matrix-multiply convolution runs on it
 * (for DS-CNN's first layer, 64 channels of a 10x4 window: one VMLADAV or
 * SMLAD chain per channel instead of 40 strided scalar taps). */
#include "ptec_nn_variants.h"

#if defined(PTEC_NN_MVE)
#include "ptec_nn_mve.h"
#endif

#if defined(PTEC_NN_MVE) || defined(PTEC_NN_DSP)

uint32_t ptec_nn_depthwise_single_input_buffer_size(const ptec_nn_dims *filter_dims)
{
    const int32_t taps = filter_dims->h * filter_dims->w;
    const uint32_t filter_bytes = ((uint32_t)taps * (uint32_t)filter_dims->c + 3u) & ~3u;
    return filter_bytes + ptec_nn_conv_gemm_buffer_size(filter_dims->c, taps);
}

ptec_status ptec_nn_depthwise_single_input_s8(void *scratch, const ptec_nn_conv_params *params,
                                              const ptec_nn_per_channel_quant *quant,
                                              const ptec_nn_dims *input_dims, const int8_t *input,
                                              const ptec_nn_dims *filter_dims, const int8_t *filter,
                                              const int32_t *bias, const ptec_nn_dims *output_dims,
                                              int8_t *output)
{
    const int32_t channels = filter_dims->c;
    const int32_t taps = filter_dims->h * filter_dims->w;
    /* The gemm's own scratch (int32 bases first) stays 4-byte aligned. */
    int8_t *transposed = (int8_t *)scratch + ptec_nn_conv_gemm_buffer_size(channels, taps);
#if defined(PTEC_NN_MVE)
    /* Helium: eight channels of a tap per load (widened to 16 bits) and
     * per scatter store of their low bytes, to offsets 0, taps, ..,
     * 7 * taps (16-bit offsets: taps < 9362, which the scalar copy takes
     * otherwise); a predicate masks the channels past the last. A byte
     * at a time this was 10,700 of DS-CNN's first layer's instructions. */
    if (taps < 65536 / 7) {
        const uint16x8_t offsets = vmulq_n_u16(vidupq_n_u16(0, 1), (uint16_t)taps);
        for (int32_t t = 0; t < taps; ++t) {
            const int8_t *src = filter + (size_t)t * (size_t)channels;
            int8_t *dst = transposed + t;
            for (int32_t o = 0; o < channels; o += 8, src += 8, dst += 8 * (size_t)taps) {
                const mve_pred16_t valid = vctp16q((uint32_t)(channels - o));
                vstrbq_scatter_offset_p_s16(dst, offsets, vldrbq_z_s16(src, valid), valid);
            }
        }
    } else
#endif
    {
        for (int32_t t = 0; t < taps; ++t) {
            const int8_t *src = filter + (size_t)t * (size_t)channels;
            int8_t *dst = transposed + t;
            for (int32_t o = 0; o < channels; ++o, dst += taps) {
                *dst = src[o];
            }
        }
    }
    const ptec_nn_dims conv_filter = {channels, filter_dims->h, filter_dims->w, 1};
    return ptec_nn_conv_gemm_s8(scratch, params, quant, input_dims, input, &conv_filter, transposed, bias,
                                output_dims, output);
}

#else
typedef int ptec_nn_depthwise_single_input_unused; /* a translation unit must not be empty */
#endif
