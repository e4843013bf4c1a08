/* cortex_m::dequantize_per_tensor.out(Tensor input, float scale, int zero_point,
 *     int quant_min, int quant_max, ScalarType dtype, *, Tensor(a!) out)
 * int8/int16 -> float32; cortex-m-ops.md §3.2. */
#include "cortex_m_args.h"

enum { ARG_INPUT, ARG_SCALE, ARG_ZERO_POINT, ARG_QUANT_MIN, ARG_QUANT_MAX, ARG_DTYPE, ARG_OUT, ARG_COUNT };

typedef struct dequantize_state {
    ptec_nn_quantize_params params;
    uint32_t count;
    bool int16_input;
} dequantize_state;

static ptec_status prepare(ptec_op *op)
{
    dequantize_state *state = (dequantize_state *)op->state;
    ptec_tensor *input;
    ptec_tensor *out;
    int32_t dtype;
    ptec_status status = ptec_op_expect_argc(op, ARG_COUNT + 1);
    if (status == PTEC_OK) {
        status = ptec_cm_get_quantized_dtype(op, ARG_DTYPE, &dtype);
    }
    if (status != PTEC_OK) {
        return status;
    }
    status = ptec_cm_get_tensor_of(op, ARG_INPUT, (ptec_dtype)dtype, &input);
    if (status == PTEC_OK) {
        status = ptec_cm_get_out_of(op, PTEC_DTYPE_FLOAT, &out);
    }
    if (status == PTEC_OK) {
        status = ptec_cm_get_quantize_params(op, ARG_SCALE, dtype, &state->params);
    }
    if (status != PTEC_OK) {
        return status;
    }
    if (state->params.zero_point < state->params.quant_min ||
        state->params.zero_point > state->params.quant_max) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_ZERO_POINT,
                            PTEC_MSG("zero_point must lie in quant_min..quant_max"));
    }
    if (!ptec_cm_same_layout(input, out)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_OUT, PTEC_MSG("out must have the input's sizes and dim order"));
    }
    state->count = input->numel;
    state->int16_input = dtype == PTEC_DTYPE_SHORT;
    op->scratch_bytes = 0;
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const dequantize_state *state = (const dequantize_state *)op->state;
    const void *input = ptec_op_tensor(op, ARG_INPUT)->data;
    float *out = (float *)ptec_op_tensor(op, ARG_OUT)->data;
    if (state->int16_input) {
        return ptec_nn_dequantize_s16_f32((const int16_t *)input, out, state->count, &state->params);
    }
    return ptec_nn_dequantize_s8_f32((const int8_t *)input, out, state->count, &state->params);
}

const ptec_kernel ptec_kernel_cortex_m_dequantize_per_tensor_out = {
    "cortex_m::dequantize_per_tensor.out", sizeof(dequantize_state), prepare, run};
