/* aten::view_copy.out(Tensor self, SymInt[] size, *, Tensor(a!) out)
 *
 * Any dtype. The elements keep their logical (row-major) order whatever the
 * two tensors' dim orders: a channels-last [N,C,H,W] viewed as [N, C*H*W]
 * gives PyTorch's flatten. One size may be -1. */
#include "kernels/portable/data_movement.h"

static ptec_status prepare(ptec_op *op)
{
    ptec_move_list_args a;
    ptec_status st = ptec_move_prepare_list(op, &a);
    if (st != PTEC_OK) {
        return st;
    }
    int inferred = -1;
    uint64_t known = 1;
    for (size_t d = 0; d < a.count; ++d) {
        if (a.list[d] == -1 && inferred < 0) {
            inferred = (int)d;
        } else if (a.list[d] < 0 || a.list[d] > INT32_MAX) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 1, PTEC_MSG("size items must be non-negative, with at most one -1"));
        } else {
            known *= (uint64_t)a.list[d];
            if (known > UINT32_MAX) {
                return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 1, PTEC_MSG("size holds more elements than self"));
            }
        }
    }
    if (inferred >= 0) {
        if (known == 0 || a.self->numel % known != 0) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 1, PTEC_MSG("-1 cannot be inferred from self's element count"));
        }
        a.list[inferred] = (int64_t)(a.self->numel / known);
        known = a.self->numel;
    }
    if (known != a.self->numel) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 1, PTEC_MSG("size's element count differs from self's"));
    }
    if (a.out->rank != a.count) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 2, PTEC_MSG("out's sizes differ from size"));
    }
    for (size_t d = 0; d < a.count; ++d) {
        if (a.out->sizes[d] != a.list[d]) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 2, PTEC_MSG("out's sizes differ from size"));
        }
    }
    ((ptec_move_reshape_state *)op->state)->unused = 0;
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_aten_view_copy_out = {"aten::view_copy.out", sizeof(ptec_move_reshape_state), prepare, ptec_move_run_reshape};
