/* Element-wise maximum of two int8 tensors with NumPy broadcasting
 * (cortex-m-ops.md §3.7). Every index is computed from true per-dim
 * strides, so any broadcast pattern is handled, not only same-shape and
 * scalar operands. */
#include "ptec_nn.h"
#include "ptec_nn_broadcast.h"

static inline int8_t larger(int8_t x, int8_t y)
{
    return x > y ? x : y;
}

ptec_status ptec_nn_maximum_s8(const int8_t *a, const int32_t a_dims[4], const int8_t *b,
                               const int32_t b_dims[4], int8_t *output,
                               const int32_t out_dims[4])
{
    return ptec_nn_broadcast_pick_s8(a, a_dims, b, b_dims, output, out_dims, larger);
}
