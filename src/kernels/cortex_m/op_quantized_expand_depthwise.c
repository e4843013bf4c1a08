/* ptec::quantized_expand_depthwise.out(Tensor input, Tensor weight, Tensor? bias,
 *     int[] stride, int[] padding, int[] dilation, int input_offset,
 *     int output_offset, Tensor requantize_multipliers, Tensor requantize_shifts,
 *     int activation_min, int activation_max, Tensor expand_weight,
 *     Tensor? expand_bias, int expand_input_offset, int expand_output_offset,
 *     Tensor expand_multipliers, Tensor expand_shifts, int expand_min,
 *     int expand_max, *, Tensor(a!) out)
 * ptec only (docs/kernels.md "fused expansion and depthwise"): a 1x1
 * convolution (expand_*: weight [E, 1, 1, Cin], stride 1, no padding, its
 * clamp in expand_min/max) followed by a depthwise convolution of depth
 * multiplier 1 (the first twelve arguments, laid out as
 * quantized_depthwise_conv2d's without depth_multiplier: weight
 * [1, KH, KW, E]), whose input_offset is the negated expand_output_offset.
 * NHWC input [N, H, W, Cin], out [N, OH, OW, E]. The expanded tensor is
 * never whole: its rows pass through the runtime's scratch
 * (nn/ptec_nn_expand_depthwise_s8.c). */
#include "cortex_m_in_place.h"

enum { ARG_INPUT, ARG_WEIGHT, ARG_BIAS, ARG_STRIDE, ARG_PADDING, ARG_DILATION, ARG_INPUT_OFFSET,
       ARG_OUTPUT_OFFSET, ARG_MULTIPLIERS, ARG_SHIFTS, ARG_ACT_MIN, ARG_ACT_MAX, ARG_EXPAND_WEIGHT,
       ARG_EXPAND_BIAS, ARG_EXPAND_INPUT_OFFSET, ARG_EXPAND_OUTPUT_OFFSET, ARG_EXPAND_MULTIPLIERS,
       ARG_EXPAND_SHIFTS, ARG_EXPAND_MIN, ARG_EXPAND_MAX, ARG_OUT, ARG_COUNT };

typedef struct expand_depthwise_state {
    ptec_cm_conv_state depthwise;
    ptec_nn_expand_depthwise_args args; /* everything but the data pointers, set by run() */
    bool has_expand_bias;
} expand_depthwise_state;

/* The expansion's arguments, after the depthwise's common checks. */
static ptec_status prepare_expansion(ptec_op *op, expand_depthwise_state *state)
{
    ptec_nn_expand_depthwise_args *a = &state->args;
    ptec_nn_conv_params *ep = &a->expand_params;
    ptec_tensor *weight;
    ptec_status status = ptec_cm_get_tensor_of(op, ARG_EXPAND_WEIGHT, PTEC_DTYPE_CHAR, &weight);
    if (status != PTEC_OK) {
        return status;
    }
    if (weight->rank != 4 || !ptec_tensor_is_contiguous(weight) || weight->sizes[1] != 1 ||
        weight->sizes[2] != 1 || weight->sizes[3] != a->input_dims.c || weight->sizes[0] != a->output_dims.c) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_EXPAND_WEIGHT,
                            PTEC_MSG("expand_weight must be [Cout, 1, 1, Cin], contiguous"));
    }
    a->expand_dims.n = weight->sizes[0];
    a->expand_dims.h = 1;
    a->expand_dims.w = 1;
    a->expand_dims.c = weight->sizes[3];
    ep->stride.h = ep->stride.w = 1;
    ep->padding.h = ep->padding.w = 0;
    ep->dilation.h = ep->dilation.w = 1;
    status = ptec_cm_get_int_in(op, ARG_EXPAND_INPUT_OFFSET, -INT8_MAX, -INT8_MIN, &ep->input_offset);
    if (status == PTEC_OK) {
        status = ptec_cm_get_int_in(op, ARG_EXPAND_OUTPUT_OFFSET, INT8_MIN, INT8_MAX, &ep->output_offset);
    }
    if (status == PTEC_OK) {
        status = ptec_cm_check_per_channel(op, ARG_EXPAND_MULTIPLIERS, ARG_EXPAND_SHIFTS, a->expand_dims.n);
    }
    if (status == PTEC_OK) status = ptec_cm_get_activation(op, ARG_EXPAND_MIN, ARG_EXPAND_MAX, &ep->activation);
    if (status == PTEC_OK) {
        status = ptec_cm_check_bias(op, ARG_EXPAND_BIAS, a->expand_dims.n, &state->has_expand_bias);
    }
    if (status != PTEC_OK) {
        return status;
    }
    if (a->params.input_offset != -ep->output_offset) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_INPUT_OFFSET,
                            PTEC_MSG("input_offset must be -expand_output_offset (the depthwise reads the expansion)"));
    }
    return PTEC_OK;
}

static ptec_status prepare(ptec_op *op)
{
    expand_depthwise_state *state = (expand_depthwise_state *)op->state;
    ptec_cm_conv_state *dw = &state->depthwise;
    /* The depthwise's arguments are where quantized_depthwise_conv2d has
     * them, less depth_multiplier and scratch: the common checks read
     * them; its input dims are then the block input's (Cin channels). */
    const ptec_cm_conv_args common = {ARG_COUNT + 1, ARG_STRIDE, ARG_DILATION, ARG_INPUT_OFFSET, 0, 0};
    ptec_status status = ptec_cm_prepare_conv_common(op, &common, dw);
    if (status != PTEC_OK) {
        return status;
    }
    ptec_nn_expand_depthwise_args *a = &state->args;
    a->params = dw->params;
    a->input_dims = dw->input;
    a->filter_dims = dw->filter;
    a->output_dims = dw->output;
    if (dw->filter.n != 1 || dw->filter.c != dw->output.c) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_WEIGHT, PTEC_MSG("weight must be [1, KH, KW, Cout]"));
    }
    status = prepare_expansion(op, state);
    if (status != PTEC_OK) {
        return status;
    }
    const ptec_nn_conv_params *p = &a->params;
    const ptec_nn_dims in = a->input_dims, f = a->filter_dims, out = a->output_dims;
    if (ptec_cm_conv_output_size(in.h, f.h, p->stride.h, p->padding.h, p->dilation.h) != out.h ||
        ptec_cm_conv_output_size(in.w, f.w, p->stride.w, p->padding.w, p->dilation.w) != out.w) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_OUT,
                            PTEC_MSG("out height/width do not match the convolution geometry"));
    }
    /* An out row whose taps all fall in the padding would have a window of
     * no expanded rows (the unfused depthwise gives it the bias alone). */
    if ((int64_t)p->padding.h > (int64_t)p->dilation.h * (f.h - 1) || !ptec_nn_expand_depthwise_fits(a)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_PADDING,
                            PTEC_MSG("padding.h above dilation.h * (KH - 1): an out row reads only padding"));
    }
    const bool empty = (uint64_t)a->input_dims.n * (uint64_t)a->input_dims.h * (uint64_t)a->input_dims.w *
                           (uint64_t)a->input_dims.c == 0 ||
                       (uint64_t)a->output_dims.n * (uint64_t)a->output_dims.h * (uint64_t)a->output_dims.w *
                               (uint64_t)a->output_dims.c == 0;
    op->scratch_bytes = ptec_nn_expand_depthwise_s8_buffer_size(a);
    if (op->scratch_bytes == 0 && !empty) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_EXPAND_WEIGHT,
                            PTEC_MSG("the expanded rows' scratch exceeds 2^32 - 1 bytes"));
    }
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const expand_depthwise_state *state = (const expand_depthwise_state *)op->state;
    const ptec_status status = ptec_cm_check_sharing(op, ARG_INPUT, false);
    if (status != PTEC_OK) {
        return status;
    }
    ptec_nn_expand_depthwise_args a = state->args;
    a.quant.multipliers = ptec_cm_in32(op, ARG_MULTIPLIERS);
    a.quant.shifts = ptec_cm_in32(op, ARG_SHIFTS);
    a.expand_quant.multipliers = ptec_cm_in32(op, ARG_EXPAND_MULTIPLIERS);
    a.expand_quant.shifts = ptec_cm_in32(op, ARG_EXPAND_SHIFTS);
    a.filter = ptec_cm_in8(op, ARG_WEIGHT);
    a.expand_filter = ptec_cm_in8(op, ARG_EXPAND_WEIGHT);
    a.bias = ptec_cm_optional_in32(op, ARG_BIAS, state->depthwise.has_bias);
    a.expand_bias = ptec_cm_optional_in32(op, ARG_EXPAND_BIAS, state->has_expand_bias);
    return ptec_nn_expand_depthwise_s8(ptec_cm_scratch(op), &a, ptec_cm_in8(op, ARG_INPUT), ptec_cm_out8(op));
}

const ptec_kernel ptec_kernel_ptec_quantized_expand_depthwise_out = {
    "ptec::quantized_expand_depthwise.out", sizeof(expand_depthwise_state), prepare, run};
