/* What the normalisation kernels (op_native_layer_norm.c,
 * op_native_group_norm.c) share: the statistics of one block of values, in
 * the documented order and in single precision, which their numpy
 * references (ptec.reference.portable) repeat operation for operation:
 *   mean = (x[0] + x[1] + ... + x[m-1]) / m, summed left to right;
 *   var  = ((x[0]-mean)^2 + ... ) / m, likewise;
 *   rstd = 1 / sqrtf(var + eps). */
#ifndef PTEC_KERNELS_PORTABLE_NORMALIZATION_H
#define PTEC_KERNELS_PORTABLE_NORMALIZATION_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "ptec/types.h"

typedef struct ptec_norm_stats {
    float mean, rstd;
} ptec_norm_stats;

static inline ptec_norm_stats ptec_norm_block_stats(const float *x, uint32_t m, float eps)
{
    const float count = (float)m;
    float sum = 0.0f;
    for (uint32_t i = 0; i < m; ++i) {
        sum += x[i];
    }
    const float mean = sum / count;
    float squares = 0.0f;
    for (uint32_t i = 0; i < m; ++i) {
        const float d = x[i] - mean;
        squares += d * d;
    }
    const ptec_norm_stats s = {mean, 1.0f / sqrtf(squares / count + eps)};
    return s;
}

/* Whether out1 and out2 (the mean and rstd outputs) are to be written: each
 * holds exactly `count` writable floats. Otherwise both must be empty (what
 * ptec's AOT writes when nothing reads them); the kernel says so. */
static inline bool ptec_norm_writes_stats(const ptec_tensor *out1, const ptec_tensor *out2, uint64_t count)
{
    return out1->numel == count && out2->numel == count && out1->dtype == PTEC_DTYPE_FLOAT &&
           out2->dtype == PTEC_DTYPE_FLOAT && !(out1->flags & PTEC_TENSOR_CONSTANT) &&
           !(out2->flags & PTEC_TENSOR_CONSTANT);
}

#endif
