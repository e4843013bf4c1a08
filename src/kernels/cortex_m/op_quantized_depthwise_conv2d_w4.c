/* ptec::quantized_depthwise_conv2d_w4.out(Tensor input, Tensor weight, int[] weight_sizes,
 *     Tensor? bias, int[] stride, int[] padding, int[] dilation, int depth_multiplier,
 *     int input_offset, int output_offset, Tensor requantize_multipliers,
 *     Tensor requantize_shifts, int activation_min, int activation_max, Tensor scratch, Tensor out)
 * cortex_m::quantized_depthwise_conv2d with packed 4-bit weights (--w4):
 * weight is the IHWO [1, KH, KW, Cout] tensor of weight_sizes, values in
 * [-8, 7], packed two per byte into a 1-D int8 tensor (nn/ptec_nn_s4.h).
 * The scratch is the runtime's (ptec_nn_depthwise_conv_s4_buffer_size);
 * the scratch argument is a placeholder, as for every ptec:: kernel. */
#include "cortex_m_in_place.h"

enum { ARG_INPUT, ARG_WEIGHT, ARG_WEIGHT_SIZES, ARG_BIAS, ARG_STRIDE, ARG_PADDING, ARG_DILATION,
       ARG_DEPTH_MULTIPLIER, ARG_INPUT_OFFSET, ARG_OUTPUT_OFFSET, ARG_MULTIPLIERS, ARG_SHIFTS, ARG_ACT_MIN,
       ARG_ACT_MAX, ARG_SCRATCH, ARG_OUT, ARG_COUNT };

static ptec_status prepare(ptec_op *op)
{
    ptec_cm_conv_state *state = (ptec_cm_conv_state *)op->state;
    const ptec_cm_conv_args args = {ARG_COUNT + 1, ARG_STRIDE, ARG_DILATION, ARG_INPUT_OFFSET, 1, ARG_WEIGHT_SIZES};
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
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_WEIGHT_SIZES,
                            PTEC_MSG("weight_sizes must be [1, KH, KW, Cout]"));
    }
    if (ptec_cm_conv_output_size(in.h, f.h, p->stride.h, p->padding.h, p->dilation.h) != out.h ||
        ptec_cm_conv_output_size(in.w, f.w, p->stride.w, p->padding.w, p->dilation.w) != out.w) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_OUT,
                            PTEC_MSG("out height/width do not match the convolution geometry"));
    }
    op->scratch_bytes = ptec_nn_depthwise_conv_s4_buffer_size(&state->input, &state->filter);
    if (op->scratch_bytes == UINT32_MAX) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_WEIGHT_SIZES,
                            PTEC_MSG("the unpacked weights do not fit in 4 GiB of scratch"));
    }
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const ptec_cm_conv_state *state = (const ptec_cm_conv_state *)op->state;
    /* The math reads input pixels after writing out pixels over them.
     * Checked here, not at prepare: planned tensors have no address when
     * requirements are measured, which must judge a program as load does. */
    const ptec_status status = ptec_cm_check_sharing(op, ARG_INPUT, false);
    if (status != PTEC_OK) {
        return status;
    }
    return ptec_nn_depthwise_conv_s4(ptec_cm_scratch(op), &state->params, state->depth_multiplier, &state->quant,
                                     &state->input, ptec_cm_in8(op, ARG_INPUT), &state->filter, state->weight,
                                     state->bias, &state->output, ptec_cm_out8(op));
}

/* run() reads weight, bias, multipliers and shifts through the state
 * (ptec_cm_prepare_conv_common keeps their data there) and never the
 * scratch placeholder. */
#define PREPARED_ARGS \
    PTEC_PREPARED_ARGS((1u << ARG_WEIGHT) | (1u << ARG_BIAS) | (1u << ARG_MULTIPLIERS) | (1u << ARG_SHIFTS) | \
                       (1u << ARG_SCRATCH))

const ptec_kernel ptec_kernel_ptec_quantized_depthwise_conv2d_w4_out = {
    "ptec::quantized_depthwise_conv2d_w4.out", sizeof(ptec_cm_conv_state) | PREPARED_ARGS, prepare, run};
