/* aten::_softmax.out(Tensor self, int dim, bool half_to_float, *, Tensor(a!) out)
 * aten::_log_softmax.out(Tensor self, int dim, bool half_to_float, *, Tensor(a!) out)
 *
 * Float32 softmax and log-softmax along any dim of a tensor in any dim
 * order (each tensor addressed through its own strides). Per row: m = max,
 * e_i = expf(x_i - m) summed in index order; softmax writes e_i / sum,
 * log-softmax (x_i - m) - logf(sum) (upstream's op_log_softmax.cpp: the
 * same steps, never the log of a rounded probability). One file: the two
 * share every step but the last. */
#include <math.h>
#include <string.h>

#include "kernels/portable/portable_args.h"
#include "kernels/portable/strides.h"

typedef struct softmax_state {
    uint8_t dim;
    uint8_t rank;
} softmax_state;

static ptec_status prepare(ptec_op *op)
{
    softmax_state *s = op->state;
    ptec_tensor *self, *out;
    int64_t dim;
    bool half_to_float;
    int d;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, 5)) != PTEC_OK || (st = ptec_op_get_tensor(op, 0, &self)) != PTEC_OK ||
        (st = ptec_op_get_int(op, 1, &dim)) != PTEC_OK || (st = ptec_op_get_bool(op, 2, &half_to_float)) != PTEC_OK ||
        (st = ptec_op_get_out(op, &out)) != PTEC_OK) {
        return st;
    }
    if ((st = ptec_portable_expect_float(op, 0, self)) != PTEC_OK) {
        return st;
    }
    if (half_to_float) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, 2, PTEC_MSG("half_to_float must be false"));
    }
    if (self->dtype != out->dtype || !ptec_tensor_same_shape(self, out)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, -1, PTEC_MSG("out must have the dtype and sizes of self"));
    }
    /* A 0-D tensor is a row of one, as in PyTorch. */
    if (self->rank == 0 ? dim != 0 && dim != -1 : (st = ptec_portable_dim(op, 1, dim, self->rank, &d)) != PTEC_OK) {
        return st != PTEC_OK ? st : ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 1, PTEC_MSG("dim out of range for the tensor's rank"));
    }
    memset(s, 0, sizeof *s);
    s->dim = self->rank == 0 ? 0 : (uint8_t)d;
    s->rank = self->rank;
    return PTEC_OK;
}

static ptec_status run_rows(ptec_op *op, bool log_form)
{
    const softmax_state *s = op->state;
    const ptec_tensor *t_in = ptec_op_tensor(op, 0), *t_out = ptec_op_tensor(op, op->argc - 2u);
    const float *x = t_in->data;
    float *y = t_out->data;
    if (s->rank == 0) {
        y[0] = log_form ? (x[0] - x[0]) - logf(expf(x[0] - x[0])) : expf(x[0] - x[0]) / expf(x[0] - x[0]);
        return PTEC_OK;
    }
    int32_t sx[PTEC_MAX_RANK], sy[PTEC_MAX_RANK], outer[PTEC_MAX_RANK], index[PTEC_MAX_RANK] = {0};
    ptec_physical_strides(t_in, sx);
    ptec_physical_strides(t_out, sy);
    memcpy(outer, t_out->sizes, sizeof(int32_t) * s->rank);
    int32_t len = outer[s->dim];
    if (len == 0) {
        return PTEC_OK;
    }
    outer[s->dim] = 1;
    uint32_t rows = t_out->numel / (uint32_t)len;
    size_t step_x = (size_t)sx[s->dim], step_y = (size_t)sy[s->dim];
    size_t off_x = 0, off_y = 0;
    for (uint32_t r = 0; r < rows; ++r) {
        const float *xr = x + off_x;
        float *yr = y + off_y;
        float m = xr[0];
        for (int32_t i = 1; i < len; ++i) {
            float v = xr[(size_t)i * step_x];
            m = v > m ? v : m;
        }
        float sum = 0.0f;
        if (log_form) {
            for (int32_t i = 0; i < len; ++i) {
                sum += expf(xr[(size_t)i * step_x] - m);
            }
            float log_sum = logf(sum);
            for (int32_t i = 0; i < len; ++i) {
                yr[(size_t)i * step_y] = (xr[(size_t)i * step_x] - m) - log_sum;
            }
        } else {
            for (int32_t i = 0; i < len; ++i) {
                float e = expf(xr[(size_t)i * step_x] - m);
                yr[(size_t)i * step_y] = e;
                sum += e;
            }
            for (int32_t i = 0; i < len; ++i) {
                yr[(size_t)i * step_y] /= sum;
            }
        }
        ptec_walk_step(s->rank, outer, index, sx, &off_x, sy, &off_y);
    }
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    return run_rows(op, false);
}

static ptec_status run_log(ptec_op *op)
{
    return run_rows(op, true);
}

const ptec_kernel ptec_kernel_aten__softmax_out = {"aten::_softmax.out", sizeof(softmax_state), prepare, run};
const ptec_kernel ptec_kernel_aten__log_softmax_out = {"aten::_log_softmax.out", sizeof(softmax_state), prepare,
                                                       run_log};
