/* cortex_m::quantize_per_tensor.out(Tensor input, float scale, int zero_point,
 *     int quant_min, int quant_max, ScalarType dtype, *, Tensor(a!) out)
 * float32 -> int8 (dtype CHAR) or int16 (dtype SHORT); cortex-m-ops.md §3.1. */
#include "cortex_m_args.h"

enum { ARG_INPUT, ARG_SCALE, ARG_ZERO_POINT, ARG_QUANT_MIN, ARG_QUANT_MAX, ARG_DTYPE, ARG_OUT, ARG_COUNT };

typedef struct quantize_state {
    ptec_nn_quantize_params params;
    uint32_t count;
    bool int16_output;
} quantize_state;

static ptec_status prepare(ptec_op *op)
{
    quantize_state *state = (quantize_state *)op->state;
    ptec_tensor *input;
    ptec_tensor *out;
    int32_t dtype;
    ptec_status status = ptec_op_expect_argc(op, ARG_COUNT + 1);
    if (status == PTEC_OK) {
        status = ptec_cm_get_tensor_of(op, ARG_INPUT, PTEC_DTYPE_FLOAT, &input);
    }
    if (status == PTEC_OK) {
        status = ptec_cm_get_quantized_dtype(op, ARG_DTYPE, &dtype);
    }
    if (status != PTEC_OK) {
        return status;
    }
    status = ptec_cm_get_out_of(op, (ptec_dtype)dtype, &out);
    if (status == PTEC_OK) {
        status = ptec_cm_get_quantize_params(op, ARG_SCALE, dtype, &state->params);
    }
    if (status != PTEC_OK) {
        return status;
    }
    if (!ptec_cm_same_layout(input, out)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_OUT, PTEC_MSG("out must have the input's sizes and dim order"));
    }
    state->count = input->numel;
    state->int16_output = dtype == PTEC_DTYPE_SHORT;
    op->scratch_bytes = 0;
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const quantize_state *state = (const quantize_state *)op->state;
    const float *input = (const float *)ptec_op_tensor(op, ARG_INPUT)->data;
    void *out = ptec_op_tensor(op, ARG_OUT)->data;
    if (state->int16_output) {
        return ptec_nn_quantize_f32_s16(input, (int16_t *)out, state->count, &state->params);
    }
    return ptec_nn_quantize_f32_s8(input, (int8_t *)out, state->count, &state->params);
}

const ptec_kernel ptec_kernel_cortex_m_quantize_per_tensor_out = {
    "cortex_m::quantize_per_tensor.out", sizeof(quantize_state), prepare, run};
