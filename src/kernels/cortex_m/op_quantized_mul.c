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
    ptec_tensor *self, *other, *out;
    int32_t self_zp, other_zp;
    ptec_status status = ptec_op_expect_argc(op, ARG_COUNT + 1);
    if (status == PTEC_OK) status = ptec_cm_get_tensor_of(op, ARG_SELF, PTEC_DTYPE_CHAR, &self);
    if (status == PTEC_OK) status = ptec_cm_get_tensor_of(op, ARG_OTHER, PTEC_DTYPE_CHAR, &other);
    if (status == PTEC_OK) status = ptec_cm_get_out_of(op, PTEC_DTYPE_CHAR, &out);
    if (status == PTEC_OK) status = ptec_cm_get_int_in(op, ARG_SELF_ZP, INT8_MIN, INT8_MAX, &self_zp);
    if (status == PTEC_OK) status = ptec_cm_get_int_in(op, ARG_OTHER_ZP, INT8_MIN, INT8_MAX, &other_zp);
    if (status == PTEC_OK) status = ptec_cm_get_int_in(op, ARG_OUT_ZP, INT8_MIN, INT8_MAX, &p->output_offset);
    if (status == PTEC_OK) status = ptec_op_get_int32(op, ARG_OUT_MULT, &p->output_quant.multiplier);
    if (status == PTEC_OK) status = ptec_cm_get_shift(op, ARG_OUT_SHIFT, &p->output_quant.shift);
    if (status == PTEC_OK) status = ptec_cm_plan_channel_broadcast(op, self, other, out, ARG_OTHER, &state->plan);
    if (status != PTEC_OK) {
        return status;
    }
    p->large_offset = state->plan.swap ? -other_zp : -self_zp;
    p->small_offset = state->plan.swap ? -self_zp : -other_zp;
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
