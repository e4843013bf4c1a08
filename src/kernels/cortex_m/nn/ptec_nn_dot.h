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

/* acc[i] += (x[i] + offset) * w[i] over n lanes. */
void ptec_nn_mac_s8(uint32_t *acc, const int8_t *x, int32_t offset, const int8_t *w, size_t n);

/* acc[i] += v * w[i] over n lanes (one input value for every lane). */
void ptec_nn_mac_scalar_s8(uint32_t *acc, int32_t v, const int8_t *w, size_t n);

#endif
