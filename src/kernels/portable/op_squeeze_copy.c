/* aten::squeeze_copy.dims_out(Tensor self, int[] dim, *, Tensor(a!) out)
 *
 * Any dtype and dim order. Drops the listed dims that have size 1 (others
 * stay, as in PyTorch); elements keep their logical order. */
#include "kernels/portable/data_movement.h"
#include "kernels/portable/portable_args.h"

typedef struct squeeze_state {
    uint8_t unused;
} squeeze_state;

static ptec_status prepare(ptec_op *op)
{
    ptec_tensor *self, *out;
    int64_t dims[PTEC_MAX_RANK];
    size_t count;
    ptec_status st;
    if ((st = ptec_move_prepare(op, 4, &self, &out)) != PTEC_OK ||
        (st = ptec_op_get_int_list(op, 1, dims, PTEC_MAX_RANK, &count, false)) != PTEC_OK) {
        return st;
    }
    uint32_t drop = 0;
    for (size_t i = 0; i < count; ++i) {
        int d = 0;
        if (self->rank == 0 ? dims[i] != 0 && dims[i] != -1 : (st = ptec_portable_dim(op, 1, dims[i], self->rank, &d)) != PTEC_OK) {
            return st != PTEC_OK ? st : ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 1, PTEC_MSG("dim out of range for the tensor's rank"));
        }
        if (self->rank > 0 && self->sizes[d] == 1) {
            drop |= 1u << d;
        }
    }
    int32_t want[PTEC_MAX_RANK];
    int rank = 0;
    for (int d = 0; d < self->rank; ++d) {
        if (!(drop & (1u << d))) {
            want[rank++] = self->sizes[d];
        }
    }
    ((squeeze_state *)op->state)->unused = 0;
    return ptec_portable_expect_sizes(op, 2, out, want, rank, PTEC_MSG("out must be self without the squeezed dims"));
}

static ptec_status run(ptec_op *op)
{
    ptec_copy_reshape(ptec_op_tensor(op, 0), ptec_op_tensor(op, 2));
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_aten_squeeze_copy_dims_out = {"aten::squeeze_copy.dims_out", sizeof(squeeze_state),
                                                            prepare, run};
