/* aten::mean.out(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None,
 *     Tensor(a!) out)
 *
 * Float32 mean over a dim list (None or [] = every dim), any dim order.
 * Each output is a float32 sum over its reduced elements in row-major order
 * of the reduced dims, divided by their count. */
#include <string.h>

#include "kernels/portable/portable_args.h"
#include "kernels/portable/strides.h"

typedef struct mean_state {
    uint32_t reduced_mask; /* bit d: logical dim d of self is reduced */
    uint32_t count;        /* elements per output */
    uint8_t keepdim;
    uint8_t rank;
} mean_state;

static ptec_status prepare(ptec_op *op)
{
    mean_state *s = op->state;
    ptec_tensor *self, *out;
    int64_t dims[PTEC_MAX_RANK];
    size_t count;
    bool keepdim;
    int64_t dtype;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, 6)) != PTEC_OK || (st = ptec_op_get_tensor(op, 0, &self)) != PTEC_OK ||
        (st = ptec_op_get_int_list(op, 1, dims, PTEC_MAX_RANK, &count, true)) != PTEC_OK ||
        (st = ptec_op_get_bool(op, 2, &keepdim)) != PTEC_OK || (st = ptec_op_get_out(op, &out)) != PTEC_OK) {
        return st;
    }
    if (!ptec_op_arg_is_null(op, 3)) {
        if ((st = ptec_op_get_int(op, 3, &dtype)) != PTEC_OK) {
            return st;
        }
        if (dtype != PTEC_DTYPE_FLOAT) {
            return ptec_op_fail(op, PTEC_NOT_SUPPORTED, 3, PTEC_MSG("dtype must be None or float32"));
        }
    }
    if ((st = ptec_portable_expect_float(op, 0, self)) != PTEC_OK ||
        (st = ptec_portable_expect_float(op, 4, out)) != PTEC_OK) {
        return st;
    }
    memset(s, 0, sizeof *s);
    s->rank = self->rank;
    s->keepdim = keepdim;
    if (count == 0) {
        s->reduced_mask = self->rank == 0 ? 0u : (uint32_t)((1u << self->rank) - 1u);
    }
    for (size_t i = 0; i < count; ++i) {
        int d = 0;
        if (self->rank == 0 ? dims[i] != 0 && dims[i] != -1 : (st = ptec_portable_dim(op, 1, dims[i], self->rank, &d)) != PTEC_OK) {
            return st != PTEC_OK ? st : ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 1, PTEC_MSG("dim out of range for the tensor's rank"));
        }
        if (self->rank > 0 && (s->reduced_mask & (1u << d))) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 1, PTEC_MSG("dim lists a dimension twice"));
        }
        s->reduced_mask |= self->rank > 0 ? 1u << d : 0u;
    }
    int32_t want[PTEC_MAX_RANK];
    int rank = 0;
    uint64_t reduced = 1;
    for (int d = 0; d < self->rank; ++d) {
        if (s->reduced_mask & (1u << d)) {
            reduced *= (uint64_t)self->sizes[d];
            if (keepdim) {
                want[rank++] = 1;
            }
        } else {
            want[rank++] = self->sizes[d];
        }
    }
    if (reduced == 0) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, 1, PTEC_MSG("mean over no elements"));
    }
    s->count = (uint32_t)reduced;
    return ptec_portable_expect_sizes(op, 4, out, want, rank, PTEC_MSG("out's sizes do not match dim and keepdim"));
}

static ptec_status run(ptec_op *op)
{
    const mean_state *s = op->state;
    const ptec_tensor *t_in = ptec_op_tensor(op, 0), *t_out = ptec_op_tensor(op, 4);
    const float *x = t_in->data;
    float *y = t_out->data;
    int32_t zero[PTEC_MAX_RANK] = {0}, kept_index[PTEC_MAX_RANK] = {0};
    ptec_reduce_walk w;
    ptec_reduce_walk_init(t_in, t_out, s->reduced_mask, s->keepdim, &w);
    size_t off_x = 0, off_y = 0;
    for (uint32_t o = 0; o < t_out->numel; ++o) {
        int32_t red_index[PTEC_MAX_RANK] = {0};
        size_t at = off_x, unused = 0;
        float sum = 0.0f;
        for (uint32_t i = 0; i < s->count; ++i) {
            sum += x[at];
            ptec_walk_step(w.reduced, w.red_sizes, red_index, w.red_sx, &at, zero, &unused);
        }
        y[off_y] = sum / (float)s->count;
        ptec_walk_step(w.kept, w.kept_sizes, kept_index, w.kept_sx, &off_x, w.kept_sy, &off_y);
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_aten_mean_out = {"aten::mean.out", sizeof(mean_state), prepare, run};
