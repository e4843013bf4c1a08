/* aten::view_copy.out(Tensor self, SymInt[] size, *, Tensor(a!) out)
 *
 * Any dtype. The elements keep their logical (row-major) order whatever the
 * two tensors' dim orders: a channels-last [N,C,H,W] viewed as [N, C*H*W]
 * gives PyTorch's flatten. One size may be -1. */
#include "kernels/portable/data_movement.h"

typedef struct view_state {
    uint8_t unused; /* everything comes from the tensors */
} view_state;

static ptec_status prepare(ptec_op *op)
{
    ptec_tensor *self, *out;
    int64_t size[PTEC_MAX_RANK];
    size_t count;
    ptec_status st;
    if ((st = ptec_move_prepare(op, 4, &self, &out)) != PTEC_OK ||
        (st = ptec_op_get_int_list(op, 1, size, PTEC_MAX_RANK, &count, false)) != PTEC_OK) {
        return st;
    }
    int inferred = -1;
    uint64_t known = 1;
    for (size_t d = 0; d < count; ++d) {
        if (size[d] == -1 && inferred < 0) {
            inferred = (int)d;
        } else if (size[d] < 0 || size[d] > INT32_MAX) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 1, PTEC_MSG("size items must be non-negative, with at most one -1"));
        } else {
            known *= (uint64_t)size[d];
            if (known > UINT32_MAX) {
                return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 1, PTEC_MSG("size holds more elements than self"));
            }
        }
    }
    if (inferred >= 0) {
        if (known == 0 || self->numel % known != 0) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 1, PTEC_MSG("-1 cannot be inferred from self's element count"));
        }
        size[inferred] = (int64_t)(self->numel / known);
        known = self->numel;
    }
    if (known != self->numel) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 1, PTEC_MSG("size's element count differs from self's"));
    }
    if (out->rank != count) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 2, PTEC_MSG("out's sizes differ from size"));
    }
    for (size_t d = 0; d < count; ++d) {
        if (out->sizes[d] != size[d]) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 2, PTEC_MSG("out's sizes differ from size"));
        }
    }
    ((view_state *)op->state)->unused = 0;
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    ptec_copy_reshape(ptec_op_tensor(op, 0), ptec_op_tensor(op, 2));
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_aten_view_copy_out = {"aten::view_copy.out", sizeof(view_state), prepare, run};
