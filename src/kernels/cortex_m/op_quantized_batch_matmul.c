/* cortex_m::quantized_batch_matmul.out(Tensor lhs, int lhs_zero_point,
 *     Tensor rhs_transposed, int rhs_zero_point, int output_zero_point,
 *     int output_multiplier, int output_shift, Tensor scratch, *, Tensor(a!) out)
 * lhs [B,M,K], rhs_transposed [B,N,K], out [B,M,N] (cortex-m-ops.md §3.12).
 * The two "zero points" carry offsets (-zp) and are added. */
#include "cortex_m_args.h"

enum { ARG_LHS, ARG_LHS_ZP, ARG_RHS, ARG_RHS_ZP, ARG_OUT_ZP, ARG_OUT_MULT, ARG_OUT_SHIFT, ARG_SCRATCH, ARG_OUT,
       ARG_COUNT };

typedef struct bmm_state {
    ptec_nn_bmm_params params;
    ptec_nn_bmm_dims dims;
} bmm_state;

static bool contiguous_3d(const ptec_tensor *t)
{
    return t->rank == 3 && ptec_tensor_is_contiguous(t);
}

static ptec_status prepare(ptec_op *op)
{
    bmm_state *state = (bmm_state *)op->state;
    ptec_nn_bmm_params *p = &state->params;
    ptec_tensor *lhs, *rhs, *out;
    ptec_status status = ptec_op_expect_argc(op, ARG_COUNT + 1);
    if (status == PTEC_OK) status = ptec_cm_get_tensor_of(op, ARG_LHS, PTEC_DTYPE_CHAR, &lhs);
    if (status == PTEC_OK) status = ptec_cm_get_tensor_of(op, ARG_RHS, PTEC_DTYPE_CHAR, &rhs);
    if (status == PTEC_OK) status = ptec_cm_get_out_of(op, PTEC_DTYPE_CHAR, &out);
    if (status == PTEC_OK) status = ptec_cm_get_int_in(op, ARG_LHS_ZP, -INT8_MAX, -INT8_MIN, &p->lhs_offset);
    if (status == PTEC_OK) status = ptec_cm_get_int_in(op, ARG_RHS_ZP, -INT8_MAX, -INT8_MIN, &p->rhs_offset);
    if (status == PTEC_OK) status = ptec_cm_get_int_in(op, ARG_OUT_ZP, INT8_MIN, INT8_MAX, &p->output_offset);
    if (status == PTEC_OK) status = ptec_cm_get_requant(op, ARG_OUT_MULT, &p->quant);
    if (status == PTEC_OK) status = ptec_cm_check_scratch_arg(op, ARG_SCRATCH);
    if (status != PTEC_OK) {
        return status;
    }
    if (!contiguous_3d(lhs) || !contiguous_3d(rhs) || !contiguous_3d(out)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, -1, PTEC_MSG("lhs, rhs_transposed and out must be contiguous 3-D"));
    }
    if (rhs->sizes[0] != lhs->sizes[0] || rhs->sizes[2] != lhs->sizes[2]) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_RHS,
                            PTEC_MSG("rhs_transposed must be [B, N, K] with lhs's B and K"));
    }
    if (out->sizes[0] != lhs->sizes[0] || out->sizes[1] != lhs->sizes[1] || out->sizes[2] != rhs->sizes[1]) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_OUT, PTEC_MSG("out must be [B, M, N]"));
    }
    p->activation.min = INT8_MIN;
    p->activation.max = INT8_MAX;
    state->dims.batches = lhs->sizes[0];
    state->dims.m = lhs->sizes[1];
    state->dims.n = rhs->sizes[1];
    state->dims.k = lhs->sizes[2];
    op->scratch_bytes = ptec_nn_batch_matmul_s8_buffer_size(&state->dims);
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const bmm_state *state = (const bmm_state *)op->state;
    return ptec_nn_batch_matmul_s8(ptec_cm_scratch(op), &state->params, &state->dims, ptec_cm_in8(op, ARG_LHS),
                                   ptec_cm_in8(op, ARG_RHS), ptec_cm_out8(op));
}

const ptec_kernel ptec_kernel_cortex_m_quantized_batch_matmul_out = {
    "cortex_m::quantized_batch_matmul.out", sizeof(bmm_state), prepare, run};

/* The same kernel under ptec's name, which --ptec-runtime-only programs
 * call: their scratch arguments are empty (ptec's kernels take theirs from
 * the runtime's scratch region), so upstream's cortex_m kernel, which
 * writes CMSIS-NN's buffer there, must never be handed them. */
const ptec_kernel ptec_kernel_ptec_quantized_batch_matmul_out = {
    "ptec::quantized_batch_matmul.out", sizeof(bmm_state), prepare, run};
