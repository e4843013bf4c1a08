/* Element strides of a tensor, per logical dimension, from its dim order. */
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

#endif
