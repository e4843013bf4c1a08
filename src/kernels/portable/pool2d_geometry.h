/* Window geometry shared by the 2-D pools: argument parsing, PyTorch's
 * output-size rule (ceil_mode included) and the check of out's sizes. */
#ifndef PTEC_KERNELS_PORTABLE_POOL2D_GEOMETRY_H
#define PTEC_KERNELS_PORTABLE_POOL2D_GEOMETRY_H

#include "ptec/kernel.h"

typedef struct pool2d_params {
    int32_t kernel[2], stride[2], padding[2], dilation[2];
    uint8_t ceil_mode;
} pool2d_params;

/* Reads kernel_size, stride (empty: the kernel), padding at args first..first+2,
 * dilation at dilation_arg (< 0: 1) and ceil_mode at ceil_arg; checks that
 * self is 4-D, the padding at most half the (dilated) kernel, and that out
 * has sizes [N, C, OH, OW]. */
ptec_status ptec_pool2d_prepare(ptec_op *op, const ptec_tensor *self, const ptec_tensor *out, int out_arg,
                                size_t first, int dilation_arg, size_t ceil_arg, pool2d_params *p);

/* What a pool's run reads first: self (arg 0) and out (out_arg), their
 * physical strides, and the input plane's height and width. */
typedef struct pool2d_tensors {
    const ptec_tensor *in, *out;
    int32_t sx[4], sy[4];
    int32_t ih, iw;
} pool2d_tensors;

void ptec_pool2d_tensors(const ptec_op *op, size_t out_arg, pool2d_tensors *t);

/* The 4-D logical element offset helper: n, c, h, w through strides. */
static inline size_t ptec_pool2d_at(const int32_t *strides, int32_t n, int32_t c, int32_t h, int32_t w)
{
    return (size_t)n * (size_t)strides[0] + (size_t)c * (size_t)strides[1] + (size_t)h * (size_t)strides[2] +
           (size_t)w * (size_t)strides[3];
}

#endif
