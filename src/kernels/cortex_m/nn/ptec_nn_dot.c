/* The inner loops of the convolutions (declared in ptec_nn_dot.h).
 *
 * They live in their own file so that each gets the whole register file:
 * inlined into a convolution's loop nest they spill on Cortex-M.
 *
 * Two portable shapes, chosen at compile time. Where compilers vectorize
 * (hosts with SIMD at -O2), fixed 16-element blocks become SIMD code. On
 * Cortex-M, where the reference is built with -Os and nothing vectorizes,
 * plain loops keep every accumulator and pointer in a register. The DSP
 * and Helium builds replace the dot products and sums of the second shape
 * (ptec_nn_dot_dsp.c, ptec_nn_dot_mve.c). */
#include "ptec_nn_dot.h"
#include "ptec_nn_isa.h"

/* Depthwise tap loops have short, strided runs: the same plain shape on
 * every machine. The offset is added to each input value (there are at
 * most four per tap), which keeps border pixels as cheap as inner ones. */
void ptec_nn_taps4_s8(const int8_t *x, size_t x_lane, int32_t offset, const int8_t *w,
                      const ptec_nn_taps *taps, uint32_t sums[4])
{
    const size_t x_col = taps->x_col, w_col = taps->w_col;
    const int32_t cols = taps->cols;
    uint32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (int32_t r = 0; r < taps->rows; ++r) {
        const int8_t *xp = x + (size_t)r * taps->x_row;
        const int8_t *wp = w + (size_t)r * taps->w_row;
        if (x_lane == 0) { /* one input channel feeds all four lanes */
            for (int32_t c = 0; c < cols; ++c) {
                const int32_t v = *xp + offset;
                s0 += (uint32_t)(v * wp[0]);
                s1 += (uint32_t)(v * wp[1]);
                s2 += (uint32_t)(v * wp[2]);
                s3 += (uint32_t)(v * wp[3]);
                xp += x_col;
                wp += w_col;
            }
        } else {
            for (int32_t c = 0; c < cols; ++c) {
                s0 += (uint32_t)((xp[0] + offset) * wp[0]);
                s1 += (uint32_t)((xp[x_lane] + offset) * wp[1]);
                s2 += (uint32_t)((xp[2 * x_lane] + offset) * wp[2]);
                s3 += (uint32_t)((xp[3 * x_lane] + offset) * wp[3]);
                xp += x_col;
                wp += w_col;
            }
        }
    }
    sums[0] += s0;
    sums[1] += s1;
    sums[2] += s2;
    sums[3] += s3;
}

uint32_t ptec_nn_taps1_s8(const int8_t *x, int32_t offset, const int8_t *w, const ptec_nn_taps *taps)
{
    uint32_t sum = 0;
    for (int32_t r = 0; r < taps->rows; ++r) {
        const int8_t *xp = x + (size_t)r * taps->x_row;
        const int8_t *wp = w + (size_t)r * taps->w_row;
        for (int32_t c = 0; c < taps->cols; ++c) {
            sum += (uint32_t)((*xp + offset) * *wp);
            xp += taps->x_col;
            wp += taps->w_col;
        }
    }
    return sum;
}

#if defined(__ARM_ARCH)

/* The DSP and Helium builds have their own dot products and sums
 * (ptec_nn_dot_dsp.c, ptec_nn_dot_mve.c). */
#if !defined(PTEC_NN_MVE) && !defined(PTEC_NN_DSP)

uint32_t ptec_nn_dot_s8(const int8_t *x, const int8_t *w, size_t n)
{
    uint32_t sum = 0;
    for (size_t i = 0; i < n; ++i) {
        sum += (uint32_t)(x[i] * w[i]);
    }
    return sum;
}

void ptec_nn_dot4_s8(const int8_t *x, const int8_t *w, size_t stride, size_t n, uint32_t sums[4])
{
    const int8_t *w0 = w;
    const int8_t *w1 = w0 + stride;
    const int8_t *w2 = w1 + stride;
    const int8_t *w3 = w2 + stride;
    uint32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (size_t i = 0; i < n; ++i) {
        const int32_t v = x[i];
        s0 += (uint32_t)(v * w0[i]);
        s1 += (uint32_t)(v * w1[i]);
        s2 += (uint32_t)(v * w2[i]);
        s3 += (uint32_t)(v * w3[i]);
    }
    sums[0] += s0;
    sums[1] += s1;
    sums[2] += s2;
    sums[3] += s3;
}

uint32_t ptec_nn_sum_s8(const int8_t *w, size_t n)
{
    uint32_t sum = 0;
    for (size_t i = 0; i < n; ++i) {
        sum += (uint32_t)w[i];
    }
    return sum;
}

#endif

#else /* blocks of 16 lanes for SIMD-capable hosts */

enum { LANES = 16 };

/* sum_i x[i] * w[i] over n elements. */
uint32_t ptec_nn_dot_s8(const int8_t *x, const int8_t *w, size_t n)
{
    uint32_t sum = 0;
    size_t i = 0;
    for (; i + LANES <= n; i += LANES) {
        int32_t block = 0; /* at most 16 * 2^14 */
        for (size_t j = 0; j < LANES; ++j) {
            block += x[i + j] * w[i + j];
        }
        sum += (uint32_t)block;
    }
    for (; i < n; ++i) {
        sum += (uint32_t)(x[i] * w[i]);
    }
    return sum;
}

/* Four dot products of one x with the rows w, w + stride, w + 2*stride and
 * w + 3*stride, added to sums[0..3]: each x byte is loaded once. */
void ptec_nn_dot4_s8(const int8_t *x, const int8_t *w, size_t stride, size_t n, uint32_t sums[4])
{
    const int8_t *w0 = w;
    const int8_t *w1 = w0 + stride;
    const int8_t *w2 = w1 + stride;
    const int8_t *w3 = w2 + stride;
    uint32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t i = 0;
    for (; i + LANES <= n; i += LANES) {
        /* Widened once to 16 bits, shared by the four rows: the products
         * of two 16-bit lanes summed in pairs are one SIMD instruction on
         * most hosts (pmaddwd on x86-64's baseline SSE2). */
        int16_t v[LANES];
        for (size_t j = 0; j < LANES; ++j) {
            v[j] = x[i + j];
        }
        int32_t b0 = 0, b1 = 0, b2 = 0, b3 = 0;
        for (size_t j = 0; j < LANES; ++j) {
            b0 += v[j] * (int16_t)w0[i + j];
            b1 += v[j] * (int16_t)w1[i + j];
            b2 += v[j] * (int16_t)w2[i + j];
            b3 += v[j] * (int16_t)w3[i + j];
        }
        s0 += (uint32_t)b0;
        s1 += (uint32_t)b1;
        s2 += (uint32_t)b2;
        s3 += (uint32_t)b3;
    }
    for (; i < n; ++i) {
        const int32_t v = x[i];
        s0 += (uint32_t)(v * w0[i]);
        s1 += (uint32_t)(v * w1[i]);
        s2 += (uint32_t)(v * w2[i]);
        s3 += (uint32_t)(v * w3[i]);
    }
    sums[0] += s0;
    sums[1] += s1;
    sums[2] += s2;
    sums[3] += s3;
}

/* sum_i w[i] over n elements. */
uint32_t ptec_nn_sum_s8(const int8_t *w, size_t n)
{
    uint32_t sum = 0;
    size_t i = 0;
    for (; i + LANES <= n; i += LANES) {
        int32_t block = 0;
        for (size_t j = 0; j < LANES; ++j) {
            block += w[i + j];
        }
        sum += (uint32_t)block;
    }
    for (; i < n; ++i) {
        sum += (uint32_t)w[i];
    }
    return sum;
}

/* Depthwise taps of 16 adjacent channels at once (see ptec_nn_dot.h). The
 * products are formed in 16 bits, which SIMD units multiply eight or more
 * at a time: with the input offset in [-127, 128], |x + offset| <= 255
 * and |w| <= 128 keep every product within int16. */
void ptec_nn_taps16_s8(const int8_t *x, size_t x_lane, int32_t offset, const int8_t *w,
                       const ptec_nn_taps *taps, uint32_t sums[PTEC_NN_TAPS_BLOCK])
{
    uint32_t s[PTEC_NN_TAPS_BLOCK] = {0};
    const int16_t off = (int16_t)offset;
    for (int32_t r = 0; r < taps->rows; ++r) {
        const int8_t *xp = x + (size_t)r * taps->x_row;
        const int8_t *wp = w + (size_t)r * taps->w_row;
        for (int32_t c = 0; c < taps->cols; ++c) {
            if (x_lane != 0) {
                for (size_t j = 0; j < PTEC_NN_TAPS_BLOCK; ++j) {
                    const int16_t v = (int16_t)(xp[j] + off);
                    s[j] += (uint32_t)(int32_t)(int16_t)(v * wp[j]);
                }
            } else {
                const int16_t v = (int16_t)(*xp + off);
                for (size_t j = 0; j < PTEC_NN_TAPS_BLOCK; ++j) {
                    s[j] += (uint32_t)(int32_t)(int16_t)(v * wp[j]);
                }
            }
            xp += taps->x_col;
            wp += taps->w_col;
        }
    }
    for (size_t j = 0; j < PTEC_NN_TAPS_BLOCK; ++j) {
        sums[j] = s[j];
    }
}

#endif
