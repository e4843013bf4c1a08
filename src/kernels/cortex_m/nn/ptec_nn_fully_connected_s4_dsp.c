/* DSP fully connected layer with packed 4-bit weights (Cortex-M33, M7,
 * M4): the input offset goes into the input as it is widened (SXTAB16),
 * each block of four weights is unpacked into the int16 pairs of
 * ptec_nn_load_s4x4_dsp, and SMLAD adds (x + io) * w directly, modulo 2^32
 * as the reference does. Two output rows share each widened input word. */
#include "ptec_nn_variants.h"

#if defined(PTEC_NN_DSP)
#include "ptec_nn_dsp.h"
#include "ptec_nn_math.h"
#include "ptec_nn_s4.h"

ptec_status ptec_nn_fully_connected_s4_dsp(const ptec_nn_fc_params *params, const ptec_nn_fc_dims *dims,
                                           const int8_t *input, const int8_t *packed, const int32_t *bias,
                                           int8_t *output)
{
    const ptec_nn_fc_params p = *params;
    const size_t n = (size_t)dims->input_features;
    const int32_t rows = dims->output_features;
    const int32_t io = p.input_offset;
    const uint32_t io2 = ((uint32_t)io & 0xFFFFu) * 0x00010001u;
    const ptec_nn_requant_dsp requant = ptec_nn_requant_dsp_make(p.quant.multiplier, p.quant.shift);
    for (int32_t b = 0; b < dims->batches; ++b) {
        const int8_t *x = input + (size_t)b * n;
        int8_t *y = output + (size_t)b * (size_t)rows;
        for (int32_t o = 0; o < rows; o += 2) {
            const int two_rows = rows - o >= 2;
            size_t e0 = (size_t)o * n;
            size_t e1 = two_rows ? e0 + n : e0; /* a lone last row is computed twice */
            const int8_t *xp = x;
            int32_t s0 = 0, s1 = 0;
            for (size_t blocks = n >> 2; blocks > 0; --blocks) {
                const uint32_t xv = ptec_nn_load4(xp);
                const int32_t xe = (int32_t)ptec_nn_sxtab16_even(io2, xv), xo = (int32_t)ptec_nn_sxtab16_odd(io2, xv);
                uint32_t even, odd;
                ptec_nn_load_s4x4_dsp(packed, e0, &even, &odd);
                s0 = __smlad(xe, (int32_t)even, s0);
                s0 = __smlad(xo, (int32_t)odd, s0);
                ptec_nn_load_s4x4_dsp(packed, e1, &even, &odd);
                s1 = __smlad(xe, (int32_t)even, s1);
                s1 = __smlad(xo, (int32_t)odd, s1);
                xp += 4;
                e0 += 4;
                e1 += 4;
            }
            uint32_t t0 = (uint32_t)s0, t1 = (uint32_t)s1;
            for (size_t i = 0; i < (n & 3); ++i) {
                const int32_t v = xp[i] + io;
                t0 += (uint32_t)(v * ptec_nn_s4_at(packed, e0 + i));
                t1 += (uint32_t)(v * ptec_nn_s4_at(packed, e1 + i));
            }
            y[o] = ptec_nn_output_stage_dsp(
                ptec_nn_requantize_dsp((int32_t)(t0 + (bias != NULL ? (uint32_t)bias[o] : 0u)), &requant),
                p.output_offset, p.activation.min, p.activation.max);
            if (two_rows) {
                y[o + 1] = ptec_nn_output_stage_dsp(
                    ptec_nn_requantize_dsp((int32_t)(t1 + (bias != NULL ? (uint32_t)bias[o + 1] : 0u)), &requant),
                    p.output_offset, p.activation.min, p.activation.max);
            }
        }
    }
    return PTEC_OK;
}

#else
typedef int ptec_nn_fully_connected_s4_dsp_unused; /* a translation unit must not be empty */
#endif
