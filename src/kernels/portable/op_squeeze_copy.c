/* aten::squeeze_copy.dims_out(Tensor self, int[] dim, *, Tensor(a!) out)
 *
 * Any dtype and dim order. Drops the listed dims that have size 1 (others
 * stay, as in PyTorch); elements keep their logical order. */
#include "kernels/portable/data_movement.h"
#include "kernels/portable/portable_args.h"

static ptec_status prepare(ptec_op *op)
{
    ptec_move_list_args a;
    ptec_status st = ptec_move_prepare_list(op, &a);
    if (st != PTEC_OK) {
        return st;
    }
    uint32_t drop = 0;
    for (size_t i = 0; i < a.count; ++i) {
        int d = 0;
        if (a.self->rank == 0 ? a.list[i] != 0 && a.list[i] != -1 : (st = ptec_portable_dim(op, 1, a.list[i], a.self->rank, &d)) != PTEC_OK) {
            return st != PTEC_OK ? st : ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 1, PTEC_MSG("dim out of range for the tensor's rank"));
        }
        if (a.self->rank > 0 && a.self->sizes[d] == 1) {
            drop |= 1u << d;
        }
    }
    int32_t want[PTEC_MAX_RANK];
    int rank = 0;
    for (int d = 0; d < a.self->rank; ++d) {
        if (!(drop & (1u << d))) {
            want[rank++] = a.self->sizes[d];
        }
    }
    ((ptec_move_reshape_state *)op->state)->unused = 0;
    return ptec_portable_expect_sizes(op, 2, a.out, want, rank, PTEC_MSG("out must be self without the squeezed dims"));
}

const ptec_kernel ptec_kernel_aten_squeeze_copy_dims_out = {"aten::squeeze_copy.dims_out", sizeof(ptec_move_reshape_state),
                                                            prepare, ptec_move_run_reshape};
