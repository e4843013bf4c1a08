/* ptec::view_dtype.out(Tensor self, *, Tensor(a!) out)
 *
 * torch's Tensor.view(dtype): out holds self's bytes, read as out's dtype.
 * ptec carries a float value as int8 codes or fp32 and an int value as its
 * own integers, so the AOT compiler keeps the viewed value in its real
 * dtype (fp32 for a float) and this kernel copies its bytes unchanged: the
 * bit patterns torch reinterprets (NaN payloads, -0.0, denormals) arrive
 * as they are. Both tensors little-endian, as every target ptec runs on.
 *
 * The shapes follow torch 1.13's rule: elements of one size keep the
 * shape (any rank, 0-d too); a smaller out element multiplies self's last
 * size by the ratio of the sizes, a larger one divides it (which must then
 * be a multiple of the ratio); a 0-d self only keeps its size. Both
 * tensors in the default dim order and static (torch's view of a
 * non-contiguous last dim is an error, so there is no stride to honour).
 * Dtypes: the integers and floats of 1, 2, 4 and 8 bytes (no bool: a byte
 * other than 0 or 1 is no bool value). */
#include "kernels/portable/portable_args.h"

enum { ARG_SELF = 0, ARG_OUT = 1, ARG_COUNT = 3 };

typedef struct view_dtype_state {
    uint32_t nbytes; /* bytes copied: both tensors' nbytes */
} view_dtype_state;

static bool viewable(int dtype)
{
    switch (dtype) {
    case PTEC_DTYPE_BYTE:
    case PTEC_DTYPE_CHAR:
    case PTEC_DTYPE_SHORT:
    case PTEC_DTYPE_INT:
    case PTEC_DTYPE_LONG:
    case PTEC_DTYPE_FLOAT:
    case PTEC_DTYPE_DOUBLE:
        return true;
    default:
        return false;
    }
}

static ptec_status prepare(ptec_op *op)
{
    view_dtype_state *s = op->state;
    ptec_tensor *self, *out;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, ARG_COUNT)) != PTEC_OK || (st = ptec_op_get_tensor(op, ARG_SELF, &self)) != PTEC_OK ||
        (st = ptec_op_get_out(op, &out)) != PTEC_OK) {
        return st;
    }
    if (!viewable(self->dtype) || !viewable(out->dtype)) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_SELF,
                            PTEC_MSG("self and out must be integers or floats of 1, 2, 4 or 8 bytes"));
    }
    if (((self->flags | out->flags) & (PTEC_TENSOR_DYNAMIC | PTEC_TENSOR_RESIZABLE)) != 0) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_SELF, PTEC_MSG("self and out must have static sizes"));
    }
    if (!ptec_tensor_is_contiguous(self) || !ptec_tensor_is_contiguous(out)) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_SELF, PTEC_MSG("self and out must be contiguous"));
    }
    size_t from = ptec_dtype_size(self->dtype);
    size_t to = ptec_dtype_size(out->dtype);
    if (self->rank != out->rank) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_OUT, PTEC_MSG("out must have self's rank"));
    }
    int rank = self->rank;
    if (rank == 0 && from != to) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_SELF,
                            PTEC_MSG("a 0-d self is viewed only as a dtype of its element size"));
    }
    /* every size but the last is self's; the last scales by from / to (sizes are at most 2^31 - 1 and
     * element sizes at most 8, so the products fit 64 bits) */
    for (int d = 0; d + 1 < rank; ++d) {
        if (out->sizes[d] != self->sizes[d]) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_OUT, PTEC_MSG("out must have self's leading sizes"));
        }
    }
    if (rank > 0) {
        int64_t last = self->sizes[rank - 1];
        int64_t want;
        if (from >= to) {
            want = last * (int64_t)(from / to);
        } else {
            if (last % (int64_t)(to / from) != 0) {
                return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_SELF,
                                    PTEC_MSG("self's last size must be a multiple of the element size ratio"));
            }
            want = last / (int64_t)(to / from);
        }
        if ((int64_t)out->sizes[rank - 1] != want) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_OUT,
                                PTEC_MSG("out's last size must be self's scaled by the element sizes"));
        }
    }
    /* the loader sized both: the same bytes follow from the shapes, checked again as the copy's bound */
    if (self->nbytes != out->nbytes || (uint64_t)self->numel * from != self->nbytes) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_OUT, PTEC_MSG("out must hold self's bytes"));
    }
    s->nbytes = self->nbytes;
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const view_dtype_state *s = op->state;
    const ptec_tensor *self = ptec_op_tensor(op, ARG_SELF);
    ptec_tensor *out = ptec_op_tensor(op, ARG_OUT);
    if (s->nbytes > 0) {
        /* memmove: a memory plan may place out on self's bytes (then it is a no-op) */
        memmove(out->data, self->data, s->nbytes);
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_ptec_view_dtype_out = {"ptec::view_dtype.out", sizeof(view_dtype_state), prepare,
                                                     run};
