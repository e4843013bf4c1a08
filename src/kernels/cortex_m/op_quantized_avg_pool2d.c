/* cortex_m::quantized_avg_pool2d.out(Tensor input, int[] kernel_size, int[] stride,
 *     int[] padding, bool ceil_mode, int zero_point, int multiplier, int shift,
 *     Tensor scratch, *, Tensor(a!) out)
 * NHWC int8; averages raw values over in-bounds positions (cortex-m-ops.md
 * §3.13). zero_point, multiplier and shift are read but unused, as upstream. */
#include "cortex_m_args.h"

enum { ARG_INPUT, ARG_KERNEL, ARG_STRIDE, ARG_PADDING, ARG_CEIL_MODE, ARG_ZERO_POINT, ARG_MULTIPLIER,
       ARG_SHIFT, ARG_SCRATCH, ARG_OUT, ARG_COUNT };

static ptec_status prepare(ptec_op *op)
{
    ptec_cm_pool_state *state = (ptec_cm_pool_state *)op->state;
    bool ceil_mode = false;
    int64_t unused;
    ptec_status status = ptec_op_expect_argc(op, ARG_COUNT + 1);
    if (status == PTEC_OK) status = ptec_op_get_bool(op, ARG_CEIL_MODE, &ceil_mode);
    if (status == PTEC_OK) status = ptec_op_get_int(op, ARG_ZERO_POINT, &unused);
    if (status == PTEC_OK) status = ptec_op_get_int(op, ARG_MULTIPLIER, &unused);
    if (status == PTEC_OK) status = ptec_op_get_int(op, ARG_SHIFT, &unused);
    if (status == PTEC_OK) status = ptec_cm_check_scratch_arg(op, ARG_SCRATCH);
    if (status == PTEC_OK) status = ptec_cm_prepare_pool_common(op, ARG_KERNEL, ceil_mode, state);
    if (status != PTEC_OK) {
        return status;
    }
    state->params.activation.min = INT8_MIN;
    state->params.activation.max = INT8_MAX;
    op->scratch_bytes = ptec_nn_avgpool_s8_buffer_size(&state->input);
    return PTEC_OK;
}

/* Its run never reads the scratch tensor (PTEC_PREPARED_ARGS): ptec's
 * kernels take their scratch from the runtime's region. */
static ptec_status run(ptec_op *op)
{
    const ptec_cm_pool_state *state = (const ptec_cm_pool_state *)op->state;
    return ptec_nn_avgpool_s8(ptec_cm_scratch(op), &state->params, &state->input, ptec_cm_in8(op, ARG_INPUT),
                              &state->output, ptec_cm_out8(op));
}

const ptec_kernel ptec_kernel_cortex_m_quantized_avg_pool2d_out = {
    "cortex_m::quantized_avg_pool2d.out", sizeof(ptec_cm_pool_state) | PTEC_PREPARED_ARGS(1u << ARG_SCRATCH), prepare,
    run};

/* The same kernel under ptec's name, which --ptec-runtime-only programs
 * call: their scratch arguments are empty (ptec's kernels take theirs from
 * the runtime's scratch region), so upstream's cortex_m kernel, which
 * writes CMSIS-NN's buffer there, must never be handed them. */
const ptec_kernel ptec_kernel_ptec_quantized_avg_pool2d_out = {
    "ptec::quantized_avg_pool2d.out", sizeof(ptec_cm_pool_state) | PTEC_PREPARED_ARGS(1u << ARG_SCRATCH), prepare, run};
