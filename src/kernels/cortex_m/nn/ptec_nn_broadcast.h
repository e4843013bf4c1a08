/* NumPy broadcasting over four right-aligned dims: an input dim that is 1
 * against a larger output dim gets stride 0, so the same element is read
 * again. */
#ifndef PTEC_NN_BROADCAST_H
#define PTEC_NN_BROADCAST_H

#include <stdbool.h>
#include <stdint.h>

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

#endif
