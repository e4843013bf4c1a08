/* ptec::quantized_add_a16.out(Tensor self, int self_multiplier, int self_shift,
 *     Tensor other, int other_multiplier, int other_shift, int output_multiplier,
 *     int output_shift, int activation_min, int activation_max, *, Tensor(a!) out)
 * cortex_m::quantized_add with int16 operands: no zero points, 15 bits of
 * headroom instead of 20 (docs/kernels.md, "16-bit activations"). */
#include "cortex_m_args.h"

enum { ARG_SELF, ARG_SELF_MULT, ARG_SELF_SHIFT, ARG_OTHER, ARG_OTHER_MULT, ARG_OTHER_SHIFT, ARG_OUT_MULT,
       ARG_OUT_SHIFT, ARG_ACT_MIN, ARG_ACT_MAX, ARG_OUT, ARG_COUNT };

typedef struct add_state {
    ptec_nn_add_s16_params params;
    ptec_cm_broadcast_plan plan;
} add_state;

static ptec_status prepare(ptec_op *op)
{
    add_state *state = (add_state *)op->state;
    ptec_nn_add_s16_params *p = &state->params;
    ptec_tensor *self, *other, *out;
    ptec_status status = ptec_op_expect_argc(op, ARG_COUNT + 1);
    if (status == PTEC_OK) status = ptec_cm_get_tensor_of(op, ARG_SELF, PTEC_DTYPE_SHORT, &self);
    if (status == PTEC_OK) status = ptec_cm_get_tensor_of(op, ARG_OTHER, PTEC_DTYPE_SHORT, &other);
    if (status == PTEC_OK) status = ptec_cm_get_out_of(op, PTEC_DTYPE_SHORT, &out);
    if (status == PTEC_OK) status = ptec_cm_get_requant(op, ARG_SELF_MULT, &p->large_quant);
    if (status == PTEC_OK) status = ptec_cm_get_requant(op, ARG_OTHER_MULT, &p->small_quant);
    if (status == PTEC_OK) status = ptec_cm_get_requant(op, ARG_OUT_MULT, &p->output_quant);
    if (status == PTEC_OK) status = ptec_cm_get_activation_s16(op, ARG_ACT_MIN, ARG_ACT_MAX, &p->activation);
    if (status == PTEC_OK) status = ptec_cm_plan_channel_broadcast(op, self, other, out, ARG_OTHER, &state->plan);
    if (status != PTEC_OK) {
        return status;
    }
    p->left_shift = 15;
    if (state->plan.swap) { /* addition commutes: swap the per-input pairs with the pointers */
        const ptec_nn_quant q = p->large_quant;
        p->large_quant = p->small_quant;
        p->small_quant = q;
    }
    op->scratch_bytes = 0;
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const add_state *state = (const add_state *)op->state;
    const int16_t *self = ptec_cm_in16(op, ARG_SELF), *other = ptec_cm_in16(op, ARG_OTHER);
    return ptec_nn_add_s16(state->plan.swap ? other : self, state->plan.swap ? self : other, state->plan.count,
                           state->plan.small_count, ptec_cm_out16(op), &state->params);
}

const ptec_kernel ptec_kernel_ptec_quantized_add_a16_out = {"ptec::quantized_add_a16.out", sizeof(add_state),
                                                            prepare, run};
