/* ptec::quantized_max_pool2d_a16.out(Tensor input, int[] kernel_size,
 *     int[] stride, int[] padding, int[] dilation, bool ceil_mode,
 *     int activation_min, int activation_max, *, Tensor(a!) out)
 * cortex_m::quantized_max_pool2d on NHWC int16 (no zero points): max over
 * the in-bounds positions, clamped; dilation must be 1 (docs/kernels.md,
 * "16-bit activations"). */
#include "cortex_m_args.h"

enum { ARG_INPUT, ARG_KERNEL, ARG_STRIDE, ARG_PADDING, ARG_DILATION, ARG_CEIL_MODE, ARG_ACT_MIN, ARG_ACT_MAX,
       ARG_OUT, ARG_COUNT };

static ptec_status prepare(ptec_op *op)
{
    ptec_cm_pool_state *state = (ptec_cm_pool_state *)op->state;
    bool ceil_mode = false;
    ptec_nn_hw dilation;
    ptec_status status = ptec_op_expect_argc(op, ARG_COUNT + 1);
    if (status == PTEC_OK) status = ptec_op_get_bool(op, ARG_CEIL_MODE, &ceil_mode);
    if (status == PTEC_OK) status = ptec_cm_get_hw(op, ARG_DILATION, 1, &dilation);
    if (status == PTEC_OK) status = ptec_cm_get_activation_s16(op, ARG_ACT_MIN, ARG_ACT_MAX, &state->params.activation);
    if (status == PTEC_OK) status = ptec_cm_prepare_pool_common_of(op, PTEC_DTYPE_SHORT, ARG_KERNEL, ceil_mode, state);
    if (status != PTEC_OK) {
        return status;
    }
    if (dilation.h != 1 || dilation.w != 1) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_DILATION, PTEC_MSG("max pooling supports dilation [1, 1] only"));
    }
    op->scratch_bytes = 0;
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const ptec_cm_pool_state *state = (const ptec_cm_pool_state *)op->state;
    return ptec_nn_maxpool_s16(&state->params, &state->input, ptec_cm_in16(op, ARG_INPUT), &state->output,
                               ptec_cm_out16(op));
}

const ptec_kernel ptec_kernel_ptec_quantized_max_pool2d_a16_out = {
    "ptec::quantized_max_pool2d_a16.out", sizeof(ptec_cm_pool_state), prepare, run};
