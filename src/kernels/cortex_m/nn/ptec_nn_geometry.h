/* Size arithmetic of the layers that run a convolution a few rows at a
 * time from scratch (ptec_nn_in_place_s8.c, ptec_nn_expand_depthwise_s8.c),
 * in 64 bits so that a file's sizes cannot wrap it. */
#ifndef PTEC_NN_GEOMETRY_H
#define PTEC_NN_GEOMETRY_H

#include <stdbool.h>
#include <stdint.h>

#include "ptec_nn.h"

static inline uint64_t ptec_nn_align16(uint64_t n)
{
    return (n + 15u) & ~(uint64_t)15u;
}

/* A convolution's out extent along one axis; -1 when the kernel does not
 * fit or the stride is not positive. */
static inline int64_t ptec_nn_out_size(int64_t size, int64_t kernel, int64_t stride, int64_t padding,
                                       int64_t dilation)
{
    const int64_t span = size + 2 * padding - dilation * (kernel - 1) - 1;
    return span < 0 || stride <= 0 ? -1 : span / stride + 1;
}

static inline uint64_t ptec_nn_elements(const ptec_nn_dims *d)
{
    return (uint64_t)d->n * (uint64_t)d->h * (uint64_t)d->w * (uint64_t)d->c;
}

static inline bool ptec_nn_dims_non_negative(const ptec_nn_dims *d)
{
    return d->n >= 0 && d->h >= 0 && d->w >= 0 && d->c >= 0;
}

#endif
