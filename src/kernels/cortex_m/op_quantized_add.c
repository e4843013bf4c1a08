/* cortex_m::quantized_add.out(Tensor self, int self_zero_point, int self_multiplier,
 *     int self_shift, Tensor other, int other_zero_point, int other_multiplier,
 *     int other_shift, int output_zero_point, int output_multiplier, int output_shift,
 *     int activation_min, int activation_max, *, Tensor(a!) out)
 * cortex-m-ops.md §3.3. Zero points arrive as true zero points (+zp). */
#include "cortex_m_args.h"

enum {
    ARG_SELF, ARG_SELF_ZP, ARG_SELF_MULT, ARG_SELF_SHIFT, ARG_OTHER, ARG_OTHER_ZP, ARG_OTHER_MULT,
    ARG_OTHER_SHIFT, ARG_OUT_ZP, ARG_OUT_MULT, ARG_OUT_SHIFT, ARG_ACT_MIN, ARG_ACT_MAX, ARG_OUT, ARG_COUNT
};

typedef struct add_state {
    ptec_nn_add_params params;
    ptec_cm_broadcast_plan plan;
} add_state;

static ptec_status prepare(ptec_op *op)
{
    add_state *state = (add_state *)op->state;
    ptec_nn_add_params *p = &state->params;
    ptec_cm_binary_operands x;
    ptec_status status = ptec_op_expect_argc(op, ARG_COUNT + 1);
    if (status == PTEC_OK) status = ptec_cm_get_binary_operands(op, PTEC_DTYPE_CHAR, ARG_OTHER, ARG_OUT_ZP, &x);
    if (status == PTEC_OK) status = ptec_cm_get_requant(op, ARG_SELF_MULT, &p->large_quant);
    if (status == PTEC_OK) status = ptec_cm_get_requant(op, ARG_OTHER_MULT, &p->small_quant);
    if (status == PTEC_OK) status = ptec_cm_get_requant(op, ARG_OUT_MULT, &p->output_quant);
    if (status == PTEC_OK) status = ptec_cm_get_activation(op, ARG_ACT_MIN, ARG_ACT_MAX, &p->activation);
    if (status == PTEC_OK) status = ptec_cm_plan_channel_broadcast(op, x.self, x.other, x.out, ARG_OTHER, &state->plan);
    if (status != PTEC_OK) {
        return status;
    }
    p->output_offset = x.out_zp;
    p->large_offset = -x.self_zp;
    p->small_offset = -x.other_zp;
    p->left_shift = 20;
    if (state->plan.swap) { /* addition commutes: swap the per-input parameters with the pointers */
        const ptec_nn_quant q = p->large_quant;
        p->large_quant = p->small_quant;
        p->small_quant = q;
        p->large_offset = -x.other_zp;
        p->small_offset = -x.self_zp;
    }
    op->scratch_bytes = 0;
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const add_state *state = (const add_state *)op->state;
    const int8_t *large, *small;
    ptec_cm_plan_operands(op, ARG_SELF, ARG_OTHER, &state->plan, &large, &small);
    return ptec_nn_add_s8(large, small, state->plan.count, state->plan.small_count, ptec_cm_out8(op), &state->params);
}

const ptec_kernel ptec_kernel_cortex_m_quantized_add_out = {"cortex_m::quantized_add.out",
                                                            sizeof(add_state), prepare, run};
