/* ptec::quantized_lstm_a16.out(Tensor input, Tensor input_weights,
 *     Tensor hidden_weights, Tensor input_effective_bias,
 *     Tensor? hidden_effective_bias, Tensor gate_multipliers,
 *     Tensor gate_shifts, int forget_to_cell_multiplier,
 *     int forget_to_cell_shift, int input_to_cell_multiplier,
 *     int input_to_cell_shift, int output_multiplier, int output_shift,
 *     int cell_clip, int cell_scale_power, bool batch_first, Tensor out)
 * One layer of a unidirectional nn.LSTM with 16-bit activations and 8-bit
 * weights (nn/ptec_nn_lstm_s16.c, CMSIS-NN arm_lstm_unidirectional_s16
 * numerics; docs/kernels.md "int16 LSTM"). input is int16 [T, I] or, by
 * batch_first, [T, B, I] or [B, T, I]; out int16 the same layout with H;
 * both symmetric (zero point 0). Gates in PyTorch's order i, f, g, o:
 * int8 weights [4H, I] and [4H, H], int64 effective biases [4H] (the
 * hidden one may be None: zero), the eight (multiplier, shift) pairs as
 * gate_multipliers[k] (input side of gate k) and [4 + k] (hidden side),
 * shifts in [-31, 7]. The initial state is zero. A ptec operator (upstream
 * has none). */
#include "cortex_m_args.h"
#include "nn/ptec_nn_lstm_s16.h"

enum {
    ARG_INPUT, ARG_INPUT_WEIGHTS, ARG_HIDDEN_WEIGHTS, ARG_INPUT_BIAS, ARG_HIDDEN_BIAS, ARG_MULTIPLIERS, ARG_SHIFTS,
    ARG_FORGET_TO_CELL, ARG_FORGET_TO_CELL_SHIFT, ARG_INPUT_TO_CELL, ARG_INPUT_TO_CELL_SHIFT, ARG_OUTPUT_MULT,
    ARG_OUTPUT_SHIFT, ARG_CELL_CLIP, ARG_CELL_SCALE_POWER, ARG_BATCH_FIRST, ARG_OUT, ARG_COUNT
};

/* 3 * 2 * H bytes of scratch stay far inside uint32, and a gate's sum of
 * up to 2^24 products far inside the 64-bit accumulator. */
enum { MAX_HIDDEN = 1 << 24 };

typedef struct lstm_a16_state {
    ptec_nn_lstm_s16_params params;
    bool has_hidden_bias;
} lstm_a16_state;

static ptec_status get_weights(ptec_op *op, size_t i, int32_t rows, int32_t cols, const char *message)
{
    ptec_tensor *w;
    ptec_status status = ptec_cm_get_tensor_of(op, i, PTEC_DTYPE_CHAR, &w);
    if (status != PTEC_OK) {
        return status;
    }
    if (w->rank != 2 || !ptec_tensor_is_contiguous(w) || w->sizes[0] != rows || w->sizes[1] != cols) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, (int)i, message);
    }
    return PTEC_OK;
}

static ptec_status prepare(ptec_op *op)
{
    lstm_a16_state *state = (lstm_a16_state *)op->state;
    ptec_nn_lstm_s16_params *p = &state->params;
    ptec_tensor *input, *input_weights, *out;
    bool present = false;
    ptec_status status = ptec_op_expect_argc(op, ARG_COUNT + 1);
    if (status == PTEC_OK) status = ptec_cm_get_tensor_of(op, ARG_INPUT, PTEC_DTYPE_SHORT, &input);
    if (status == PTEC_OK) status = ptec_cm_get_tensor_of(op, ARG_INPUT_WEIGHTS, PTEC_DTYPE_CHAR, &input_weights);
    if (status == PTEC_OK) status = ptec_cm_get_out_of(op, PTEC_DTYPE_SHORT, &out);
    if (status == PTEC_OK) status = ptec_op_get_bool(op, ARG_BATCH_FIRST, &p->batch_first);
    if (status != PTEC_OK) {
        return status;
    }
    if (input_weights->rank != 2 || input_weights->sizes[0] < 4 || input_weights->sizes[0] % 4 != 0 ||
        input_weights->sizes[0] / 4 > MAX_HIDDEN || input_weights->sizes[1] < 1) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_INPUT_WEIGHTS,
                            PTEC_MSG("input_weights must be [4 * hidden_size, input_size], hidden_size >= 1"));
    }
    const int32_t hidden = input_weights->sizes[0] / 4;
    const int32_t features = input_weights->sizes[1];
    status = get_weights(op, ARG_INPUT_WEIGHTS, 4 * hidden, features,
                         PTEC_MSG("input_weights must be a contiguous [4 * hidden_size, input_size] tensor"));
    if (status == PTEC_OK) {
        status = get_weights(op, ARG_HIDDEN_WEIGHTS, 4 * hidden, hidden,
                             PTEC_MSG("hidden_weights must be a contiguous [4 * hidden_size, hidden_size] tensor"));
    }
    if (status != PTEC_OK) {
        return status;
    }
    if (!ptec_tensor_is_contiguous(input) || (input->rank != 2 && input->rank != 3) ||
        input->sizes[input->rank - 1] != features) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_INPUT,
                            PTEC_MSG("input must be contiguous int16 [T, input_size] or [T, B, input_size] "
                                     "([B, T, input_size] with batch_first)"));
    }
    int32_t steps = input->sizes[0], batches = 1;
    if (input->rank == 3) {
        steps = p->batch_first ? input->sizes[1] : input->sizes[0];
        batches = p->batch_first ? input->sizes[0] : input->sizes[1];
    }
    bool out_ok = ptec_tensor_is_contiguous(out) && out->rank == input->rank &&
                  out->sizes[out->rank - 1] == hidden;
    for (uint32_t d = 0; out_ok && d + 1u < input->rank; ++d) {
        out_ok = out->sizes[d] == input->sizes[d];
    }
    if (!out_ok) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_OUT,
                            PTEC_MSG("out must be contiguous int16, shaped as input with hidden_size last"));
    }
    status = ptec_cm_check_bias_s64(op, ARG_INPUT_BIAS, 4 * hidden, &present);
    if (status == PTEC_OK && !present) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_INPUT_BIAS,
                            PTEC_MSG("input_effective_bias (int64 [4 * hidden_size]) is required"));
    }
    if (status == PTEC_OK) status = ptec_cm_check_bias_s64(op, ARG_HIDDEN_BIAS, 4 * hidden, &state->has_hidden_bias);
    if (status == PTEC_OK) status = ptec_cm_check_per_channel_s64(op, ARG_MULTIPLIERS, ARG_SHIFTS, 8);
    if (status == PTEC_OK) status = ptec_cm_get_requant(op, ARG_FORGET_TO_CELL, &p->forget_to_cell);
    if (status == PTEC_OK) status = ptec_cm_get_requant(op, ARG_INPUT_TO_CELL, &p->input_to_cell);
    if (status == PTEC_OK) status = ptec_cm_get_requant(op, ARG_OUTPUT_MULT, &p->output);
    if (status == PTEC_OK) status = ptec_cm_get_int_in(op, ARG_CELL_CLIP, 0, INT16_MAX, &p->cell_clip);
    if (status == PTEC_OK) status = ptec_cm_get_int_in(op, ARG_CELL_SCALE_POWER, -27, 2, &p->cell_scale_power);
    if (status != PTEC_OK) {
        return status;
    }
    const int32_t *mults = (const int32_t *)ptec_op_tensor(op, ARG_MULTIPLIERS)->data;
    const int32_t *shifts = (const int32_t *)ptec_op_tensor(op, ARG_SHIFTS)->data;
    for (int k = 0; k < 4; ++k) {
        p->gate_input[k].multiplier = mults[k];
        p->gate_input[k].shift = shifts[k];
        p->gate_hidden[k].multiplier = mults[4 + k];
        p->gate_hidden[k].shift = shifts[4 + k];
    }
    p->time_steps = steps;
    p->batches = batches;
    p->input_size = features;
    p->hidden_size = hidden;
    op->scratch_bytes = ptec_nn_lstm_s16_buffer_size(hidden);
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const lstm_a16_state *state = (const lstm_a16_state *)op->state;
    const ptec_nn_buffer scratch = {op->scratch, op->scratch_bytes};
    return ptec_nn_lstm_s16(scratch, &state->params, ptec_cm_in16(op, ARG_INPUT), ptec_cm_in8(op, ARG_INPUT_WEIGHTS),
                            ptec_cm_in8(op, ARG_HIDDEN_WEIGHTS), ptec_cm_optional_in64(op, ARG_INPUT_BIAS, true),
                            ptec_cm_optional_in64(op, ARG_HIDDEN_BIAS, state->has_hidden_bias), ptec_cm_out16(op));
}

const ptec_kernel ptec_kernel_ptec_quantized_lstm_a16_out = {"ptec::quantized_lstm_a16.out", sizeof(lstm_a16_state),
                                                             prepare, run};
