/* aten::gather.out(Tensor self, int dim, Tensor index, *, bool sparse_grad=False, Tensor(a!) out)
 *
 * out[i][j][k] = self[index[i][j][k]][j][k] for dim 0 (likewise for the
 * other dims): each output element is the self element at the same
 * position except along dim, where index says which. index is int64 (an
 * argmax's output, usually computed in the program) of self's rank, no
 * larger than self in any other dim; out has index's sizes and self's
 * dtype (int8 in quantized graphs: the values only move, on self's grid).
 * Every index is data: all are checked against self's size along dim at
 * run time, before anything is written, and one outside [0, size) fails
 * the call with PTEC_INVALID_ARGUMENT. A 0-d tensor counts as 1-D of one
 * element, as upstream's portable kernel, whose schema this is. */
#include <string.h>

#include "kernels/portable/portable_args.h"
#include "kernels/portable/strides.h"

typedef struct gather_state {
    uint8_t dim;  /* the indexed dim of self, in [0, rank) */
    uint8_t elem; /* bytes of one element */
} gather_state;

/* A 0-d tensor's one size, as a 1-D tensor's */
static const int32_t one = 1;

static int rank_of(const ptec_tensor *t)
{
    return t->rank > 0 ? (int)t->rank : 1;
}

static const int32_t *sizes_of(const ptec_tensor *t)
{
    return t->rank > 0 ? t->sizes : &one;
}

static ptec_status prepare(ptec_op *op)
{
    gather_state *s = op->state;
    ptec_tensor *self, *index, *out;
    int64_t dim64;
    bool sparse_grad;
    int dim;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, 6)) != PTEC_OK || (st = ptec_op_get_tensor(op, 0, &self)) != PTEC_OK ||
        (st = ptec_op_get_int(op, 1, &dim64)) != PTEC_OK || (st = ptec_op_get_tensor(op, 2, &index)) != PTEC_OK ||
        (st = ptec_op_get_bool(op, 3, &sparse_grad)) != PTEC_OK || (st = ptec_op_get_out(op, &out)) != PTEC_OK) {
        return st;
    }
    if (sparse_grad) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, 3, PTEC_MSG("sparse_grad must be false"));
    }
    if (index->dtype != PTEC_DTYPE_LONG) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 2, PTEC_MSG("index must be int64"));
    }
    if (out->dtype != self->dtype) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 4, PTEC_MSG("out must have self's dtype"));
    }
    if (out->flags & PTEC_TENSOR_CONSTANT) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, 4, PTEC_MSG("out must not be a constant tensor"));
    }
    int rank = rank_of(self);
    if ((st = ptec_portable_dim(op, 1, dim64, rank, &dim)) != PTEC_OK) {
        return st;
    }
    if (rank_of(index) != rank) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 2, PTEC_MSG("index must have self's rank"));
    }
    const int32_t *xs = sizes_of(self), *is = sizes_of(index);
    for (int d = 0; d < rank; ++d) {
        if (d != dim && is[d] > xs[d]) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 2,
                                PTEC_MSG("index must be no larger than self in every dim but dim"));
        }
    }
    if (index->numel > 0 && xs[dim] == 0) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 0, PTEC_MSG("self is empty along dim"));
    }
    if ((st = ptec_portable_expect_sizes(op, 4, out, index->sizes, index->rank,
                                         PTEC_MSG("out must have index's sizes"))) != PTEC_OK) {
        return st;
    }
    for (int d = 0; d < (int)index->rank; ++d) {
        if (index->dim_order[d] != out->dim_order[d]) {
            return ptec_op_fail(op, PTEC_NOT_SUPPORTED, 4, PTEC_MSG("out must have index's dim order"));
        }
    }
    s->dim = (uint8_t)dim;
    s->elem = (uint8_t)ptec_dtype_size(self->dtype);
    return PTEC_OK;
}

static void strides_of(const ptec_tensor *t, int32_t *strides)
{
    if (t->rank > 0) {
        ptec_physical_strides(t, strides);
    } else {
        strides[0] = 1;
    }
}

/* An index that names no position of self along dim */
static bool outside(int64_t at, int64_t size)
{
    return at < 0 || at >= size;
}

static ptec_status run(ptec_op *op)
{
    const gather_state *s = op->state;
    const ptec_tensor *t_x = ptec_op_tensor(op, 0), *t_i = ptec_op_tensor(op, 2), *t_out = ptec_op_tensor(op, 4);
    const int64_t *idx = t_i->data;
    const int64_t size = sizes_of(t_x)[s->dim];
    /* The indices are data: all checked first, so a bad one leaves out
     * untouched rather than half written. */
    for (uint32_t i = 0; i < t_i->numel; ++i) {
        if (outside(idx[i], size)) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 2, PTEC_MSG("an index is outside self along dim"));
        }
    }
    if (t_i->numel == 0) {
        return PTEC_OK;
    }
    int rank = rank_of(t_x);
    int32_t sx[PTEC_MAX_RANK], si[PTEC_MAX_RANK], walk[PTEC_MAX_RANK], sx_walk[PTEC_MAX_RANK];
    strides_of(t_x, sx);
    strides_of(t_i, si);
    for (int d = 0; d < rank; ++d) {
        walk[d] = 0;
        sx_walk[d] = d == s->dim ? 0 : sx[d]; /* along dim the index, not the walk, says where */
    }
    const uint8_t *x = t_x->data;
    uint8_t *y = t_out->data;
    size_t off_i = 0, off_x = 0; /* index's (and out's: same sizes and dim order) and self's, in elements */
    const size_t elem = s->elem, along = (size_t)sx[s->dim];
    for (uint32_t n = 0; n < t_i->numel; ++n) {
        /* coordinates off dim are within self (checked in prepare); the index
         * is checked again: a hostile plan may place out over index, so the
         * elements already written can have changed the indices still to read */
        const int64_t at = idx[off_i];
        if (outside(at, size)) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 2, PTEC_MSG("an index is outside self along dim"));
        }
        memcpy(y + off_i * elem, x + (off_x + (size_t)at * along) * elem, elem);
        ptec_walk_step(rank, sizes_of(t_i), walk, si, &off_i, sx_walk, &off_x);
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_aten_gather_out = {"aten::gather.out", sizeof(gather_state), prepare, run};
