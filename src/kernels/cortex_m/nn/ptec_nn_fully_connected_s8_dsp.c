/* DSP fully connected layer (Cortex-M33, M7, M4): the input and filter
 * offsets go into the operands as they are widened (SXTAB16 adds the
 * offset to both int16 halves in the same instruction that extends the
 * bytes), so that each dot product is sum (x + io)(w + fo) directly, and
 * the reference's per-row weight sums and per-input sum are not needed:
 * the same value modulo 2^32. Three output rows share each loaded word of
 * the input; the rows left over take one at a time. In the kernel_sum form
 * the input offset is already folded into kernel_sum, so only fo is added. */
#include "ptec_nn_variants.h"

#if defined(PTEC_NN_DSP)
#include "ptec_nn_dsp.h"
#include "ptec_nn_math.h"

static inline uint32_t pair(int32_t offset)
{
    return ((uint32_t)offset & 0xFFFFu) * 0x00010001u;
}

/* The filter's own words, widened with the filter offset: with the usual
 * symmetric weights (fo == 0) a plain SXTB16. */
#define WIDEN_W_EVEN(fo2, v) (with_fo ? ptec_nn_sxtab16_even(fo2, v) : ptec_nn_sxtb16_even(v))
#define WIDEN_W_ODD(fo2, v) (with_fo ? ptec_nn_sxtab16_odd(fo2, v) : ptec_nn_sxtb16_odd(v))

/* sums[r] = sum over n of (x + io)(w_r + fo), modulo 2^32, for the three
 * rows from w0. Three rows, not four: the loop's pointers, sums and
 * operands then fit the core's registers (four rows spill to the stack
 * on every step, which costs more than the extra reloads of x). */
static inline __attribute__((always_inline)) void dot3_offset_impl(const int8_t *x, const int8_t *w0,
                                                                   size_t n, int32_t io, int32_t fo,
                                                                   uint32_t sums[3], const int with_fo)
{
    const int8_t *w1 = w0 + n;
    const int8_t *w2 = w1 + n;
    const uint32_t io2 = pair(io), fo2 = pair(fo);
    int32_t s0 = 0, s1 = 0, s2 = 0;
    const int8_t *end = x + (n & ~(size_t)3);
    while (x != end) {
        const uint32_t xv = ptec_nn_load4(x);
        const int32_t xe = (int32_t)ptec_nn_sxtab16_even(io2, xv), xo = (int32_t)ptec_nn_sxtab16_odd(io2, xv);
        uint32_t v = ptec_nn_load4(w0);
        s0 = __smlad(xe, (int32_t)WIDEN_W_EVEN(fo2, v), s0);
        s0 = __smlad(xo, (int32_t)WIDEN_W_ODD(fo2, v), s0);
        v = ptec_nn_load4(w1);
        s1 = __smlad(xe, (int32_t)WIDEN_W_EVEN(fo2, v), s1);
        s1 = __smlad(xo, (int32_t)WIDEN_W_ODD(fo2, v), s1);
        v = ptec_nn_load4(w2);
        s2 = __smlad(xe, (int32_t)WIDEN_W_EVEN(fo2, v), s2);
        s2 = __smlad(xo, (int32_t)WIDEN_W_ODD(fo2, v), s2);
        x += 4;
        w0 += 4;
        w1 += 4;
        w2 += 4;
    }
    uint32_t t0 = (uint32_t)s0, t1 = (uint32_t)s1, t2 = (uint32_t)s2;
    for (size_t i = 0; i < (n & 3); ++i) {
        const int32_t v = x[i] + io;
        t0 += (uint32_t)(v * (w0[i] + fo));
        t1 += (uint32_t)(v * (w1[i] + fo));
        t2 += (uint32_t)(v * (w2[i] + fo));
    }
    sums[0] = t0;
    sums[1] = t1;
    sums[2] = t2;
}

static void dot3_offset(const int8_t *x, const int8_t *w0, size_t n, int32_t io, int32_t fo, uint32_t sums[3])
{
    if (fo == 0) {
        dot3_offset_impl(x, w0, n, io, 0, sums, 0);
    } else {
        dot3_offset_impl(x, w0, n, io, fo, sums, 1);
    }
}

static uint32_t dot_offset(const int8_t *x, const int8_t *w, size_t n, int32_t io, int32_t fo)
{
    const uint32_t io2 = pair(io), fo2 = pair(fo);
    int32_t s = 0;
    for (size_t b = n >> 2; b > 0; --b) {
        const uint32_t xv = ptec_nn_load4(x), v = ptec_nn_load4(w);
        s = __smlad((int32_t)ptec_nn_sxtab16_even(io2, xv), (int32_t)ptec_nn_sxtab16_even(fo2, v), s);
        s = __smlad((int32_t)ptec_nn_sxtab16_odd(io2, xv), (int32_t)ptec_nn_sxtab16_odd(fo2, v), s);
        x += 4;
        w += 4;
    }
    uint32_t t = (uint32_t)s;
    for (size_t i = 0; i < (n & 3); ++i) {
        t += (uint32_t)((x[i] + io) * (w[i] + fo));
    }
    return t;
}

ptec_status ptec_nn_fully_connected_s8_dsp(const ptec_nn_fc_params *params, const ptec_nn_fc_dims *dims,
                                           const int8_t *input, const int8_t *weights, const int32_t *bias,
                                           const int32_t *kernel_sum, int8_t *output)
{
    const ptec_nn_fc_params p = *params;
    const size_t n = (size_t)dims->input_features;
    const int32_t rows = dims->output_features;
    const int32_t io = kernel_sum != NULL ? 0 : p.input_offset;
    const int32_t fo = p.filter_offset;
    const int32_t *constants = kernel_sum != NULL ? kernel_sum : bias;
    const ptec_nn_requant_dsp requant = ptec_nn_requant_dsp_make(p.quant.multiplier, p.quant.shift);
    for (int32_t b = 0; b < dims->batches; ++b) {
        const int8_t *x = input + (size_t)b * n;
        int8_t *y = output + (size_t)b * (size_t)rows;
        const int8_t *w = weights;
        int32_t o = 0;
        for (; o + 3 <= rows; o += 3, w += 3 * n) {
            uint32_t sums[3];
            dot3_offset(x, w, n, io, fo, sums);
            for (int32_t r = 0; r < 3; ++r) {
                const uint32_t total = sums[r] + (constants != NULL ? (uint32_t)constants[o + r] : 0u);
                y[o + r] = ptec_nn_output_stage_dsp(ptec_nn_requantize_dsp((int32_t)total, &requant),
                                                    p.output_offset, p.activation.min, p.activation.max);
            }
        }
        for (; o < rows; ++o, w += n) {
            const uint32_t total = dot_offset(x, w, n, io, fo) + (constants != NULL ? (uint32_t)constants[o] : 0u);
            y[o] = ptec_nn_output_stage_dsp(ptec_nn_requantize_dsp((int32_t)total, &requant), p.output_offset,
                                            p.activation.min, p.activation.max);
        }
    }
    return PTEC_OK;
}

#else
typedef int ptec_nn_fully_connected_dsp_unused; /* a translation unit must not be empty */
#endif
