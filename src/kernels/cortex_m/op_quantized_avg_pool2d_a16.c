/* ptec::quantized_avg_pool2d_a16.out(Tensor input, int[] kernel_size,
 *     int[] stride, int[] padding, bool ceil_mode, int multiplier, int shift,
 *     Tensor scratch, *, Tensor(a!) out)
 * cortex_m::quantized_avg_pool2d on NHWC int16 (no zero point); multiplier
 * and shift are read but unused, as in the int8 op. Windows are limited to
 * 2^16 positions so that the int32 sum cannot overflow (docs/kernels.md,
 * "16-bit activations"). */
#include "cortex_m_args.h"

enum { ARG_INPUT, ARG_KERNEL, ARG_STRIDE, ARG_PADDING, ARG_CEIL_MODE, ARG_MULTIPLIER, ARG_SHIFT, ARG_SCRATCH,
       ARG_OUT, ARG_COUNT };

static ptec_status prepare(ptec_op *op)
{
    ptec_cm_pool_state *state = (ptec_cm_pool_state *)op->state;
    bool ceil_mode = false;
    int64_t unused;
    ptec_status status = ptec_op_expect_argc(op, ARG_COUNT + 1);
    if (status == PTEC_OK) status = ptec_op_get_bool(op, ARG_CEIL_MODE, &ceil_mode);
    if (status == PTEC_OK) status = ptec_op_get_int(op, ARG_MULTIPLIER, &unused);
    if (status == PTEC_OK) status = ptec_op_get_int(op, ARG_SHIFT, &unused);
    if (status == PTEC_OK) status = ptec_cm_check_scratch_arg(op, ARG_SCRATCH);
    if (status == PTEC_OK) status = ptec_cm_prepare_pool_common_of(op, PTEC_DTYPE_SHORT, ARG_KERNEL, ceil_mode, state);
    if (status != PTEC_OK) {
        return status;
    }
    if ((int64_t)state->params.kernel.h * state->params.kernel.w > ((int64_t)1 << 16)) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_KERNEL,
                            PTEC_MSG("int16 average pooling supports windows of at most 65536 positions"));
    }
    state->params.activation.min = INT16_MIN;
    state->params.activation.max = INT16_MAX;
    op->scratch_bytes = 0;
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const ptec_cm_pool_state *state = (const ptec_cm_pool_state *)op->state;
    return ptec_nn_avgpool_s16(&state->params, &state->input, ptec_cm_in16(op, ARG_INPUT), &state->output,
                               ptec_cm_out16(op));
}

const ptec_kernel ptec_kernel_ptec_quantized_avg_pool2d_a16_out = {
    "ptec::quantized_avg_pool2d_a16.out", sizeof(ptec_cm_pool_state), prepare, run};
