/* aten::unsqueeze_copy.out(Tensor self, int dim, *, Tensor(a!) out)
 *
 * Any dtype and dim order: out is self with a size-1 dim inserted at dim
 * (in [-rank-1, rank]); elements keep their logical order. */
#include <string.h>

#include "kernels/portable/data_movement.h"
#include "kernels/portable/portable_args.h"

static ptec_status prepare(ptec_op *op)
{
    ptec_tensor *self, *out;
    int64_t dim;
    int d;
    ptec_status st;
    if ((st = ptec_move_prepare(op, 4, &self, &out)) != PTEC_OK || (st = ptec_op_get_int(op, 1, &dim)) != PTEC_OK) {
        return st;
    }
    if (self->rank >= PTEC_MAX_RANK) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, 0, PTEC_MSG("self already has the largest rank"));
    }
    if ((st = ptec_portable_dim(op, 1, dim, self->rank + 1, &d)) != PTEC_OK) {
        return st;
    }
    int32_t want[PTEC_MAX_RANK];
    memcpy(want, self->sizes, sizeof(int32_t) * (size_t)d);
    want[d] = 1;
    memcpy(want + d + 1, self->sizes + d, sizeof(int32_t) * (size_t)(self->rank - d));
    ((ptec_move_reshape_state *)op->state)->unused = 0;
    return ptec_portable_expect_sizes(op, 2, out, want, self->rank + 1, PTEC_MSG("out must be self with a 1 inserted at dim"));
}

const ptec_kernel ptec_kernel_aten_unsqueeze_copy_out = {"aten::unsqueeze_copy.out", sizeof(ptec_move_reshape_state), prepare,
                                                         ptec_move_run_reshape};
