/* ptec::quantized_conv2d_a16.out(Tensor input, Tensor weight, Tensor? bias,
 *     int[] stride, int[] padding, int[] dilation, Tensor requantize_multipliers,
 *     Tensor requantize_shifts, int activation_min, int activation_max,
 *     Tensor scratch, *, Tensor(a!) out)
 * cortex_m::quantized_conv2d with int16 activations: NHWC int16 input and
 * out (zero point 0, so no offsets), OHWI int8 weight [Cout, KH, KW,
 * Cin/groups], int64 bias, shifts in [-31, 7] (docs/kernels.md, "16-bit
 * activations"). */
#include "cortex_m_in_place.h"

enum { ARG_INPUT, ARG_WEIGHT, ARG_BIAS, ARG_STRIDE, ARG_PADDING, ARG_DILATION, ARG_MULTIPLIERS, ARG_SHIFTS,
       ARG_ACT_MIN, ARG_ACT_MAX, ARG_SCRATCH, ARG_OUT, ARG_COUNT };

static ptec_status prepare(ptec_op *op)
{
    ptec_cm_conv_a16_state *state = (ptec_cm_conv_a16_state *)op->state;
    const ptec_cm_conv_a16_args args = {ARG_COUNT + 1, ARG_STRIDE, ARG_DILATION, ARG_MULTIPLIERS};
    ptec_status status = ptec_cm_prepare_conv_a16_common(op, &args, state);
    if (status != PTEC_OK) {
        return status;
    }
    const ptec_nn_dims in = state->input, f = state->filter, out = state->output;
    const ptec_nn_conv_s16_params *p = &state->params;
    if (f.c <= 0 || in.c % f.c != 0 || f.n != out.c) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_WEIGHT,
                            PTEC_MSG("weight must be [Cout, KH, KW, Cin/groups] with groups dividing Cin"));
    }
    const int32_t groups = in.c / f.c;
    if (groups <= 0 || out.c % groups != 0) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_WEIGHT, PTEC_MSG("groups must divide the output channels"));
    }
    if (ptec_cm_conv_output_size(in.h, f.h, p->stride.h, p->padding.h, p->dilation.h) != out.h ||
        ptec_cm_conv_output_size(in.w, f.w, p->stride.w, p->padding.w, p->dilation.w) != out.w) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_OUT,
                            PTEC_MSG("out height/width do not match the convolution geometry"));
    }
    op->scratch_bytes = ptec_nn_convolve_s16_buffer_size(&state->input, &state->filter);
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const ptec_cm_conv_a16_state *state = (const ptec_cm_conv_a16_state *)op->state;
    const ptec_nn_per_channel_quant quant = {ptec_cm_in32(op, ARG_MULTIPLIERS), ptec_cm_in32(op, ARG_SHIFTS)};
    /* The math reads input pixels after writing out pixels over them.
     * Checked here, not at prepare: planned tensors have no address when
     * requirements are measured, which must judge a program as load does. */
    const ptec_status status = ptec_cm_check_sharing(op, ARG_INPUT, false);
    if (status != PTEC_OK) {
        return status;
    }
    return ptec_nn_convolve_s16(ptec_cm_scratch(op), &state->params, &quant, &state->input,
                                ptec_cm_in16(op, ARG_INPUT), &state->filter, ptec_cm_in8(op, ARG_WEIGHT),
                                ptec_cm_optional_in64(op, ARG_BIAS, state->has_bias), &state->output,
                                ptec_cm_out16(op));
}

const ptec_kernel ptec_kernel_ptec_quantized_conv2d_a16_out = {"ptec::quantized_conv2d_a16.out",
                                                               sizeof(ptec_cm_conv_a16_state), prepare, run};
