/* aten::permute_copy.out(Tensor self, int[] dims, *, Tensor(a!) out)
 *
 * Any dtype; out[i_0..i_r] = self[i at dims]: out's logical dim d is self's
 * dim dims[d]. Both tensors are addressed through their own dim orders. */
#include <string.h>

#include "kernels/portable/data_movement.h"
#include "kernels/portable/portable_args.h"
#include "kernels/portable/strides.h"

typedef struct permute_state {
    uint8_t dims[PTEC_MAX_RANK];
    uint8_t rank;
} permute_state;

static ptec_status prepare(ptec_op *op)
{
    permute_state *s = op->state;
    ptec_move_list_args a;
    ptec_status st = ptec_move_prepare_list(op, &a);
    if (st != PTEC_OK) {
        return st;
    }
    if (a.count != a.self->rank) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 1, PTEC_MSG("dims must list every dim of self once"));
    }
    memset(s, 0, sizeof *s);
    uint32_t seen = 0;
    int32_t want[PTEC_MAX_RANK];
    for (size_t i = 0; i < a.count; ++i) {
        int d;
        if ((st = ptec_portable_dim(op, 1, a.list[i], a.self->rank, &d)) != PTEC_OK) {
            return st;
        }
        if (seen & (1u << d)) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 1, PTEC_MSG("dims must list every dim of self once"));
        }
        seen |= 1u << d;
        s->dims[i] = (uint8_t)d;
        want[i] = a.self->sizes[d];
    }
    s->rank = a.self->rank;
    return ptec_portable_expect_sizes(op, 2, a.out, want, a.self->rank, PTEC_MSG("out's sizes must be self's, permuted"));
}

static ptec_status run(ptec_op *op)
{
    const permute_state *s = op->state;
    const ptec_tensor *in = ptec_op_tensor(op, 0), *out = ptec_op_tensor(op, 2);
    int32_t s_in[PTEC_MAX_RANK], s_gather[PTEC_MAX_RANK], s_out[PTEC_MAX_RANK];
    ptec_physical_strides(in, s_in);
    ptec_physical_strides(out, s_out);
    for (int d = 0; d < s->rank; ++d) {
        s_gather[d] = s_in[s->dims[d]];
    }
    if (out->numel > 0) {
        ptec_copy_strided(ptec_dtype_size(out->dtype), s->rank, out->sizes, in->data, s_gather, 0, out->data, s_out, 0);
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_aten_permute_copy_out = {"aten::permute_copy.out", sizeof(permute_state), prepare, run};
