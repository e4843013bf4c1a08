/* Broadcasting in the element-wise kernels. minimum/maximum: NumPy
 * broadcasting over four right-aligned dims, where an input dim that is 1
 * against a larger output dim gets stride 0, so the same element is read
 * again. add/mul: a small operand repeating along a large one. */
#ifndef PTEC_NN_BROADCAST_H
#define PTEC_NN_BROADCAST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ptec/status.h"

/* Element strides of a contiguous input of `dims` read along `out_dims`.
 * Returns false when a dim is neither equal to the output's nor 1. */
static inline bool ptec_nn_broadcast_strides(const int32_t dims[4], const int32_t out_dims[4],
                                             uint32_t strides[4])
{
    uint32_t stride = 1;
    for (int d = 3; d >= 0; --d) {
        if (dims[d] == out_dims[d]) {
            strides[d] = stride;
        } else if (dims[d] == 1) {
            strides[d] = 0;
        } else {
            return false;
        }
        stride *= (uint32_t)dims[d];
    }
    return true;
}

/* add and mul's operands: `small` repeats with period small_count along
 * `large` (element-wise when small_count == count, per channel when it is
 * C of an NHWC tensor); count > 0. */
static inline bool ptec_nn_repeat_valid(const int8_t *large, const int8_t *small, uint32_t count,
                                        uint32_t small_count, const int8_t *output)
{
    return large != NULL && small != NULL && output != NULL && small_count != 0 && count % small_count == 0;
}

/* out[i] = pick(a[...], b[...]) over the four output dims, a and b read
 * through their broadcast strides (minimum, maximum). Inlined into each
 * caller, so `pick` is a constant there, not an indirect call. */
static inline ptec_status ptec_nn_broadcast_pick_s8(const int8_t *a, const int32_t a_dims[4], const int8_t *b,
                                                    const int32_t b_dims[4], int8_t *output,
                                                    const int32_t out_dims[4], int8_t (*pick)(int8_t, int8_t))
{
    uint32_t a_strides[4];
    uint32_t b_strides[4];
    if (!ptec_nn_broadcast_strides(a_dims, out_dims, a_strides) ||
        !ptec_nn_broadcast_strides(b_dims, out_dims, b_strides)) {
        return PTEC_INVALID_ARGUMENT;
    }
    if (a == NULL || b == NULL || output == NULL) {
        return PTEC_INVALID_ARGUMENT;
    }
    uint32_t out_index = 0;
    for (int32_t i0 = 0; i0 < out_dims[0]; ++i0) {
        for (int32_t i1 = 0; i1 < out_dims[1]; ++i1) {
            for (int32_t i2 = 0; i2 < out_dims[2]; ++i2) {
                const uint32_t a_row = (uint32_t)i0 * a_strides[0] + (uint32_t)i1 * a_strides[1] +
                                       (uint32_t)i2 * a_strides[2];
                const uint32_t b_row = (uint32_t)i0 * b_strides[0] + (uint32_t)i1 * b_strides[1] +
                                       (uint32_t)i2 * b_strides[2];
                for (int32_t i3 = 0; i3 < out_dims[3]; ++i3) {
                    output[out_index++] = pick(a[a_row + (uint32_t)i3 * a_strides[3]],
                                               b[b_row + (uint32_t)i3 * b_strides[3]]);
                }
            }
        }
    }
    return PTEC_OK;
}

#endif
