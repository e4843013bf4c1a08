/* cortex_m::quantized_transpose_conv2d.out(Tensor input, Tensor weight, Tensor? bias,
 *     int[] stride, int[] padding, int[] output_padding, int[] dilation,
 *     int input_offset, int output_offset, Tensor requantize_multipliers,
 *     Tensor requantize_shifts, int activation_min, int activation_max,
 *     Tensor scratch, Tensor output_scratch, *, Tensor(a!) out)
 * NHWC input, OHWI weight [Cout, KH, KW, Cin] (cortex-m-ops.md §3.11).
 * Computes the mathematically correct result for every padding, where the
 * pinned CMSIS-NN is wrong for padding % stride != 0 (docs/kernels.md). */
#include "cortex_m_in_place.h"

enum { ARG_INPUT, ARG_WEIGHT, ARG_BIAS, ARG_STRIDE, ARG_PADDING, ARG_OUTPUT_PADDING, ARG_DILATION,
       ARG_INPUT_OFFSET, ARG_OUTPUT_OFFSET, ARG_MULTIPLIERS, ARG_SHIFTS, ARG_ACT_MIN, ARG_ACT_MAX,
       ARG_SCRATCH, ARG_OUTPUT_SCRATCH, ARG_OUT, ARG_COUNT };

static int64_t output_size(int64_t size, int64_t kernel, int64_t stride, int64_t padding,
                           int64_t output_padding, int64_t dilation)
{
    return (size - 1) * stride - 2 * padding + dilation * (kernel - 1) + output_padding + 1;
}

static ptec_status prepare(ptec_op *op)
{
    ptec_cm_conv_state *state = (ptec_cm_conv_state *)op->state;
    const ptec_cm_conv_args args = {ARG_COUNT + 1, ARG_STRIDE, ARG_DILATION, ARG_INPUT_OFFSET, 2, 0};
    ptec_nn_hw output_padding;
    ptec_status status = ptec_cm_prepare_conv_common(op, &args, state);
    if (status == PTEC_OK) status = ptec_cm_get_hw(op, ARG_OUTPUT_PADDING, 0, &output_padding);
    if (status != PTEC_OK) {
        return status;
    }
    const ptec_nn_dims in = state->input, f = state->filter, out = state->output;
    const ptec_nn_conv_params *p = &state->params;
    if (f.c != in.c || f.n != out.c) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_WEIGHT,
                            PTEC_MSG("weight must be [Cout, KH, KW, Cin] (groups must be 1)"));
    }
    if (in.h < 1 || in.w < 1 ||
        output_size(in.h, f.h, p->stride.h, p->padding.h, output_padding.h, p->dilation.h) != out.h ||
        output_size(in.w, f.w, p->stride.w, p->padding.w, output_padding.w, p->dilation.w) != out.w) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_OUT,
                            PTEC_MSG("out height/width do not match the transposed convolution geometry"));
    }
    /* The gather loop's index, out + padding, must also stay small. */
    status = ptec_cm_check_axis_span(op, in.h, p->stride.h, f.h, p->dilation.h, p->padding.h);
    if (status == PTEC_OK) status = ptec_cm_check_axis_span(op, in.w, p->stride.w, f.w, p->dilation.w, p->padding.w);
    if (status != PTEC_OK) {
        return status;
    }
    op->scratch_bytes = ptec_nn_transpose_conv_s8_buffer_size(&state->input, &state->filter);
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const ptec_cm_conv_state *state = (const ptec_cm_conv_state *)op->state;
    const ptec_nn_per_channel_quant quant = {ptec_cm_in32(op, ARG_MULTIPLIERS), ptec_cm_in32(op, ARG_SHIFTS)};
    /* The math reads input pixels after writing out pixels over them.
     * Checked here, not at prepare: planned tensors have no address when
     * requirements are measured, which must judge a program as load does. */
    const ptec_status status = ptec_cm_check_sharing(op, ARG_INPUT, false);
    if (status != PTEC_OK) {
        return status;
    }
    return ptec_nn_transpose_conv_s8(ptec_cm_scratch(op), &state->params, &quant, &state->input,
                                     ptec_cm_in8(op, ARG_INPUT), &state->filter, ptec_cm_in8(op, ARG_WEIGHT),
                                     ptec_cm_optional_in32(op, ARG_BIAS, state->has_bias), &state->output,
                                     ptec_cm_out8(op));
}

const ptec_kernel ptec_kernel_cortex_m_quantized_transpose_conv2d_out = {
    "cortex_m::quantized_transpose_conv2d.out", sizeof(ptec_cm_conv_state), prepare, run};

/* The same kernel under ptec's name, which --ptec-runtime-only programs
 * call: their scratch arguments are empty (ptec's kernels take theirs from
 * the runtime's scratch region), so upstream's cortex_m kernel, which
 * writes CMSIS-NN's buffer there, must never be handed them. */
const ptec_kernel ptec_kernel_ptec_quantized_transpose_conv2d_out = {
    "ptec::quantized_transpose_conv2d.out", sizeof(ptec_cm_conv_state), prepare, run};
