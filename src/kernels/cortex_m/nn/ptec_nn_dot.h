/* int8 dot products and multiply-accumulates, the inner loops of the
 * convolutions (ptec_nn_dot.c). Sums wrap modulo 2^32 as the target's
 * int32 arithmetic does. */
#ifndef PTEC_NN_DOT_H
#define PTEC_NN_DOT_H

#include <stddef.h>
#include <stdint.h>

/* sum_i x[i] * w[i] over n elements. */
uint32_t ptec_nn_dot_s8(const int8_t *x, const int8_t *w, size_t n);

/* Four dot products of one x with the rows w, w + stride, w + 2*stride and
 * w + 3*stride, added to sums[0..3]: each x byte is loaded once. */
void ptec_nn_dot4_s8(const int8_t *x, const int8_t *w, size_t stride, size_t n, uint32_t sums[4]);

/* sum_i w[i] over n elements. */
uint32_t ptec_nn_sum_s8(const int8_t *w, size_t n);

/* Depthwise taps: a rows x cols window, x and w stepping by x_col/x_row
 * and w_col/w_row bytes per tap. Lane t reads x + t*x_lane and w + t:
 * sums[t] += sum over taps of (x[...] + offset) * w[...]. x_lane is 1 for
 * a depth multiplier of 1, 0 when one input channel feeds all four lanes. */
typedef struct ptec_nn_taps {
    size_t x_col, x_row, w_col, w_row;
    int32_t rows, cols;
} ptec_nn_taps;

void ptec_nn_taps4_s8(const int8_t *x, size_t x_lane, int32_t offset, const int8_t *w,
                      const ptec_nn_taps *taps, uint32_t sums[4]);
uint32_t ptec_nn_taps1_s8(const int8_t *x, int32_t offset, const int8_t *w, const ptec_nn_taps *taps);

/* Hosts with SIMD (not Arm cores, where plain loops keep the four sums of
 * ptec_nn_taps4_s8 in registers) also take 16 lanes at a time: sums[t] =
 * the taps of lane t, t < 16, for an input offset in [-127, 128] (the
 * range the cortex_m operators accept). */
#if !defined(__ARM_ARCH)
#define PTEC_NN_TAPS_BLOCK 16
void ptec_nn_taps16_s8(const int8_t *x, size_t x_lane, int32_t offset, const int8_t *w,
                       const ptec_nn_taps *taps, uint32_t sums[PTEC_NN_TAPS_BLOCK]);
#endif

#endif
