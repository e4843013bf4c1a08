/* cortex_m::quantized_max_pool2d.out(Tensor input, int[] kernel_size, int[] stride,
 *     int[] padding, int[] dilation, bool ceil_mode, int input_zero_point,
 *     int output_zero_point, int activation_min, int activation_max, *, Tensor(a!) out)
 * NHWC int8, max over in-bounds positions, clamped (cortex-m-ops.md §3.14).
 * ceil_mode is accepted (the output size says which windows exist);
 * dilation must be 1 and the zero points equal, since values pass through. */
#include "cortex_m_args.h"

enum { ARG_INPUT, ARG_KERNEL, ARG_STRIDE, ARG_PADDING, ARG_DILATION, ARG_CEIL_MODE, ARG_INPUT_ZP,
       ARG_OUTPUT_ZP, ARG_ACT_MIN, ARG_ACT_MAX, ARG_OUT, ARG_COUNT };

static ptec_status prepare(ptec_op *op)
{
    ptec_cm_pool_state *state = (ptec_cm_pool_state *)op->state;
    bool ceil_mode = false;
    ptec_nn_hw dilation;
    int32_t input_zp, output_zp;
    ptec_status status = ptec_op_expect_argc(op, ARG_COUNT + 1);
    if (status == PTEC_OK) status = ptec_op_get_bool(op, ARG_CEIL_MODE, &ceil_mode);
    if (status == PTEC_OK) status = ptec_cm_get_hw(op, ARG_DILATION, 1, &dilation);
    if (status == PTEC_OK) status = ptec_cm_get_int_in(op, ARG_INPUT_ZP, INT8_MIN, INT8_MAX, &input_zp);
    if (status == PTEC_OK) status = ptec_cm_get_int_in(op, ARG_OUTPUT_ZP, INT8_MIN, INT8_MAX, &output_zp);
    if (status == PTEC_OK) status = ptec_cm_get_activation(op, ARG_ACT_MIN, ARG_ACT_MAX, &state->params.activation);
    if (status == PTEC_OK) status = ptec_cm_prepare_pool_common(op, ARG_KERNEL, ceil_mode, state);
    if (status != PTEC_OK) {
        return status;
    }
    if (dilation.h != 1 || dilation.w != 1) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_DILATION, PTEC_MSG("max pooling supports dilation [1, 1] only"));
    }
    if (input_zp != output_zp) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_OUTPUT_ZP,
                            PTEC_MSG("input and output zero points must be equal"));
    }
    op->scratch_bytes = 0;
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const ptec_cm_pool_state *state = (const ptec_cm_pool_state *)op->state;
    return ptec_nn_maxpool_s8(&state->params, &state->input, ptec_cm_in8(op, ARG_INPUT), &state->output, ptec_cm_out8(op));
}

const ptec_kernel ptec_kernel_cortex_m_quantized_max_pool2d_out = {
    "cortex_m::quantized_max_pool2d.out", sizeof(ptec_cm_pool_state), prepare, run};
