/* Packed 4-bit weights (the --w4 operators, docs/kernels.md): the
 * logical int8 weights, each in [-8, 7], flattened in their usual order
 * and stored two per byte, element 2i in the low nibble of byte i and
 * element 2i+1 in the high nibble. Rows are not padded: with an odd row
 * length every other row starts in the middle of a byte. This is
 * CMSIS-NN's s4 layout (arm_convolve_s4, arm_nn_vec_mat_mult_t_s4), so
 * that the weights CMSIS-NN's tools pack run here unchanged.
 *
 * Elements are addressed by their index in the whole packed array, never
 * by a byte pointer, because a row's start is not a byte. */
#ifndef PTEC_NN_S4_H
#define PTEC_NN_S4_H

#include <stddef.h>
#include <stdint.h>

/* Element i of a packed array, sign-extended. */
static inline int32_t ptec_nn_s4_at(const int8_t *packed, size_t i)
{
    const uint32_t byte = (uint8_t)packed[i >> 1];
    const uint32_t nibble = (i & 1u) ? byte >> 4 : byte & 0xFu;
    return (int32_t)(nibble ^ 8u) - 8; /* 0..15 -> -8..7 */
}

/* sum of elements first .. first + n - 1, modulo 2^32. */
static inline uint32_t ptec_nn_sum_s4(const int8_t *packed, size_t first, size_t n)
{
    uint32_t sum = 0;
    for (size_t i = 0; i < n; ++i) {
        sum += (uint32_t)ptec_nn_s4_at(packed, first + i);
    }
    return sum;
}

/* sum_i (x[i] + offset) * w[first + i] over n elements, modulo 2^32: the
 * accumulator of a wrapping int32 loop, without its overflow. */
static inline uint32_t ptec_nn_dot_s4(const int8_t *x, int32_t offset, const int8_t *packed, size_t first,
                                      size_t n)
{
    uint32_t sum = 0;
    for (size_t i = 0; i < n; ++i) {
        sum += (uint32_t)((x[i] + offset) * ptec_nn_s4_at(packed, first + i));
    }
    return sum;
}

/* Elements 0 .. n - 1 of a packed array as int8 bytes
 * (ptec_nn_unpack_s4.c). */
void ptec_nn_unpack_s4(const int8_t *packed, size_t n, int8_t *out);

/* The byte count of n packed elements. */
static inline size_t ptec_nn_s4_bytes(size_t n)
{
    return (n + 1u) / 2u;
}

#endif
