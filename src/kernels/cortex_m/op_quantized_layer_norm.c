/* ptec::quantized_layer_norm.out(Tensor input, int normalized_numel,
 *     int input_zero_point, int eps_term, Tensor requantize_multipliers,
 *     Tensor requantize_shifts, Tensor bias, int output_zero_point,
 *     int activation_min, int activation_max, Tensor out)
 * nn.LayerNorm on int8 values in integers only (nn/ptec_nn_layer_norm_s8.c):
 * over the last normalized_numel values of each row, with the affine part
 * folded into one multiplier, shift and bias per normalized element. A
 * ptec operator (upstream has none): `compile --int8-layernorm` emits it. */
#include "cortex_m_args.h"

enum {
    ARG_INPUT, ARG_NUMEL, ARG_INPUT_ZP, ARG_EPS, ARG_MULTIPLIERS, ARG_SHIFTS, ARG_BIAS, ARG_OUTPUT_ZP, ARG_ACT_MIN,
    ARG_ACT_MAX, ARG_OUT, ARG_COUNT
};

typedef struct layer_norm_state {
    ptec_nn_layer_norm_params params;
    int32_t rows, row_size;
} layer_norm_state;

static ptec_status prepare(ptec_op *op)
{
    layer_norm_state *state = (layer_norm_state *)op->state;
    ptec_nn_layer_norm_params *p = &state->params;
    ptec_tensor *input, *out;
    int32_t row_size = 0;
    int64_t eps_term = 0;
    bool has_bias = false;
    ptec_status status = ptec_op_expect_argc(op, ARG_COUNT + 1);
    if (status == PTEC_OK) status = ptec_cm_get_tensor_of(op, ARG_INPUT, PTEC_DTYPE_CHAR, &input);
    if (status == PTEC_OK) status = ptec_cm_get_out_of(op, PTEC_DTYPE_CHAR, &out);
    if (status == PTEC_OK) status = ptec_cm_get_int_in(op, ARG_NUMEL, 1, 1 << 16, &row_size);
    if (status != PTEC_OK) {
        return status;
    }
    if (!ptec_tensor_is_contiguous(input) || input->numel % (uint32_t)row_size != 0) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_INPUT,
                            PTEC_MSG("input must be contiguous rows of normalized_numel values"));
    }
    if (!ptec_tensor_is_contiguous(out) || !ptec_tensor_same_shape(input, out)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_OUT, PTEC_MSG("out must be contiguous, shaped as input"));
    }
    status = ptec_cm_get_int_in(op, ARG_INPUT_ZP, INT8_MIN, INT8_MAX, &p->input_zero_point);
    if (status == PTEC_OK) status = ptec_op_get_int(op, ARG_EPS, &eps_term);
    if (status == PTEC_OK && (eps_term < 0 || eps_term > ((int64_t)1 << 60))) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_EPS, PTEC_MSG("eps_term must be in [0, 2^60]"));
    }
    if (status == PTEC_OK) status = ptec_cm_check_per_channel(op, ARG_MULTIPLIERS, ARG_SHIFTS, row_size);
    if (status == PTEC_OK) status = ptec_cm_check_bias(op, ARG_BIAS, row_size, &has_bias);
    if (status == PTEC_OK && !has_bias) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_BIAS, PTEC_MSG("bias is required"));
    }
    if (status == PTEC_OK) status = ptec_cm_get_int_in(op, ARG_OUTPUT_ZP, INT8_MIN, INT8_MAX, &p->output_offset);
    if (status == PTEC_OK) status = ptec_cm_get_activation(op, ARG_ACT_MIN, ARG_ACT_MAX, &p->activation);
    if (status != PTEC_OK) {
        return status;
    }
    p->eps_term = eps_term;
    state->row_size = row_size;
    state->rows = (int32_t)(input->numel / (uint32_t)row_size);
    op->scratch_bytes = 0;
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const layer_norm_state *state = (const layer_norm_state *)op->state;
    return ptec_nn_layer_norm_s8(ptec_cm_in8(op, ARG_INPUT), state->rows, state->row_size, &state->params,
                                 ptec_cm_in32(op, ARG_MULTIPLIERS), ptec_cm_in32(op, ARG_SHIFTS),
                                 ptec_cm_in32(op, ARG_BIAS), ptec_cm_out8(op));
}

const ptec_kernel ptec_kernel_ptec_quantized_layer_norm_out = {"ptec::quantized_layer_norm.out",
                                                               sizeof(layer_norm_state), prepare, run};
