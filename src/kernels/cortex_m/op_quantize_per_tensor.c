/* cortex_m::quantize_per_tensor.out(Tensor input, float scale, int zero_point,
 *     int quant_min, int quant_max, ScalarType dtype, *, Tensor(a!) out)
 * float32 -> int8 (dtype CHAR) or int16 (dtype SHORT); cortex-m-ops.md §3.1. */
#include "cortex_m_args.h"

enum { ARG_INPUT, ARG_SCALE, ARG_ZERO_POINT, ARG_QUANT_MIN, ARG_QUANT_MAX, ARG_DTYPE, ARG_OUT, ARG_COUNT };

static ptec_status prepare(ptec_op *op)
{
    return ptec_cm_prepare_quantize_common(op, true, (ptec_cm_quantize_state *)op->state);
}

static ptec_status run(ptec_op *op)
{
    const ptec_cm_quantize_state *state = (const ptec_cm_quantize_state *)op->state;
    const float *input = (const float *)ptec_op_tensor(op, ARG_INPUT)->data;
    void *out = ptec_op_tensor(op, ARG_OUT)->data;
    if (state->int16) {
        return ptec_nn_quantize_f32_s16(input, (int16_t *)out, state->count, &state->params);
    }
    return ptec_nn_quantize_f32_s8(input, (int8_t *)out, state->count, &state->params);
}

const ptec_kernel ptec_kernel_cortex_m_quantize_per_tensor_out = {
    "cortex_m::quantize_per_tensor.out", sizeof(ptec_cm_quantize_state), prepare, run};
