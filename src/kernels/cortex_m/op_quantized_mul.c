/* cortex_m::quantized_mul.out(Tensor self, int self_zero_point, Tensor other,
 *     int other_zero_point, int output_zero_point, int output_multiplier,
 *     int output_shift, *, Tensor(a!) out)
 * cortex-m-ops.md §3.4: activation range fixed at [-128, 127]. */
#include "cortex_m_args.h"

enum { ARG_SELF, ARG_SELF_ZP, ARG_OTHER, ARG_OTHER_ZP, ARG_OUT_ZP, ARG_OUT_MULT, ARG_OUT_SHIFT, ARG_OUT, ARG_COUNT };

typedef struct mul_state {
    ptec_nn_mul_params params;
    ptec_cm_broadcast_plan plan;
} mul_state;

static ptec_status prepare(ptec_op *op)
{
    mul_state *state = (mul_state *)op->state;
    ptec_nn_mul_params *p = &state->params;
    ptec_cm_binary_operands x;
    ptec_status status = ptec_op_expect_argc(op, ARG_COUNT + 1);
    if (status == PTEC_OK) status = ptec_cm_get_binary_operands(op, PTEC_DTYPE_CHAR, ARG_OTHER, ARG_OUT_ZP, &x);
    if (status == PTEC_OK) status = ptec_cm_get_requant(op, ARG_OUT_MULT, &p->output_quant);
    if (status == PTEC_OK) status = ptec_cm_plan_channel_broadcast(op, x.self, x.other, x.out, ARG_OTHER, &state->plan);
    if (status != PTEC_OK) {
        return status;
    }
    p->output_offset = x.out_zp;
    p->large_offset = state->plan.swap ? -x.other_zp : -x.self_zp;
    p->small_offset = state->plan.swap ? -x.self_zp : -x.other_zp;
    p->activation.min = INT8_MIN;
    p->activation.max = INT8_MAX;
    op->scratch_bytes = 0;
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const mul_state *state = (const mul_state *)op->state;
    const int8_t *large, *small;
    ptec_cm_plan_operands(op, ARG_SELF, ARG_OTHER, &state->plan, &large, &small);
    return ptec_nn_mul_s8(large, small, state->plan.count, state->plan.small_count, ptec_cm_out8(op), &state->params);
}

const ptec_kernel ptec_kernel_cortex_m_quantized_mul_out = {"cortex_m::quantized_mul.out",
                                                            sizeof(mul_state), prepare, run};
