/* cortex_m::quantized_div.out(Tensor self, int self_zero_point, Tensor other,
 *     int other_zero_point, int output_zero_point, float output_scale, *, Tensor(a!) out)
 * int8 or int16, equal shapes; float32 arithmetic (cortex-m-ops.md §3.5). */
#include <math.h>

#include "cortex_m_args.h"

enum { ARG_SELF, ARG_SELF_ZP, ARG_OTHER, ARG_OTHER_ZP, ARG_OUT_ZP, ARG_OUT_SCALE, ARG_OUT, ARG_COUNT };

typedef struct div_state {
    ptec_nn_div_params params;
    uint32_t count;
    bool int16;
} div_state;

static ptec_status prepare(ptec_op *op)
{
    div_state *state = (div_state *)op->state;
    ptec_nn_div_params *p = &state->params;
    ptec_tensor *self;
    ptec_cm_binary_operands x;
    double scale;
    ptec_status status = ptec_op_expect_argc(op, ARG_COUNT + 1);
    if (status == PTEC_OK) status = ptec_op_get_tensor(op, ARG_SELF, &self);
    if (status != PTEC_OK) {
        return status;
    }
    if (self->dtype != PTEC_DTYPE_CHAR && self->dtype != PTEC_DTYPE_SHORT) {
        return ptec_op_fail(op, PTEC_INVALID_TYPE, ARG_SELF, PTEC_MSG("expected an int8 or int16 tensor"));
    }
    const ptec_dtype dtype = (ptec_dtype)self->dtype;
    status = ptec_cm_get_binary_operands(op, dtype, ARG_OTHER, ARG_OUT_ZP, &x);
    if (status == PTEC_OK) status = ptec_op_get_double(op, ARG_OUT_SCALE, &scale);
    if (status != PTEC_OK) {
        return status;
    }
    p->numerator_zero_point = x.self_zp;
    p->denominator_zero_point = x.other_zp;
    p->output_zero_point = x.out_zp;
    p->output_scale = (float)scale;
    if (!isfinite(p->output_scale)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_OUT_SCALE, PTEC_MSG("output_scale must be a finite float32"));
    }
    if (!ptec_cm_same_layout(self, x.other) || !ptec_cm_same_layout(self, x.out)) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_OTHER,
                            PTEC_MSG("quantized_div needs equal shapes and dim orders (no broadcasting)"));
    }
    state->count = self->numel;
    state->int16 = dtype == PTEC_DTYPE_SHORT;
    op->scratch_bytes = 0;
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const div_state *state = (const div_state *)op->state;
    const void *self = ptec_op_tensor(op, ARG_SELF)->data;
    const void *other = ptec_op_tensor(op, ARG_OTHER)->data;
    void *out = ptec_op_tensor(op, ARG_OUT)->data;
    if (state->int16) {
        return ptec_nn_div_s16((const int16_t *)self, (const int16_t *)other, (int16_t *)out, state->count,
                               &state->params);
    }
    return ptec_nn_div_s8((const int8_t *)self, (const int8_t *)other, (int8_t *)out, state->count,
                          &state->params);
}

const ptec_kernel ptec_kernel_cortex_m_quantized_div_out = {"cortex_m::quantized_div.out",
                                                            sizeof(div_state), prepare, run};
