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
#include "cortex_m_lstm_args.h"
#include "nn/ptec_nn_lstm_s16.h"

/* After the arguments both LSTM kernels share (cortex_m_lstm_args.h). */
enum { ARG_BATCH_FIRST = PTEC_CM_LSTM_CELL_SCALE_POWER + 1, ARG_OUT, ARG_COUNT };

typedef struct lstm_a16_state {
    ptec_nn_lstm_params params;
    bool has_hidden_bias;
} lstm_a16_state;

static ptec_status prepare(ptec_op *op)
{
    lstm_a16_state *state = (lstm_a16_state *)op->state;
    ptec_nn_lstm_params *p = &state->params;
    bool present = false;
    ptec_status status = ptec_op_expect_argc(op, ARG_COUNT + 1);
    if (status == PTEC_OK) status = ptec_cm_lstm_shape(op, PTEC_DTYPE_SHORT, ARG_BATCH_FIRST, p);
    if (status == PTEC_OK) status = ptec_cm_check_bias_s64(op, PTEC_CM_LSTM_INPUT_BIAS, 4 * p->hidden_size, &present);
    if (status == PTEC_OK && !present) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, PTEC_CM_LSTM_INPUT_BIAS,
                            PTEC_MSG("input_effective_bias (int64 [4 * hidden_size]) is required"));
    }
    if (status == PTEC_OK) {
        status = ptec_cm_check_bias_s64(op, PTEC_CM_LSTM_HIDDEN_BIAS, 4 * p->hidden_size, &state->has_hidden_bias);
    }
    if (status == PTEC_OK) status = ptec_cm_lstm_quant(op, true, p);
    if (status != PTEC_OK) {
        return status;
    }
    p->output_offset = 0;
    op->scratch_bytes = ptec_nn_lstm_s16_buffer_size(p->hidden_size);
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const lstm_a16_state *state = (const lstm_a16_state *)op->state;
    const ptec_nn_buffer scratch = {op->scratch, op->scratch_bytes};
    return ptec_nn_lstm_s16(scratch, &state->params, ptec_cm_in16(op, PTEC_CM_LSTM_INPUT),
                            ptec_cm_in8(op, PTEC_CM_LSTM_INPUT_WEIGHTS), ptec_cm_in8(op, PTEC_CM_LSTM_HIDDEN_WEIGHTS),
                            ptec_cm_optional_in64(op, PTEC_CM_LSTM_INPUT_BIAS, true),
                            ptec_cm_optional_in64(op, PTEC_CM_LSTM_HIDDEN_BIAS, state->has_hidden_bias),
                            ptec_cm_out16(op));
}

const ptec_kernel ptec_kernel_ptec_quantized_lstm_a16_out = {"ptec::quantized_lstm_a16.out", sizeof(lstm_a16_state),
                                                             prepare, run};
