/* Element strides of a tensor, per logical dimension, from its dim order,
 * and the row-major odometer that walks logical indices with them. */
#ifndef PTEC_KERNELS_PORTABLE_STRIDES_H
#define PTEC_KERNELS_PORTABLE_STRIDES_H

#include "ptec/types.h"

/* strides[d] is the element distance between neighbours along logical dim
 * d. A zero extent counts as 1, as upstream does, so strides stay distinct. */
static inline void ptec_physical_strides(const ptec_tensor *t, int32_t *strides)
{
    int32_t stride = 1;
    for (int i = (int)t->rank - 1; i >= 0; --i) {
        uint8_t axis = t->dim_order[i];
        strides[axis] = stride;
        stride *= t->sizes[axis] > 1 ? t->sizes[axis] : 1;
    }
}

/* Moves a row-major odometer over `sizes` one element on, keeping two
 * element offsets in step (one per tensor, each with its own strides).
 * Offsets wrap through size_t on the way back, as in the binary kernels;
 * every offset they land on is in range. */
static inline void ptec_walk_step(int rank, const int32_t *sizes, int32_t *index, const int32_t *stride_a,
                                  size_t *off_a, const int32_t *stride_b, size_t *off_b)
{
    for (int d = rank - 1; d >= 0; --d) {
        if (++index[d] < sizes[d]) {
            *off_a += (size_t)stride_a[d];
            *off_b += (size_t)stride_b[d];
            return;
        }
        *off_a -= (size_t)stride_a[d] * (size_t)(sizes[d] - 1);
        *off_b -= (size_t)stride_b[d] * (size_t)(sizes[d] - 1);
        index[d] = 0;
    }
}

#endif
