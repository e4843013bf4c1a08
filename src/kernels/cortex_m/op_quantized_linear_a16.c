/* ptec::quantized_linear_a16.out(Tensor input, Tensor weights, Tensor? bias,
 *     int[] requantize_multipliers, int[] requantize_shifts, int activation_max,
 *     int activation_min, *, Tensor(a!) out)
 * cortex_m::quantized_linear with int16 activations: no offsets (zero
 * points 0) and so no kernel_sum either (the MVE export's kernel_sum only
 * folds the input offset into the bias); int64 bias, one shift in [-31, 7]
 * (docs/kernels.md, "16-bit activations"). As in the int8 op,
 * activation_max comes before activation_min. */
#include "cortex_m_args.h"

enum { ARG_INPUT, ARG_WEIGHTS, ARG_BIAS, ARG_MULTIPLIERS, ARG_SHIFTS, ARG_ACT_MAX, ARG_ACT_MIN, ARG_OUT, ARG_COUNT };

typedef struct linear_state {
    ptec_nn_fc_s16_params params;
    ptec_nn_fc_dims dims;
    bool has_bias;
} linear_state;

static ptec_status prepare(ptec_op *op)
{
    linear_state *state = (linear_state *)op->state;
    ptec_nn_fc_s16_params *p = &state->params;
    ptec_tensor *input, *weights, *out;
    ptec_status status = ptec_op_expect_argc(op, ARG_COUNT + 1);
    if (status == PTEC_OK) status = ptec_cm_get_tensor_of(op, ARG_INPUT, PTEC_DTYPE_SHORT, &input);
    if (status == PTEC_OK) status = ptec_cm_get_tensor_of(op, ARG_WEIGHTS, PTEC_DTYPE_CHAR, &weights);
    if (status == PTEC_OK) status = ptec_cm_get_out_of(op, PTEC_DTYPE_SHORT, &out);
    if (status != PTEC_OK) {
        return status;
    }
    if (weights->rank != 2 || !ptec_tensor_is_contiguous(weights)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_WEIGHTS,
                            PTEC_MSG("weights must be a contiguous [out_features, in_features] tensor"));
    }
    const int32_t out_features = weights->sizes[0];
    const int32_t in_features = weights->sizes[1];
    if (input->rank < 1 || input->sizes[input->rank - 1] != in_features || !ptec_tensor_is_contiguous(input)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_INPUT,
                            PTEC_MSG("input must be contiguous [..., in_features]"));
    }
    const uint32_t batches = in_features > 0 ? input->numel / (uint32_t)in_features : 0u;
    if (out->rank < 1 || out->sizes[out->rank - 1] != out_features || !ptec_tensor_is_contiguous(out) ||
        (uint64_t)out->numel != (uint64_t)batches * (uint64_t)out_features) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_OUT,
                            PTEC_MSG("out must be contiguous [..., out_features] with the input's batches"));
    }
    status = ptec_cm_check_bias_s64(op, ARG_BIAS, out_features, &state->has_bias);
    if (status == PTEC_OK) {
        status = ptec_cm_get_int_list_of(op, ARG_MULTIPLIERS, 1, INT32_MIN, INT32_MAX, &p->quant.multiplier,
                                         PTEC_MSG("expected one multiplier"), PTEC_MSG("expected one multiplier"));
    }
    if (status == PTEC_OK) {
        status = ptec_cm_get_int_list_of(op, ARG_SHIFTS, 1, -31, 7, &p->quant.shift,
                                         PTEC_MSG("expected one shift in [-31, 7]"),
                                         PTEC_MSG("expected one shift in [-31, 7]"));
    }
    if (status == PTEC_OK) status = ptec_cm_get_activation_s16(op, ARG_ACT_MIN, ARG_ACT_MAX, &p->activation);
    if (status != PTEC_OK) {
        return status;
    }
    state->dims.batches = (int32_t)batches;
    state->dims.input_features = in_features;
    state->dims.output_features = out_features;
    op->scratch_bytes = 0;
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const linear_state *state = (const linear_state *)op->state;
    return ptec_nn_fully_connected_s16(&state->params, &state->dims, ptec_cm_in16(op, ARG_INPUT),
                                       ptec_cm_in8(op, ARG_WEIGHTS), ptec_cm_optional_in64(op, ARG_BIAS, state->has_bias),
                                       ptec_cm_out16(op));
}

const ptec_kernel ptec_kernel_ptec_quantized_linear_a16_out = {"ptec::quantized_linear_a16.out",
                                                               sizeof(linear_state), prepare, run};
