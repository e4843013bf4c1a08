/* Element-wise maximum of two int8 tensors with NumPy broadcasting
 * (cortex-m-ops.md §3.7). Every index is computed from true per-dim
 * strides, so any broadcast pattern is handled, not only same-shape and
 * scalar operands. */
#include "ptec_nn.h"
#include "ptec_nn_broadcast.h"

ptec_status ptec_nn_maximum_s8(const int8_t *a, const int32_t a_dims[4], const int8_t *b,
                               const int32_t b_dims[4], int8_t *output,
                               const int32_t out_dims[4])
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
                    const int8_t x = a[a_row + (uint32_t)i3 * a_strides[3]];
                    const int8_t y = b[b_row + (uint32_t)i3 * b_strides[3]];
                    output[out_index++] = x > y ? x : y;
                }
            }
        }
    }
    return PTEC_OK;
}
