/* ptec::quantized_linear_w4.out(Tensor input, Tensor weights, int[] weight_sizes,
 *     Tensor? bias, int input_offset, int output_offset,
 *     int[] requantize_multipliers, int[] requantize_shifts, int activation_max,
 *     int activation_min, Tensor out)
 * cortex_m::quantized_linear (bias form, filter offset 0) with packed 4-bit
 * weights (issue 15, --w4): weights is the [out_features, in_features]
 * tensor of weight_sizes, values in [-8, 7], packed two per byte into a
 * 1-D int8 tensor (nn/ptec_nn_s4.h). One requantization for the whole
 * layer, as the int8 operator. Note activation_max comes before
 * activation_min. */
#include "cortex_m_args.h"

enum {
    ARG_INPUT, ARG_WEIGHTS, ARG_WEIGHT_SIZES, ARG_BIAS, ARG_INPUT_OFFSET, ARG_OUTPUT_OFFSET, ARG_MULTIPLIERS,
    ARG_SHIFTS, ARG_ACT_MAX, ARG_ACT_MIN, ARG_OUT, ARG_COUNT
};

typedef struct linear_w4_state {
    ptec_nn_fc_params params;
    ptec_nn_fc_dims dims;
    bool has_bias;
} linear_w4_state;

static ptec_status prepare(ptec_op *op)
{
    linear_w4_state *state = (linear_w4_state *)op->state;
    ptec_nn_fc_params *p = &state->params;
    ptec_tensor *input, *out;
    int32_t sizes[2];
    ptec_status status = ptec_op_expect_argc(op, ARG_COUNT + 1);
    if (status == PTEC_OK) status = ptec_cm_get_tensor_of(op, ARG_INPUT, PTEC_DTYPE_CHAR, &input);
    if (status == PTEC_OK) status = ptec_cm_get_packed_s4_weight(op, ARG_WEIGHTS, ARG_WEIGHT_SIZES, 2, sizes);
    if (status == PTEC_OK) status = ptec_cm_get_out_of(op, PTEC_DTYPE_CHAR, &out);
    if (status != PTEC_OK) {
        return status;
    }
    const int32_t out_features = sizes[0];
    const int32_t in_features = sizes[1];
    if (input->rank < 1 || input->sizes[input->rank - 1] != in_features || !ptec_tensor_is_contiguous(input)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_INPUT,
                            PTEC_MSG("input must be contiguous [..., in_features]"));
    }
    const uint32_t batches = input->numel / (uint32_t)in_features;
    if (out->rank < 1 || out->sizes[out->rank - 1] != out_features || !ptec_tensor_is_contiguous(out) ||
        (uint64_t)out->numel != (uint64_t)batches * (uint64_t)out_features) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_OUT,
                            PTEC_MSG("out must be contiguous [..., out_features] with the input's batches"));
    }
    status = ptec_cm_check_bias(op, ARG_BIAS, out_features, &state->has_bias);
    if (status == PTEC_OK) status = ptec_cm_get_int_in(op, ARG_INPUT_OFFSET, -INT8_MAX, -INT8_MIN, &p->input_offset);
    if (status == PTEC_OK) status = ptec_cm_get_int_in(op, ARG_OUTPUT_OFFSET, INT8_MIN, INT8_MAX, &p->output_offset);
    if (status == PTEC_OK) {
        status = ptec_cm_get_int_list_of(op, ARG_MULTIPLIERS, 1, INT32_MIN, INT32_MAX, &p->quant.multiplier,
                                         PTEC_MSG("expected one multiplier"), PTEC_MSG("expected one multiplier"));
    }
    if (status == PTEC_OK) {
        status = ptec_cm_get_int_list_of(op, ARG_SHIFTS, 1, -31, 31, &p->quant.shift,
                                         PTEC_MSG("expected one shift in [-31, 31]"),
                                         PTEC_MSG("expected one shift in [-31, 31]"));
    }
    if (status == PTEC_OK) status = ptec_cm_get_activation(op, ARG_ACT_MIN, ARG_ACT_MAX, &p->activation);
    if (status != PTEC_OK) {
        return status;
    }
    p->filter_offset = 0;
    state->dims.batches = (int32_t)batches;
    state->dims.input_features = in_features;
    state->dims.output_features = out_features;
    op->scratch_bytes = 0;
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const linear_w4_state *state = (const linear_w4_state *)op->state;
    return ptec_nn_fully_connected_s4(&state->params, &state->dims, ptec_cm_in8(op, ARG_INPUT),
                                      ptec_cm_in8(op, ARG_WEIGHTS), ptec_cm_optional_in32(op, ARG_BIAS, state->has_bias),
                                      ptec_cm_out8(op));
}

const ptec_kernel ptec_kernel_ptec_quantized_linear_w4_out = {"ptec::quantized_linear_w4.out",
                                                              sizeof(linear_w4_state), prepare, run};
