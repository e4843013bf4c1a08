/* dim_order_ops::_clone_dim_order.out(Tensor self, *, bool non_blocking=False,
 *                                     int[]? dim_order=None, Tensor(a!) out)
 * A copy that may change the physical layout (e.g. NCHW <-> NHWC). */
#include <string.h>

#include "kernels/portable/portable_args.h"
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
    ptec_status st = ptec_portable_dim_order_copy_args(op, &self, &out);
    if (st != PTEC_OK) {
        return st;
    }
    if (self->dtype != out->dtype || !ptec_tensor_same_shape(self, out)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, -1, "out must have the dtype and sizes of self");
    }
    /* With no dim_order, out keeps self's: a plain copy (dim_order, when
     * given, is out's: the portable args checked it). */
    if (ptec_op_arg_is_null(op, 2) && memcmp(self->dim_order, out->dim_order, out->rank) != 0) {
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
