/* cortex_m::quantized_linear.out(Tensor input, Tensor weights, Tensor? bias,
 *     Tensor? kernel_sum, int input_offset, int filter_offset, int output_offset,
 *     int[] requantize_multipliers, int[] requantize_shifts, int activation_max,
 *     int activation_min, *, Tensor(a!) out)
 * cortex-m-ops.md §3.8. Note activation_max comes before activation_min.
 * Both the bias (DSP/scalar export) and kernel_sum (MVE export) forms run
 * here; when kernel_sum is given it wins, as it already holds the bias. */
#include "cortex_m_args.h"

enum {
    ARG_INPUT, ARG_WEIGHTS, ARG_BIAS, ARG_KERNEL_SUM, ARG_INPUT_OFFSET, ARG_FILTER_OFFSET, ARG_OUTPUT_OFFSET,
    ARG_MULTIPLIERS, ARG_SHIFTS, ARG_ACT_MAX, ARG_ACT_MIN, ARG_OUT, ARG_COUNT
};

typedef struct linear_state {
    ptec_nn_fc_params params;
    ptec_nn_fc_dims dims;
    /* The constant operands' data: the run reads them here, not through
     * its arguments (PTEC_PREPARED_ARGS); NULL when absent. */
    const int8_t *weights;
    const int32_t *bias, *kernel_sum;
} linear_state;

static ptec_status prepare(ptec_op *op)
{
    linear_state *state = (linear_state *)op->state;
    ptec_nn_fc_params *p = &state->params;
    ptec_tensor *input, *weights, *kernel_sum, *out;
    ptec_status status = ptec_op_expect_argc(op, ARG_COUNT + 1);
    if (status == PTEC_OK) status = ptec_cm_get_tensor_of(op, ARG_INPUT, PTEC_DTYPE_CHAR, &input);
    if (status == PTEC_OK) status = ptec_cm_get_tensor_of(op, ARG_WEIGHTS, PTEC_DTYPE_CHAR, &weights);
    if (status == PTEC_OK) status = ptec_cm_get_out_of(op, PTEC_DTYPE_CHAR, &out);
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
    bool has_bias;
    status = ptec_cm_check_bias(op, ARG_BIAS, out_features, &has_bias);
    if (status == PTEC_OK) status = ptec_op_get_optional_tensor(op, ARG_KERNEL_SUM, &kernel_sum);
    if (status != PTEC_OK) {
        return status;
    }
    if (kernel_sum != NULL && (kernel_sum->dtype != PTEC_DTYPE_INT || kernel_sum->numel != (uint32_t)out_features ||
                               !ptec_tensor_is_contiguous(kernel_sum))) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_KERNEL_SUM,
                            PTEC_MSG("kernel_sum must be a contiguous int32 tensor of out_features entries"));
    }
    status = ptec_cm_get_int_in(op, ARG_INPUT_OFFSET, -INT8_MAX, -INT8_MIN, &p->input_offset);
    if (status == PTEC_OK) status = ptec_cm_get_int_in(op, ARG_FILTER_OFFSET, -INT8_MAX, -INT8_MIN, &p->filter_offset);
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
    state->dims.batches = (int32_t)batches;
    state->dims.input_features = in_features;
    state->dims.output_features = out_features;
    state->weights = (const int8_t *)weights->data;
    state->bias = ptec_cm_optional_in32(op, ARG_BIAS, has_bias);
    state->kernel_sum = kernel_sum != NULL ? (const int32_t *)kernel_sum->data : NULL;
    op->scratch_bytes = 0;
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const linear_state *state = (const linear_state *)op->state;
    return ptec_nn_fully_connected_s8(&state->params, &state->dims, ptec_cm_in8(op, ARG_INPUT), state->weights,
                                      state->bias, state->kernel_sum, ptec_cm_out8(op));
}

const ptec_kernel ptec_kernel_cortex_m_quantized_linear_out = {
    "cortex_m::quantized_linear.out",
    sizeof(linear_state) | PTEC_PREPARED_ARGS(1u << ARG_WEIGHTS | 1u << ARG_BIAS | 1u << ARG_KERNEL_SUM), prepare, run};
