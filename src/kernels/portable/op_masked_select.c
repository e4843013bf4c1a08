/* aten::masked_select.out(Tensor self, Tensor mask, *, Tensor(a!) out)
 *
 * out = the elements of self where mask is true, self and mask broadcast
 * together (NumPy rules), in row-major order of the broadcast shape, as
 * torch gives them. How many depends on the mask's values, so out is a 1-D
 * bound-dynamic tensor: its planned size is the bound (at least the
 * broadcast numel, checked at prepare) and run sets its real size. Elements
 * are copied as bytes, so an int8 program's values stay exactly on the grid.
 *
 * ptec also takes an out [1, ..., 1, bound] of rank 2 or more (every size
 * but the last exactly 1): the same elements as a row, torch's
 * `x[mask].unsqueeze(0)` or `x[mask][None, None]`, run setting
 * [1, ..., 1, count]. A static-rank program cannot give a selection a dim added in
 * front otherwise (its length would be a bound-dynamic dim other than the
 * first); upstream's kernel resizes out to 1-D and so refuses that form. */
#include <string.h>

#include "kernels/portable/broadcast.h"
#include "kernels/portable/strides.h"

typedef struct masked_select_state {
    uint8_t element_size;
    uint8_t out_rank; /* 1: [count]; more: [1, ..., 1, count] */
} masked_select_state;

/* The broadcast shape of self and mask as a row-major tensor header (its
 * sizes and dim order in the caller's arrays). False when they do not
 * broadcast or its numel does not fit in uint32. */
static bool broadcast_shape(const ptec_tensor *a, const ptec_tensor *b, int32_t *sizes, uint8_t *order,
                            ptec_tensor *shape)
{
    uint8_t rank = a->rank > b->rank ? a->rank : b->rank;
    uint64_t numel = 1;
    for (int d = 0; d < (int)rank; ++d) {
        int da = d - ((int)rank - (int)a->rank), db = d - ((int)rank - (int)b->rank);
        int32_t ea = da >= 0 ? a->sizes[da] : 1, eb = db >= 0 ? b->sizes[db] : 1;
        if (ea != eb && ea != 1 && eb != 1) {
            return false;
        }
        sizes[d] = ea == 1 ? eb : ea;
        order[d] = (uint8_t)d;
        if (sizes[d] < 0 || (sizes[d] != 0 && numel > UINT32_MAX / (uint64_t)sizes[d])) {
            return false;
        }
        numel *= (uint64_t)sizes[d];
    }
    memset(shape, 0, sizeof *shape);
    shape->sizes = sizes;
    shape->dim_order = order;
    shape->rank = rank;
    shape->numel = (uint32_t)numel;
    return true;
}

static ptec_status prepare(ptec_op *op)
{
    masked_select_state *s = op->state;
    ptec_tensor *self, *mask, *out, shape;
    int32_t sizes[PTEC_MAX_RANK];
    uint8_t order[PTEC_MAX_RANK];
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, 4u)) != PTEC_OK || (st = ptec_op_get_tensor(op, 0, &self)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, 1, &mask)) != PTEC_OK || (st = ptec_op_get_out(op, &out)) != PTEC_OK) {
        return st;
    }
    if (mask->dtype != PTEC_DTYPE_BOOL) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, 1, PTEC_MSG("mask must be bool"));
    }
    size_t es = ptec_dtype_size(self->dtype);
    if (self->dtype != out->dtype || es == 0u || es > 8u) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, 2, PTEC_MSG("out must have self's dtype"));
    }
    bool leading_ones = out->rank >= 1u;
    for (uint8_t d = 0; leading_ones && d + 1u < out->rank; ++d) {
        leading_ones = out->sizes[d] == 1;
    }
    if (!leading_ones || !(out->flags & PTEC_TENSOR_DYNAMIC) || (out->flags & PTEC_TENSOR_CONSTANT)) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, 2,
                            PTEC_MSG("out must be a 1-D bound-dynamic tensor, or [1, ..., 1, bound] (its size is "
                                     "the mask's count)"));
    }
    if (!broadcast_shape(self, mask, sizes, order, &shape)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 1, PTEC_MSG("self and mask do not broadcast"));
    }
    /* a bound's dim is non-negative: the load checked every size */
    if ((uint32_t)out->sizes[out->rank - 1u] < shape.numel) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, 2, PTEC_MSG("out's bound is smaller than self and mask broadcast"));
    }
    s->element_size = (uint8_t)es;
    s->out_rank = out->rank;
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const masked_select_state *s = op->state;
    const ptec_tensor *self = ptec_op_tensor(op, 0), *mask = ptec_op_tensor(op, 1);
    ptec_tensor *out = ptec_op_tensor(op, 2), shape;
    int32_t sizes[PTEC_MAX_RANK], index[PTEC_MAX_RANK] = {0}, sx[PTEC_MAX_RANK], sm[PTEC_MAX_RANK];
    uint8_t order[PTEC_MAX_RANK];
    /* prepare checked that these broadcast and that out's bound holds them all */
    (void)broadcast_shape(self, mask, sizes, order, &shape);
    (void)ptec_broadcast_strides(op, 0, self, &shape, sx);
    (void)ptec_broadcast_strides(op, 1, mask, &shape, sm);
    const uint8_t *x = self->data, *m = mask->data;
    uint8_t *y = out->data;
    size_t es = s->element_size, ox = 0, om = 0;
    int32_t count = 0;
    for (uint32_t i = 0; i < shape.numel; ++i) {
        if (m[om] != 0u) {
            /* memmove: a hostile plan may overlap out with self (junk, never out of bounds) */
            memmove(y + (size_t)count * es, x + ox * es, es);
            ++count;
        }
        ptec_walk_step(shape.rank, sizes, index, sx, &ox, sm, &om);
    }
    int32_t row[PTEC_MAX_RANK];
    for (uint8_t d = 0; d + 1u < s->out_rank; ++d) {
        row[d] = 1;
    }
    row[s->out_rank - 1u] = count;
    if (ptec_tensor_resize(out, row, s->out_rank) != PTEC_OK) {
        return ptec_op_fail(op, PTEC_INVALID_STATE, 2, PTEC_MSG("out's size cannot be set (not resizable)"));
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_aten_masked_select_out = {"aten::masked_select.out", sizeof(masked_select_state),
                                                         prepare, run};
