/* aten::linear.out(Tensor input, Tensor weight, Tensor? bias=None, *, Tensor(a!) out)
 *
 * out[..., n] = sum_k input[..., k] * weight[n, k] (+ bias[n]), float32,
 * summed in k order and the bias added last. Input, weight and out must be
 * contiguous (a flatten before a classifier makes them so). */
#include <string.h>

#include "kernels/portable/portable_args.h"

typedef struct linear_state {
    uint32_t rows;   /* product of input's leading dims */
    int32_t in_features, out_features;
    uint8_t has_bias;
} linear_state;

static ptec_status prepare(ptec_op *op)
{
    linear_state *s = op->state;
    ptec_tensor *in, *w, *bias, *out;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, 5)) != PTEC_OK || (st = ptec_op_get_tensor(op, 0, &in)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, 1, &w)) != PTEC_OK || (st = ptec_op_get_optional_tensor(op, 2, &bias)) != PTEC_OK ||
        (st = ptec_op_get_out(op, &out)) != PTEC_OK) {
        return st;
    }
    if ((st = ptec_portable_expect_float(op, 0, in)) != PTEC_OK || (st = ptec_portable_expect_float(op, 1, w)) != PTEC_OK ||
        (bias != NULL && (st = ptec_portable_expect_float(op, 2, bias)) != PTEC_OK) ||
        (st = ptec_portable_expect_float(op, 3, out)) != PTEC_OK) {
        return st;
    }
    if (in->rank < 1 || w->rank != 2) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, -1, PTEC_MSG("input must have a rank of at least 1 and weight be [out, in]"));
    }
    int32_t k = in->sizes[in->rank - 1];
    if (w->sizes[1] != k) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 1, PTEC_MSG("weight's second dim must equal input's last dim"));
    }
    int32_t want[PTEC_MAX_RANK];
    memcpy(want, in->sizes, sizeof(int32_t) * in->rank);
    want[in->rank - 1] = w->sizes[0];
    if ((st = ptec_portable_expect_sizes(op, 3, out, want, in->rank,
                                         PTEC_MSG("out must be input's sizes with the last one out_features"))) != PTEC_OK) {
        return st;
    }
    if (bias != NULL && (bias->rank != 1 || bias->sizes[0] != w->sizes[0])) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 2, PTEC_MSG("bias must be [out_features]"));
    }
    if (!ptec_tensor_is_contiguous(in) || !ptec_tensor_is_contiguous(w) || !ptec_tensor_is_contiguous(out)) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, -1, PTEC_MSG("input, weight and out must be contiguous"));
    }
    memset(s, 0, sizeof *s);
    s->rows = k > 0 ? in->numel / (uint32_t)k : (w->sizes[0] > 0 ? out->numel / (uint32_t)w->sizes[0] : 0);
    s->in_features = k;
    s->out_features = w->sizes[0];
    s->has_bias = bias != NULL;
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const linear_state *s = op->state;
    const float *x = ptec_op_tensor(op, 0)->data;
    const float *w = ptec_op_tensor(op, 1)->data;
    const float *b = s->has_bias ? (const float *)ptec_op_tensor(op, 2)->data : NULL;
    float *y = ptec_op_tensor(op, 3)->data;
    for (uint32_t r = 0; r < s->rows; ++r) {
        const float *xr = x + (size_t)r * (size_t)s->in_features;
        for (int32_t n = 0; n < s->out_features; ++n) {
            const float *wn = w + (size_t)n * (size_t)s->in_features;
            float acc = 0.0f;
            for (int32_t k = 0; k < s->in_features; ++k) {
                acc += xr[k] * wn[k];
            }
            y[(size_t)r * (size_t)s->out_features + (size_t)n] = b != NULL ? acc + b[n] : acc;
        }
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_aten_linear_out = {"aten::linear.out", sizeof(linear_state), prepare, run};
