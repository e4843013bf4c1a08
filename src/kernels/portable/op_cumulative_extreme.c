/* aten::cummax.out(Tensor self, int dim, *, Tensor(a!) values,
 *     Tensor(b!) indices) -> (Tensor(a!), Tensor(b!))
 * aten::cummin.out(...)  (the same arguments)
 *
 * The running largest (smallest) element along dim and its int64 position
 * in the row: values[i] is the extreme of elements 0..i. self and values
 * are both float32 or both int8, all three of self's sizes, values and
 * indices of one dim order. A quantized graph passes its int8 values
 * unchanged: dequantizing with a positive scale keeps their order, and the
 * values stay on self's grid.
 *
 * PyTorch's rule (1.13, CPU), which is deterministic: an element equal to
 * the extreme so far takes its place (the position of a tie is the last
 * one), and a NaN takes it and keeps it against every number (each later
 * NaN takes it again). */
#include <math.h>
#include <string.h>

#include "kernels/portable/portable_args.h"
#include "kernels/portable/strides.h"

typedef struct running_state {
    uint32_t n;       /* elements per row */
    uint8_t dim;      /* the scanned dim (0 for a 0-d self) */
} running_state;

static ptec_status prepare(ptec_op *op)
{
    running_state *s = op->state;
    ptec_tensor *self, *values, *indices;
    int64_t dim64;
    size_t returns;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, 5)) != PTEC_OK || (st = ptec_op_get_tensor(op, 0, &self)) != PTEC_OK ||
        (st = ptec_op_get_int(op, 1, &dim64)) != PTEC_OK || (st = ptec_op_get_tensor(op, 2, &values)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, 3, &indices)) != PTEC_OK ||
        (st = ptec_op_get_tensor_list(op, 4, &returns)) != PTEC_OK) {
        return st;
    }
    if (returns != 2) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, 4, PTEC_MSG("return slot must list values and indices"));
    }
    if ((values->flags | indices->flags) & PTEC_TENSOR_CONSTANT) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, -1, PTEC_MSG("values and indices must not be constant tensors"));
    }
    if (self->dtype != values->dtype || (self->dtype != PTEC_DTYPE_FLOAT && self->dtype != PTEC_DTYPE_CHAR)) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, 2, PTEC_MSG("self and values must both be float32 or both int8"));
    }
    if (indices->dtype != PTEC_DTYPE_LONG) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 3, PTEC_MSG("indices must be int64"));
    }
    int dim = 0;
    if (self->rank > 0 && (st = ptec_portable_dim(op, 1, dim64, self->rank, &dim)) != PTEC_OK) {
        return st;
    }
    if (self->rank == 0 && dim64 != 0 && dim64 != -1) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 1, PTEC_MSG("dim out of range for the tensor's rank"));
    }
    if ((st = ptec_portable_expect_sizes(op, 2, values, self->sizes, self->rank,
                                         PTEC_MSG("values' sizes do not match self's"))) != PTEC_OK ||
        (st = ptec_portable_expect_sizes(op, 3, indices, self->sizes, self->rank,
                                         PTEC_MSG("indices' sizes do not match self's"))) != PTEC_OK) {
        return st;
    }
    /* values and indices share one walk, so one dim order. */
    if (self->rank > 0 && memcmp(values->dim_order, indices->dim_order, self->rank) != 0) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 3, PTEC_MSG("indices' dim order differs from values'"));
    }
    memset(s, 0, sizeof *s);
    /* A 0-d self is one row of one element. */
    s->n = self->rank > 0 ? (uint32_t)self->sizes[dim] : 1u;
    s->dim = (uint8_t)dim;
    return PTEC_OK;
}

/* Whether x takes the place of the extreme so far e. */
static bool takes_f(float x, float e, bool smallest)
{
    return isnan(x) || (!isnan(e) && (smallest ? x <= e : x >= e));
}

static ptec_status run_with(ptec_op *op, bool smallest)
{
    const running_state *s = op->state;
    const ptec_tensor *t_in = ptec_op_tensor(op, 0), *t_val = ptec_op_tensor(op, 2);
    int64_t *idx = ptec_op_tensor(op, 3)->data;
    if (s->n == 0) {
        return PTEC_OK;
    }
    int32_t sx[PTEC_MAX_RANK] = {1}, sy[PTEC_MAX_RANK] = {1}, kept_index[PTEC_MAX_RANK] = {0};
    ptec_reduce_walk w;
    uint32_t rows = 1;
    w.kept = 0;
    if (t_in->rank > 0) {
        ptec_physical_strides(t_in, sx);
        ptec_physical_strides(t_val, sy);
        ptec_reduce_walk_init(t_in, t_val, 1u << s->dim, true, &w);
        rows = t_in->numel / s->n;
    }
    size_t step_x = (size_t)sx[s->dim], step_y = (size_t)sy[s->dim], off_x = 0, off_y = 0;
    for (uint32_t r = 0; r < rows; ++r) {
        uint32_t best = 0;
        for (uint32_t i = 0; i < s->n; ++i) {
            size_t at = off_x + i * step_x, to = off_y + i * step_y;
            if (t_in->dtype == PTEC_DTYPE_CHAR) {
                const int8_t *x = t_in->data;
                int8_t *y = t_val->data;
                int8_t e = x[off_x + best * step_x];
                if (smallest ? x[at] <= e : x[at] >= e) {
                    best = i;
                }
                y[to] = x[off_x + best * step_x];
            } else {
                const float *x = t_in->data;
                float *y = t_val->data;
                if (takes_f(x[at], x[off_x + best * step_x], smallest)) {
                    best = i;
                }
                y[to] = x[off_x + best * step_x];
            }
            idx[to] = (int64_t)best;
        }
        if (w.kept > 0) {
            ptec_walk_step(w.kept, w.kept_sizes, kept_index, w.kept_sx, &off_x, w.kept_sy, &off_y);
        }
    }
    return PTEC_OK;
}

static ptec_status run_cummax(ptec_op *op) { return run_with(op, false); }

static ptec_status run_cummin(ptec_op *op) { return run_with(op, true); }

const ptec_kernel ptec_kernel_aten_cummax_out = {"aten::cummax.out", sizeof(running_state), prepare, run_cummax};
const ptec_kernel ptec_kernel_aten_cummin_out = {"aten::cummin.out", sizeof(running_state), prepare, run_cummin};
