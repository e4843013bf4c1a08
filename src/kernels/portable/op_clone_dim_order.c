/* dim_order_ops::_clone_dim_order.out(Tensor self, *, bool non_blocking=False,
 *                                     int[]? dim_order=None, Tensor(a!) out)
 * A copy that may change the physical layout (e.g. NCHW <-> NHWC). */
#include <string.h>

#include "kernels/portable/strides.h"
#include "ptec/kernel.h"

typedef struct clone_state {
    uint8_t relayout; /* 0: plain byte copy */
    uint8_t rank;
    uint8_t elem_size;
    uint32_t numel;
    uint32_t nbytes;
} clone_state; /* strides come from the tensors at run time, not from metadata */

static ptec_status prepare(ptec_op *op)
{
    clone_state *s = op->state;
    ptec_tensor *self, *out;
    bool non_blocking;
    int64_t order[PTEC_MAX_RANK];
    size_t order_len;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, 5)) != PTEC_OK || (st = ptec_op_get_tensor(op, 0, &self)) != PTEC_OK ||
        (st = ptec_op_get_bool(op, 1, &non_blocking)) != PTEC_OK ||
        (st = ptec_op_get_int_list(op, 2, order, PTEC_MAX_RANK, &order_len, true)) != PTEC_OK ||
        (st = ptec_op_get_out(op, &out)) != PTEC_OK) {
        return st;
    }
    if (non_blocking) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, 1, "non_blocking must be false");
    }
    if (self->dtype != out->dtype || !ptec_tensor_same_shape(self, out)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, -1, "out must have the dtype and sizes of self");
    }
    const uint8_t *wanted = self->dim_order;
    if (!ptec_op_arg_is_null(op, 2)) {
        if (order_len != out->rank) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 2, "dim_order length differs from the rank");
        }
        for (size_t d = 0; d < order_len; ++d) {
            if (order[d] != out->dim_order[d]) {
                return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 2, "out's dim order differs from dim_order");
            }
        }
        wanted = out->dim_order;
    }
    if (memcmp(wanted, out->dim_order, out->rank) != 0) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, -1, "out's dim order differs from self's");
    }
    memset(s, 0, sizeof *s);
    s->rank = out->rank;
    s->elem_size = (uint8_t)ptec_dtype_size(out->dtype);
    s->numel = out->numel;
    s->nbytes = out->nbytes;
    s->relayout = memcmp(self->dim_order, out->dim_order, out->rank) != 0;
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const clone_state *s = op->state;
    const uint8_t *in = ptec_op_tensor(op, 0)->data;
    uint8_t *out = ptec_op_tensor(op, op->argc - 2u)->data;
    if (!s->relayout) {
        memmove(out, in, s->nbytes);
        return PTEC_OK;
    }
    const ptec_tensor *t_in = ptec_op_tensor(op, 0);
    int32_t stride_in[PTEC_MAX_RANK], stride_out[PTEC_MAX_RANK], index[PTEC_MAX_RANK] = {0};
    ptec_physical_strides(t_in, stride_in);
    ptec_physical_strides(ptec_op_tensor(op, op->argc - 2u), stride_out);
    const int32_t *sizes = t_in->sizes;
    size_t off_in = 0, off_out = 0;
    for (uint32_t n = 0; n < s->numel; ++n) {
        memcpy(out + off_out * s->elem_size, in + off_in * s->elem_size, s->elem_size);
        for (int d = (int)s->rank - 1; d >= 0; --d) {
            if (++index[d] < sizes[d]) {
                off_in += (size_t)stride_in[d];
                off_out += (size_t)stride_out[d];
                break;
            }
            off_in -= (size_t)stride_in[d] * (size_t)(sizes[d] - 1);
            off_out -= (size_t)stride_out[d] * (size_t)(sizes[d] - 1);
            index[d] = 0;
        }
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_dim_order_clone_out = {"dim_order_ops::_clone_dim_order.out", sizeof(clone_state),
                                                     prepare, run};
