/* ptec::quantized_mul_a16.out(Tensor self, Tensor other, int output_multiplier,
 *     int output_shift, *, Tensor(a!) out)
 * cortex_m::quantized_mul with int16 operands: no zero points, activation
 * range the whole int16 range (docs/kernels.md, "16-bit activations"). */
#include "cortex_m_args.h"

enum { ARG_SELF, ARG_OTHER, ARG_OUT_MULT, ARG_OUT_SHIFT, ARG_OUT, ARG_COUNT };

typedef struct mul_state {
    ptec_nn_mul_s16_params params;
    ptec_cm_broadcast_plan plan;
} mul_state;

static ptec_status prepare(ptec_op *op)
{
    mul_state *state = (mul_state *)op->state;
    ptec_tensor *self, *other, *out;
    ptec_status status = ptec_op_expect_argc(op, ARG_COUNT + 1);
    if (status == PTEC_OK) status = ptec_cm_get_tensor_of(op, ARG_SELF, PTEC_DTYPE_SHORT, &self);
    if (status == PTEC_OK) status = ptec_cm_get_tensor_of(op, ARG_OTHER, PTEC_DTYPE_SHORT, &other);
    if (status == PTEC_OK) status = ptec_cm_get_out_of(op, PTEC_DTYPE_SHORT, &out);
    if (status == PTEC_OK) status = ptec_cm_get_requant(op, ARG_OUT_MULT, &state->params.output_quant);
    if (status == PTEC_OK) status = ptec_cm_plan_channel_broadcast(op, self, other, out, ARG_OTHER, &state->plan);
    if (status != PTEC_OK) {
        return status;
    }
    state->params.activation.min = INT16_MIN;
    state->params.activation.max = INT16_MAX;
    op->scratch_bytes = 0;
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const mul_state *state = (const mul_state *)op->state;
    const int16_t *self = ptec_cm_in16(op, ARG_SELF), *other = ptec_cm_in16(op, ARG_OTHER);
    return ptec_nn_mul_s16(state->plan.swap ? other : self, state->plan.swap ? self : other, state->plan.count,
                           state->plan.small_count, ptec_cm_out16(op), &state->params);
}

const ptec_kernel ptec_kernel_ptec_quantized_mul_a16_out = {"ptec::quantized_mul_a16.out", sizeof(mul_state),
                                                            prepare, run};
