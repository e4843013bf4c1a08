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
#include <stdint.h>

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

#endif
