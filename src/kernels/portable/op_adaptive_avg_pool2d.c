/* aten::_adaptive_avg_pool2d.out(Tensor self, SymInt[2] output_size, *, Tensor(a!) out)
 *
 * Float32, any dim order. Output (oh, ow) averages input rows
 * [floor(oh*H/OH), ceil((oh+1)*H/OH)) and the columns likewise: a row-major
 * float32 sum divided by the window's size, as PyTorch's CPU kernel. */
#include <string.h>

#include "kernels/portable/pool2d_geometry.h"
#include "kernels/portable/portable_args.h"
#include "kernels/portable/strides.h"

typedef struct adaptive_state {
    uint8_t unused; /* everything comes from the tensors' sizes */
} adaptive_state;

static ptec_status prepare(ptec_op *op)
{
    ptec_tensor *self, *out;
    int32_t size[2];
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, 4)) != PTEC_OK || (st = ptec_op_get_tensor(op, 0, &self)) != PTEC_OK ||
        (st = ptec_op_get_out(op, &out)) != PTEC_OK || (st = ptec_portable_pair(op, 1, NULL, size)) != PTEC_OK) {
        return st;
    }
    if ((st = ptec_portable_expect_float(op, 0, self)) != PTEC_OK ||
        (st = ptec_portable_expect_float(op, 2, out)) != PTEC_OK) {
        return st;
    }
    if (self->rank != 4) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, 0, PTEC_MSG("self must be 4-D [N, C, H, W]"));
    }
    if (size[0] <= 0 || size[1] <= 0) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 1, PTEC_MSG("output_size must be positive"));
    }
    if (self->sizes[2] == 0 || self->sizes[3] == 0) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 0, PTEC_MSG("input plane must not be empty"));
    }
    int32_t want[4] = {self->sizes[0], self->sizes[1], size[0], size[1]};
    ((adaptive_state *)op->state)->unused = 0;
    return ptec_portable_expect_sizes(op, 2, out, want, 4, PTEC_MSG("out must be [N, C, output_size]"));
}

static ptec_status run(ptec_op *op)
{
    pool2d_tensors t;
    ptec_pool2d_tensors(op, 2, &t);
    const float *x = t.in->data;
    float *y = t.out->data;
    int64_t ih = t.ih, iw = t.iw, oh_n = t.out->sizes[2], ow_n = t.out->sizes[3];
    for (int32_t n = 0; n < t.out->sizes[0]; ++n) {
        for (int32_t c = 0; c < t.out->sizes[1]; ++c) {
            for (int64_t oh = 0; oh < oh_n; ++oh) {
                int32_t h0 = (int32_t)(oh * ih / oh_n), h1 = (int32_t)(((oh + 1) * ih + oh_n - 1) / oh_n);
                for (int64_t ow = 0; ow < ow_n; ++ow) {
                    int32_t w0 = (int32_t)(ow * iw / ow_n), w1 = (int32_t)(((ow + 1) * iw + ow_n - 1) / ow_n);
                    float sum = 0.0f;
                    for (int32_t h = h0; h < h1; ++h) {
                        for (int32_t w = w0; w < w1; ++w) {
                            sum += x[ptec_pool2d_at(t.sx, n, c, h, w)];
                        }
                    }
                    y[ptec_pool2d_at(t.sy, n, c, (int32_t)oh, (int32_t)ow)] = sum / (float)((h1 - h0) * (w1 - w0));
                }
            }
        }
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_aten__adaptive_avg_pool2d_out = {"aten::_adaptive_avg_pool2d.out",
                                                               sizeof(adaptive_state), prepare, run};
