/* cortex_m::quantized_depthwise_conv2d.out(Tensor input, Tensor weight, Tensor? bias,
 *     int[] stride, int[] padding, int[] dilation, int depth_multiplier,
 *     int input_offset, int output_offset, Tensor requantize_multipliers,
 *     Tensor requantize_shifts, int activation_min, int activation_max,
 *     Tensor scratch, *, Tensor(a!) out)
 * NHWC input, weight [1, KH, KW, Cout], Cout = Cin * depth_multiplier
 * (cortex-m-ops.md §3.10). Batches > 1 are accepted and run independently. */
#include "cortex_m_in_place.h"

enum { ARG_INPUT, ARG_WEIGHT, ARG_BIAS, ARG_STRIDE, ARG_PADDING, ARG_DILATION, ARG_DEPTH_MULTIPLIER,
       ARG_INPUT_OFFSET, ARG_OUTPUT_OFFSET, ARG_MULTIPLIERS, ARG_SHIFTS, ARG_ACT_MIN, ARG_ACT_MAX,
       ARG_SCRATCH, ARG_OUT, ARG_COUNT };

static ptec_status prepare(ptec_op *op)
{
    ptec_cm_conv_state *state = (ptec_cm_conv_state *)op->state;
    const ptec_cm_conv_args args = {ARG_COUNT + 1, ARG_STRIDE, ARG_DILATION, ARG_INPUT_OFFSET, 1, 0};
    ptec_status status = ptec_cm_prepare_conv_common(op, &args, state);
    if (status == PTEC_OK) status = ptec_op_get_int32(op, ARG_DEPTH_MULTIPLIER, &state->depth_multiplier);
    if (status != PTEC_OK) {
        return status;
    }
    const ptec_nn_dims in = state->input, f = state->filter, out = state->output;
    const ptec_nn_conv_params *p = &state->params;
    if (state->depth_multiplier < 1 || (int64_t)in.c * state->depth_multiplier != out.c) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_DEPTH_MULTIPLIER,
                            PTEC_MSG("depth_multiplier must be >= 1 with Cout = Cin * depth_multiplier"));
    }
    if (f.n != 1 || f.c != out.c) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_WEIGHT, PTEC_MSG("weight must be [1, KH, KW, Cout]"));
    }
    if (ptec_cm_conv_output_size(in.h, f.h, p->stride.h, p->padding.h, p->dilation.h) != out.h ||
        ptec_cm_conv_output_size(in.w, f.w, p->stride.w, p->padding.w, p->dilation.w) != out.w) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_OUT,
                            PTEC_MSG("out height/width do not match the convolution geometry"));
    }
    op->scratch_bytes = ptec_nn_depthwise_conv_s8_buffer_size(&state->input, &state->filter);
    return PTEC_OK;
}

/* ptec's: may run with out over its input (cortex_m_in_place.h). */
static ptec_status prepare_ptec(ptec_op *op)
{
    ptec_status status = prepare(op);
    return status != PTEC_OK ? status
                             : ptec_cm_prepare_in_place(op, ARG_INPUT, false, (ptec_cm_conv_state *)op->state);
}

static ptec_status run_math(ptec_op *op)
{
    const ptec_cm_conv_state *state = (const ptec_cm_conv_state *)op->state;
    return ptec_nn_depthwise_conv_s8(ptec_cm_scratch(op), &state->params, state->depth_multiplier, &state->quant,
                                     &state->input, ptec_cm_in8(op, ARG_INPUT), &state->filter, state->weight,
                                     state->bias, &state->output, ptec_cm_out8(op));
}

/* upstream's operator: input and out never share a byte (checked here,
 * not at prepare: cortex_m_in_place.h). */
static ptec_status run(ptec_op *op)
{
    const ptec_status status = ptec_cm_check_sharing(op, ARG_INPUT, false);
    return status != PTEC_OK ? status : run_math(op);
}

static ptec_status run_ptec(ptec_op *op)
{
    const ptec_cm_conv_state *state = (const ptec_cm_conv_state *)op->state;
    ptec_status status;
    if (ptec_cm_runs_in_place(op, ARG_INPUT, state, &status)) {
        return ptec_nn_depthwise_in_place_s8(ptec_cm_scratch(op), &state->params, &state->quant, &state->input,
                                             ptec_cm_out8(op), &state->filter, state->weight, state->bias);
    }
    return status != PTEC_OK ? status : run_math(op);
}

const ptec_kernel ptec_kernel_cortex_m_quantized_depthwise_conv2d_out = {
    "cortex_m::quantized_depthwise_conv2d.out", sizeof(ptec_cm_conv_state) | PTEC_CM_CONV_PREPARED_ARGS(ARG_MULTIPLIERS),
    prepare, run};

/* The same kernel under ptec's name, which --ptec-runtime-only programs
 * call: their scratch arguments are empty (ptec's kernels take theirs from
 * the runtime's scratch region), so upstream's cortex_m kernel, which
 * writes CMSIS-NN's buffer there, must never be handed them. It also runs
 * in place where the geometry allows (upstream's kernel never does). */
const ptec_kernel ptec_kernel_ptec_quantized_depthwise_conv2d_out = {
    "ptec::quantized_depthwise_conv2d.out", sizeof(ptec_cm_conv_state) | PTEC_CM_CONV_PREPARED_ARGS(ARG_MULTIPLIERS),
    prepare_ptec, run_ptec};
