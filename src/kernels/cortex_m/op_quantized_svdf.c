/* ptec::quantized_svdf.out(Tensor input, Tensor weights_feature,
 *     Tensor weights_time, Tensor? bias, Tensor activation_state, int rank,
 *     int input_offset, int feature_multiplier, int feature_shift,
 *     int output_offset, int output_multiplier, int output_shift,
 *     int activation_min, int activation_max, bool reset_state, Tensor out)
 * TFLite's SVDF over the frames of input [..., input_size] (one sequence,
 * frames = numel / input_size) with CMSIS-NN arm_svdf_s8's numerics
 * (nn/ptec_nn_svdf_s8.c): weights_feature [units * rank, input_size],
 * weights_time [units * rank, memory], both int8; bias int32 [units];
 * activation_state an int8 [units * rank, memory] planned tensor that the
 * kernel reads and writes. reset_state: zero the state at the start of
 * every execute (the whole sequence is one call); false keeps it from the
 * previous execute (streaming). The state is symmetric (zero point 0) and
 * spans all of int8. input_offset is minus the input's zero point. A ptec
 * operator (upstream has none): ptec.nn.SVDF lowers to it. */
#include <string.h>

#include "cortex_m_args.h"

enum {
    ARG_INPUT, ARG_WEIGHTS_FEATURE, ARG_WEIGHTS_TIME, ARG_BIAS, ARG_STATE, ARG_RANK, ARG_INPUT_OFFSET,
    ARG_FEATURE_MULT, ARG_FEATURE_SHIFT, ARG_OUTPUT_OFFSET, ARG_OUTPUT_MULT, ARG_OUTPUT_SHIFT, ARG_ACT_MIN,
    ARG_ACT_MAX, ARG_RESET, ARG_OUT, ARG_COUNT
};

typedef struct svdf_state {
    ptec_nn_svdf_params params;
    ptec_nn_svdf_dims dims;
    bool has_bias, reset;
} svdf_state;

static bool int8_matrix(const ptec_tensor *t, int32_t rows, int32_t cols)
{
    return t->rank == 2 && ptec_tensor_is_contiguous(t) && (rows < 0 || t->sizes[0] == rows) &&
           (cols < 0 || t->sizes[1] == cols) && t->sizes[0] >= 1 && t->sizes[1] >= 1;
}

static ptec_status prepare(ptec_op *op)
{
    svdf_state *state = (svdf_state *)op->state;
    ptec_nn_svdf_params *p = &state->params;
    ptec_tensor *input, *wf, *wt, *act_state, *out;
    int32_t rank = 0;
    ptec_status status = ptec_op_expect_argc(op, ARG_COUNT + 1);
    if (status == PTEC_OK) status = ptec_cm_get_tensor_of(op, ARG_INPUT, PTEC_DTYPE_CHAR, &input);
    if (status == PTEC_OK) status = ptec_cm_get_tensor_of(op, ARG_WEIGHTS_FEATURE, PTEC_DTYPE_CHAR, &wf);
    if (status == PTEC_OK) status = ptec_cm_get_tensor_of(op, ARG_WEIGHTS_TIME, PTEC_DTYPE_CHAR, &wt);
    if (status == PTEC_OK) status = ptec_cm_get_tensor_of(op, ARG_STATE, PTEC_DTYPE_CHAR, &act_state);
    if (status == PTEC_OK) status = ptec_cm_get_out_of(op, PTEC_DTYPE_CHAR, &out);
    if (status == PTEC_OK) status = ptec_cm_get_int_in(op, ARG_RANK, 1, 1 << 16, &rank);
    if (status != PTEC_OK) {
        return status;
    }
    if (!int8_matrix(wf, -1, -1) || wf->sizes[1] > (1 << 16)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_WEIGHTS_FEATURE,
                            PTEC_MSG("weights_feature must be contiguous [units*rank, input_size], input_size <= 65536"));
    }
    const int32_t rows = wf->sizes[0], input_size = wf->sizes[1];
    if (rows % rank != 0) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_RANK, PTEC_MSG("rank must divide weights_feature's rows"));
    }
    if (!int8_matrix(wt, rows, -1) || (int64_t)rank * wt->sizes[1] > (1 << 16)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_WEIGHTS_TIME,
                            PTEC_MSG("weights_time must be contiguous [units*rank, memory], rank*memory <= 65536"));
    }
    const int32_t memory = wt->sizes[1], units = rows / rank;
    if (!int8_matrix(act_state, rows, memory) || (act_state->flags & PTEC_TENSOR_CONSTANT) != 0) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_STATE,
                            PTEC_MSG("activation_state must be a writable contiguous [units*rank, memory] tensor"));
    }
    if (input->rank < 1 || input->sizes[input->rank - 1] != input_size || !ptec_tensor_is_contiguous(input)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_INPUT, PTEC_MSG("input must be contiguous [..., input_size]"));
    }
    const uint32_t frames = input->numel / (uint32_t)input_size;
    if (out->rank < 1 || out->sizes[out->rank - 1] != units || !ptec_tensor_is_contiguous(out) ||
        (uint64_t)out->numel != (uint64_t)frames * (uint64_t)units) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_OUT,
                            PTEC_MSG("out must be contiguous [..., units] with the input's frames"));
    }
    status = ptec_cm_check_bias(op, ARG_BIAS, units, &state->has_bias);
    if (status == PTEC_OK) status = ptec_cm_get_int_in(op, ARG_INPUT_OFFSET, -INT8_MAX, -INT8_MIN, &p->input_offset);
    if (status == PTEC_OK) status = ptec_op_get_int32(op, ARG_FEATURE_MULT, &p->feature_quant.multiplier);
    if (status == PTEC_OK) status = ptec_cm_get_shift(op, ARG_FEATURE_SHIFT, &p->feature_quant.shift);
    if (status == PTEC_OK) status = ptec_cm_get_int_in(op, ARG_OUTPUT_OFFSET, INT8_MIN, INT8_MAX, &p->output_offset);
    if (status == PTEC_OK) status = ptec_op_get_int32(op, ARG_OUTPUT_MULT, &p->output_quant.multiplier);
    if (status == PTEC_OK) status = ptec_cm_get_shift(op, ARG_OUTPUT_SHIFT, &p->output_quant.shift);
    if (status == PTEC_OK) status = ptec_cm_get_activation(op, ARG_ACT_MIN, ARG_ACT_MAX, &p->activation);
    if (status == PTEC_OK) status = ptec_op_get_bool(op, ARG_RESET, &state->reset);
    if (status != PTEC_OK) {
        return status;
    }
    p->rank = rank;
    p->state_activation.min = INT8_MIN;
    p->state_activation.max = INT8_MAX;
    state->dims.frames = (int32_t)frames;
    state->dims.input_size = input_size;
    state->dims.units = units;
    state->dims.memory = memory;
    op->scratch_bytes = ptec_nn_svdf_s8_buffer_size(&state->dims, rank);
    if (op->scratch_bytes == 0) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_WEIGHTS_FEATURE,
                            PTEC_MSG("units*rank too large for the int32 row sums"));
    }
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const svdf_state *state = (const svdf_state *)op->state;
    ptec_tensor *act_state = ptec_op_tensor(op, ARG_STATE);
    if (state->reset) {
        memset(act_state->data, 0, act_state->nbytes);
    }
    const ptec_nn_buffer scratch = ptec_cm_scratch(op);
    return ptec_nn_svdf_s8(&scratch, &state->params, &state->dims, ptec_cm_in8(op, ARG_INPUT),
                           ptec_cm_in8(op, ARG_WEIGHTS_FEATURE), ptec_cm_in8(op, ARG_WEIGHTS_TIME),
                           ptec_cm_optional_in32(op, ARG_BIAS, state->has_bias), (int8_t *)act_state->data,
                           ptec_cm_out8(op));
}

const ptec_kernel ptec_kernel_ptec_quantized_svdf_out = {"ptec::quantized_svdf.out", sizeof(svdf_state), prepare,
                                                         run};
