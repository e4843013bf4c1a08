/* aten::avg_pool2d.out(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0,
 *     bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None,
 *     *, Tensor(a!) out)
 *
 * Float32, NCHW or NHWC (any dim order). Each output sums the window's taps
 * inside the input in row-major order, then divides by divisor_override, or
 * by the window's size clipped to the padded input (count_include_pad), or
 * by the number of taps summed, as PyTorch's CPU kernel does. */
#include <string.h>

#include "kernels/portable/pool2d_geometry.h"
#include "kernels/portable/portable_args.h"
#include "kernels/portable/strides.h"

typedef struct avg_pool_state {
    pool2d_params p;
    uint8_t count_include_pad;
    int32_t divisor_override; /* 0: none */
} avg_pool_state;

static ptec_status prepare(ptec_op *op)
{
    avg_pool_state *s = op->state;
    ptec_tensor *self, *out;
    bool count_include_pad;
    int32_t divisor = 0;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, 9)) != PTEC_OK || (st = ptec_op_get_tensor(op, 0, &self)) != PTEC_OK ||
        (st = ptec_op_get_out(op, &out)) != PTEC_OK || (st = ptec_op_get_bool(op, 5, &count_include_pad)) != PTEC_OK ||
        (!ptec_op_arg_is_null(op, 6) && (st = ptec_op_get_int32(op, 6, &divisor)) != PTEC_OK)) {
        return st;
    }
    if (!ptec_op_arg_is_null(op, 6) && divisor == 0) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 6, PTEC_MSG("divisor_override must not be zero"));
    }
    if ((st = ptec_portable_expect_float(op, 0, self)) != PTEC_OK ||
        (st = ptec_portable_expect_float(op, 7, out)) != PTEC_OK) {
        return st;
    }
    memset(s, 0, sizeof *s);
    s->count_include_pad = count_include_pad;
    s->divisor_override = divisor;
    return ptec_pool2d_prepare(op, self, out, 7, 1, -1, 4, &s->p);
}

static ptec_status run(ptec_op *op)
{
    const avg_pool_state *s = op->state;
    const pool2d_params *p = &s->p;
    pool2d_tensors t;
    ptec_pool2d_tensors(op, 7, &t);
    const float *x = t.in->data;
    float *y = t.out->data;
    for (int32_t n = 0; n < t.out->sizes[0]; ++n) {
        for (int32_t c = 0; c < t.out->sizes[1]; ++c) {
            for (int32_t oh = 0; oh < t.out->sizes[2]; ++oh) {
                for (int32_t ow = 0; ow < t.out->sizes[3]; ++ow) {
                    int32_t h0 = oh * p->stride[0] - p->padding[0], w0 = ow * p->stride[1] - p->padding[1];
                    int32_t h1 = h0 + p->kernel[0], w1 = w0 + p->kernel[1];
                    h1 = h1 < t.ih + p->padding[0] ? h1 : t.ih + p->padding[0];
                    w1 = w1 < t.iw + p->padding[1] ? w1 : t.iw + p->padding[1];
                    int32_t pool_size = (h1 - h0) * (w1 - w0);
                    h0 = h0 > 0 ? h0 : 0;
                    w0 = w0 > 0 ? w0 : 0;
                    h1 = h1 < t.ih ? h1 : t.ih;
                    w1 = w1 < t.iw ? w1 : t.iw;
                    float sum = 0.0f;
                    for (int32_t h = h0; h < h1; ++h) {
                        for (int32_t w = w0; w < w1; ++w) {
                            sum += x[ptec_pool2d_at(t.sx, n, c, h, w)];
                        }
                    }
                    int32_t divisor = s->divisor_override != 0 ? s->divisor_override
                                      : s->count_include_pad ? pool_size
                                                             : (h1 - h0) * (w1 - w0);
                    /* An empty window (only possible at a ceil_mode edge) averages to 0, as in PyTorch. */
                    y[ptec_pool2d_at(t.sy, n, c, oh, ow)] = (h0 >= h1 || w0 >= w1) ? 0.0f : sum / (float)divisor;
                }
            }
        }
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_aten_avg_pool2d_out = {"aten::avg_pool2d.out", sizeof(avg_pool_state), prepare, run};
