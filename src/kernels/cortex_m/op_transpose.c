/* cortex_m::transpose.out(Tensor input, int[] perm, *, Tensor(a!) out)
 * out = input.permute(perm) for contiguous int8 tensors of rank 1..4
 * (cortex-m-ops.md §3.16). Every perm is honoured, including the rank-2
 * identity that the pinned CMSIS-NN turns into a swap. */
#include "cortex_m_args.h"

enum { ARG_INPUT, ARG_PERM, ARG_OUT, ARG_COUNT };

typedef struct transpose_state {
    int32_t sizes[4];
    int32_t perm[4];
    int32_t rank;
} transpose_state;

static ptec_status prepare(ptec_op *op)
{
    transpose_state *state = (transpose_state *)op->state;
    ptec_tensor *input, *out;
    int64_t perm[4];
    size_t count = 0;
    ptec_status status = ptec_op_expect_argc(op, ARG_COUNT + 1);
    if (status == PTEC_OK) status = ptec_cm_get_tensor_of(op, ARG_INPUT, PTEC_DTYPE_CHAR, &input);
    if (status == PTEC_OK) status = ptec_cm_get_out_of(op, PTEC_DTYPE_CHAR, &out);
    if (status == PTEC_OK) status = ptec_op_get_int_list(op, ARG_PERM, perm, 4, &count, false);
    if (status != PTEC_OK) {
        return status;
    }
    const int32_t rank = input->rank;
    if (rank < 1 || rank > 4) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_INPUT, PTEC_MSG("transpose supports rank 1 to 4"));
    }
    if (count != (size_t)rank) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_PERM, PTEC_MSG("perm must have one entry per dim"));
    }
    if (!ptec_tensor_is_contiguous(input) || !ptec_tensor_is_contiguous(out) || out->rank != rank) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, -1, PTEC_MSG("transpose needs contiguous tensors of equal rank"));
    }
    unsigned seen = 0;
    for (int32_t d = 0; d < rank; ++d) {
        const int64_t p = perm[d] < 0 ? perm[d] + rank : perm[d];
        if (p < 0 || p >= rank || (seen & (1u << p)) != 0) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_PERM, PTEC_MSG("perm must be a permutation of the dims"));
        }
        seen |= 1u << p;
        state->perm[d] = (int32_t)p;
        state->sizes[d] = input->sizes[d];
    }
    for (int32_t d = 0; d < rank; ++d) {
        if (out->sizes[d] != input->sizes[state->perm[d]]) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_OUT, PTEC_MSG("out sizes must be the permuted input sizes"));
        }
    }
    state->rank = rank;
    op->scratch_bytes = 0;
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const transpose_state *state = (const transpose_state *)op->state;
    return ptec_nn_transpose_s8(ptec_cm_in8(op, ARG_INPUT), state->sizes, state->rank, state->perm, ptec_cm_out8(op));
}

const ptec_kernel ptec_kernel_cortex_m_transpose_out = {"cortex_m::transpose.out", sizeof(transpose_state),
                                                        prepare, run};
