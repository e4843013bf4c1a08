/* aten::sort.values(Tensor self, int dim=-1, bool descending=False, *,
 *     Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!), Tensor(b!))
 * aten::topk.values(Tensor self, int k, int dim=-1, bool largest=True,
 *     bool sorted=True, *, Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!), Tensor(b!))
 *
 * The elements of each row along dim in order, with their int64 positions
 * in the row: all of them (sort) or the first k (topk: the k largest or
 * smallest). self and values are both float32, both int8, both int64 or
 * both int32 (integer values a program computes: compared exactly), any dim order,
 * values and indices of one sizes and dim order. A quantized graph passes
 * its int8 values unchanged: dequantizing with a positive scale keeps their
 * order, and the values stay on self's grid.
 *
 * Equal elements keep their order in the row, for both directions: that is
 * PyTorch's stable sort, and the sort here is always stable, so it serves
 * sort.values_stable too. PyTorch leaves topk's order among equal values to
 * the implementation; this one takes the earlier element first. A NaN
 * counts as larger than every number (last ascending, first descending;
 * the largest for topk), as in PyTorch. topk's result is always sorted,
 * which sorted=False allows.
 *
 * No scratch memory: each row is built in place in values/indices by
 * insertion (the kept prefix stays sorted), so the cost is up to n * k
 * moves per row of n elements; a stable insertion never passes an equal. */
#include <math.h>
#include <string.h>

#include "kernels/portable/portable_args.h"
#include "kernels/portable/strides.h"

typedef struct sort_state {
    uint32_t n;       /* elements per row */
    uint32_t k;       /* elements kept per row */
    uint8_t dim;      /* the sorted dim (0 for a 0-d self) */
    uint8_t descending;
} sort_state;

/* The checks both schemas share: self, values, indices (arguments
 * self_arg, out_arg, out_arg + 1 and the return slot after them). */
static ptec_status prepare_common(ptec_op *op, int64_t dim64, int64_t k64, bool is_topk, int out_arg,
                                  bool descending)
{
    sort_state *s = op->state;
    ptec_tensor *self, *values, *indices;
    size_t returns;
    ptec_status st;
    if ((st = ptec_op_get_tensor(op, 0, &self)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, (size_t)out_arg, &values)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, (size_t)out_arg + 1, &indices)) != PTEC_OK ||
        (st = ptec_op_get_tensor_list(op, (size_t)out_arg + 2, &returns)) != PTEC_OK) {
        return st;
    }
    if (returns != 2) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, out_arg + 2,
                            PTEC_MSG("return slot must list values and indices"));
    }
    if ((values->flags | indices->flags) & PTEC_TENSOR_CONSTANT) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, -1, PTEC_MSG("values and indices must not be constant tensors"));
    }
    if (self->dtype != values->dtype ||
        (self->dtype != PTEC_DTYPE_FLOAT && self->dtype != PTEC_DTYPE_CHAR && self->dtype != PTEC_DTYPE_LONG &&
         self->dtype != PTEC_DTYPE_INT)) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, out_arg,
                            PTEC_MSG("self and values must both be float32, int8, int64 or int32"));
    }
    if (indices->dtype != PTEC_DTYPE_LONG) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, out_arg + 1, PTEC_MSG("indices must be int64"));
    }
    int dim = 0;
    if (self->rank > 0 && (st = ptec_portable_dim(op, is_topk ? 2 : 1, dim64, self->rank, &dim)) != PTEC_OK) {
        return st;
    }
    if (self->rank == 0 && dim64 != 0 && dim64 != -1) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, is_topk ? 2 : 1,
                            PTEC_MSG("dim out of range for the tensor's rank"));
    }
    /* A 0-d self is one row of one element. */
    int64_t n = self->rank > 0 ? self->sizes[dim] : 1;
    if (!is_topk) {
        k64 = n;
    } else if (k64 < 0 || k64 > n) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 1, PTEC_MSG("k out of range for the size of dim"));
    }
    int32_t want[PTEC_MAX_RANK];
    for (int d = 0; d < self->rank; ++d) {
        want[d] = d == dim ? (int32_t)k64 : self->sizes[d];
    }
    if ((st = ptec_portable_expect_sizes(op, out_arg, values, want, self->rank,
                                         PTEC_MSG("values' sizes do not match self's with k along dim"))) != PTEC_OK ||
        (st = ptec_portable_expect_sizes(op, out_arg + 1, indices, want, self->rank,
                                         PTEC_MSG("indices' sizes do not match values'"))) != PTEC_OK) {
        return st;
    }
    /* values and indices share one walk, so one dim order. */
    if (self->rank > 0 && memcmp(values->dim_order, indices->dim_order, self->rank) != 0) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, out_arg + 1,
                            PTEC_MSG("indices' dim order differs from values'"));
    }
    memset(s, 0, sizeof *s);
    s->n = (uint32_t)n;
    s->k = (uint32_t)k64;
    s->dim = (uint8_t)dim;
    s->descending = descending;
    return PTEC_OK;
}

static ptec_status prepare_sort(ptec_op *op)
{
    int64_t dim;
    bool descending;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, 6)) != PTEC_OK || (st = ptec_op_get_int(op, 1, &dim)) != PTEC_OK ||
        (st = ptec_op_get_bool(op, 2, &descending)) != PTEC_OK) {
        return st;
    }
    return prepare_common(op, dim, 0, false, 3, descending);
}

static ptec_status prepare_topk(ptec_op *op)
{
    int64_t k, dim;
    bool largest, sorted;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, 8)) != PTEC_OK || (st = ptec_op_get_int(op, 1, &k)) != PTEC_OK ||
        (st = ptec_op_get_int(op, 2, &dim)) != PTEC_OK || (st = ptec_op_get_bool(op, 3, &largest)) != PTEC_OK ||
        (st = ptec_op_get_bool(op, 4, &sorted)) != PTEC_OK) {
        return st;
    }
    /* sorted=False lets the order be anything: the sorted one is kept. */
    return prepare_common(op, dim, k, true, 5, largest);
}

/* Whether a goes strictly before b (never for equals: that keeps the sort
 * stable). NaN is the largest value. */
static bool before_f(float a, float b, bool descending)
{
    if (descending) {
        return (isnan(a) && !isnan(b)) || a > b;
    }
    return !isnan(a) && (isnan(b) || a < b);
}

/* An integer element (int8, int32 or int64) widened to int64: exact. */
static int64_t int_at(const ptec_tensor *t, const void *data, size_t at)
{
    switch (t->dtype) {
    case PTEC_DTYPE_CHAR: return ((const int8_t *)data)[at];
    case PTEC_DTYPE_INT: return ((const int32_t *)data)[at];
    default: return ((const int64_t *)data)[at];
    }
}

static void int_put(const ptec_tensor *t, void *data, size_t at, int64_t v)
{
    switch (t->dtype) {
    case PTEC_DTYPE_CHAR: ((int8_t *)data)[at] = (int8_t)v; break;
    case PTEC_DTYPE_INT: ((int32_t *)data)[at] = (int32_t)v; break;
    default: ((int64_t *)data)[at] = v; break;
    }
}

static bool before_int(int64_t a, int64_t b, bool descending)
{
    return descending ? a > b : a < b;
}

static ptec_status run_ordered(ptec_op *op, int out_arg)
{
    const sort_state *s = op->state;
    const ptec_tensor *t_in = ptec_op_tensor(op, 0), *t_val = ptec_op_tensor(op, (size_t)out_arg);
    int64_t *idx = ptec_op_tensor(op, (size_t)out_arg + 1)->data;
    bool desc = s->descending;
    if (s->k == 0) {
        return PTEC_OK;
    }
    int32_t sx[PTEC_MAX_RANK] = {1}, sy[PTEC_MAX_RANK] = {1}, kept_index[PTEC_MAX_RANK] = {0};
    ptec_reduce_walk w;
    uint32_t rows = 1;
    if (t_in->rank > 0) {
        ptec_physical_strides(t_in, sx);
        ptec_physical_strides(t_val, sy);
        ptec_reduce_walk_init(t_in, t_val, 1u << s->dim, true, &w);
        rows = t_in->numel / s->n;
    } else {
        w.kept = 0;
    }
    size_t step_x = (size_t)sx[s->dim], step_y = (size_t)sy[s->dim];
    size_t off_x = 0, off_y = 0;
    for (uint32_t r = 0; r < rows; ++r) {
        uint32_t filled = 0;
        for (uint32_t i = 0; i < s->n; ++i) {
            size_t at = off_x + i * step_x;
            /* p: where element i goes among the filled ones (after equals) */
            uint32_t p = filled;
            if (t_in->dtype != PTEC_DTYPE_FLOAT) {
                /* int8, int32, int64: compared as int64, moved in their own width */
                int64_t v = int_at(t_in, t_in->data, at);
                while (p > 0 && before_int(v, int_at(t_val, t_val->data, off_y + (p - 1) * step_y), desc)) {
                    --p;
                }
                if (p >= s->k) {
                    continue;
                }
                uint32_t last = filled < s->k ? filled : s->k - 1;
                for (uint32_t q = last; q > p; --q) {
                    int_put(t_val, t_val->data, off_y + q * step_y,
                            int_at(t_val, t_val->data, off_y + (q - 1) * step_y));
                    idx[off_y + q * step_y] = idx[off_y + (q - 1) * step_y];
                }
                int_put(t_val, t_val->data, off_y + p * step_y, v);
            } else {
                const float *x = t_in->data;
                float *y = t_val->data;
                while (p > 0 && before_f(x[at], y[off_y + (p - 1) * step_y], desc)) {
                    --p;
                }
                if (p >= s->k) {
                    continue;
                }
                uint32_t last = filled < s->k ? filled : s->k - 1;
                for (uint32_t q = last; q > p; --q) {
                    y[off_y + q * step_y] = y[off_y + (q - 1) * step_y];
                    idx[off_y + q * step_y] = idx[off_y + (q - 1) * step_y];
                }
                y[off_y + p * step_y] = x[at];
            }
            idx[off_y + p * step_y] = (int64_t)i;
            filled += filled < s->k;
        }
        if (w.kept > 0) {
            ptec_walk_step(w.kept, w.kept_sizes, kept_index, w.kept_sx, &off_x, w.kept_sy, &off_y);
        }
    }
    return PTEC_OK;
}

static ptec_status run_sort(ptec_op *op) { return run_ordered(op, 3); }

static ptec_status run_topk(ptec_op *op) { return run_ordered(op, 5); }

const ptec_kernel ptec_kernel_aten_sort_values = {"aten::sort.values", sizeof(sort_state), prepare_sort, run_sort};
const ptec_kernel ptec_kernel_aten_topk_values = {"aten::topk.values", sizeof(sort_state), prepare_topk, run_topk};
