#include "kernels/portable/pool2d_geometry.h"

#include <string.h>

#include "kernels/portable/portable_args.h"
#include "kernels/portable/strides.h"

/* PyTorch's pooling_output_shape. */
static int64_t pooled_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dilation, bool ceil_mode)
{
    int64_t num = in + 2 * pad - dilation * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
    int64_t q = num / stride;
    if (num % stride != 0 && num < 0) {
        --q; /* floor division */
    }
    int64_t out = q + 1;
    if (ceil_mode && (out - 1) * stride >= in + pad) {
        --out;
    }
    return out;
}

ptec_status ptec_pool2d_prepare(ptec_op *op, const ptec_tensor *self, const ptec_tensor *out, int out_arg,
                                size_t first, int dilation_arg, size_t ceil_arg, pool2d_params *p)
{
    static const int32_t ones[2] = {1, 1};
    bool ceil_mode;
    ptec_status st;
    memset(p, 0, sizeof *p);
    if ((st = ptec_portable_pair(op, first, NULL, p->kernel)) != PTEC_OK ||
        (st = ptec_portable_pair(op, first + 1, p->kernel, p->stride)) != PTEC_OK ||
        (st = ptec_portable_pair(op, first + 2, NULL, p->padding)) != PTEC_OK ||
        (dilation_arg >= 0 && (st = ptec_portable_pair(op, (size_t)dilation_arg, NULL, p->dilation)) != PTEC_OK) ||
        (st = ptec_op_get_bool(op, ceil_arg, &ceil_mode)) != PTEC_OK) {
        return st;
    }
    if (dilation_arg < 0) {
        memcpy(p->dilation, ones, sizeof ones);
    }
    p->ceil_mode = ceil_mode;
    if (self->rank != 4) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, 0, PTEC_MSG("self must be 4-D [N, C, H, W]"));
    }
    int32_t want[4] = {self->sizes[0], self->sizes[1], 0, 0};
    if ((int64_t)p->kernel[0] * p->kernel[1] > INT32_MAX) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, (int)first, PTEC_MSG("kernel window larger than 2^31 taps"));
    }
    for (int a = 0; a < 2; ++a) {
        if (p->kernel[a] <= 0 || p->stride[a] <= 0 || p->dilation[a] <= 0) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, -1, PTEC_MSG("kernel_size, stride and dilation must be positive"));
        }
        int64_t effective = (int64_t)p->dilation[a] * (p->kernel[a] - 1) + 1;
        if (p->padding[a] < 0 || 2 * (int64_t)p->padding[a] > effective) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, (int)first + 2,
                                PTEC_MSG("padding must be non-negative and at most half the kernel"));
        }
        if (effective > (1 << 30) || (int64_t)self->sizes[2 + a] + effective > (1 << 30)) {
            return ptec_op_fail(op, PTEC_NOT_SUPPORTED, -1, PTEC_MSG("window arithmetic exceeds 2^30"));
        }
        int64_t size = pooled_size(self->sizes[2 + a], p->kernel[a], p->padding[a], p->stride[a], p->dilation[a],
                                   ceil_mode);
        if (size <= 0) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, -1, PTEC_MSG("kernel larger than the padded input"));
        }
        want[2 + a] = (int32_t)size;
    }
    return ptec_portable_expect_sizes(op, out_arg, out, want, 4,
                                      PTEC_MSG("out must be [N, C, OH, OW] as the pooling window gives"));
}

void ptec_pool2d_tensors(const ptec_op *op, size_t out_arg, pool2d_tensors *t)
{
    t->in = ptec_op_tensor(op, 0);
    t->out = ptec_op_tensor(op, out_arg);
    ptec_physical_strides(t->in, t->sx);
    ptec_physical_strides(t->out, t->sy);
    t->ih = t->in->sizes[2];
    t->iw = t->in->sizes[3];
}
