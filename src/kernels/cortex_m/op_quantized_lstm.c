/* ptec::quantized_lstm.out(Tensor input, Tensor input_weights,
 *     Tensor hidden_weights, Tensor input_effective_bias,
 *     Tensor hidden_effective_bias, Tensor gate_multipliers,
 *     Tensor gate_shifts, int forget_to_cell_multiplier,
 *     int forget_to_cell_shift, int input_to_cell_multiplier,
 *     int input_to_cell_shift, int output_multiplier, int output_shift,
 *     int cell_clip, int cell_scale_power, int output_zero_point,
 *     bool batch_first, Tensor? initial_hidden, Tensor? initial_cell,
 *     Tensor out)
 * One layer of a unidirectional nn.LSTM on int8 with int16 gates and cell
 * (nn/ptec_nn_lstm_s8.c, CMSIS-NN arm_lstm_unidirectional_s8 numerics;
 * docs/kernels.md "LSTM"). input is [T, I] or, by batch_first, [T, B, I]
 * or [B, T, I]; out has the same layout with H. Gates in PyTorch's order
 * i, f, g, o: weights [4H, I] and [4H, H], effective biases [4H], the
 * eight (multiplier, shift) pairs as gate_multipliers[k] (input side of
 * gate k) and [4 + k] (hidden side). With initial_hidden and initial_cell
 * None the initial state is zero. Given (both or neither: the streaming
 * form), initial_hidden (int8 [B, H], on out's grid) and initial_cell
 * (int16 [B, H], at the cell scale 2^cell_scale_power) are writable
 * tensors, disjoint from input and out, that hold the starting h and c and
 * receive the final h and c at the end of the execute: an in/out state
 * (docs/kernels.md "LSTM"). A ptec operator (upstream has none). */
#include "cortex_m_lstm_args.h"

/* After the arguments both LSTM kernels share (cortex_m_lstm_args.h). */
enum {
    ARG_INPUT = PTEC_CM_LSTM_INPUT, ARG_INPUT_BIAS = PTEC_CM_LSTM_INPUT_BIAS, ARG_HIDDEN_BIAS = PTEC_CM_LSTM_HIDDEN_BIAS,
    ARG_OUTPUT_ZP = PTEC_CM_LSTM_CELL_SCALE_POWER + 1, ARG_BATCH_FIRST, ARG_INITIAL_HIDDEN, ARG_INITIAL_CELL, ARG_OUT,
    ARG_COUNT
};

static bool disjoint(const ptec_tensor *a, const ptec_tensor *b)
{
    const uintptr_t a0 = (uintptr_t)a->data, b0 = (uintptr_t)b->data;
    if (a->data == NULL || b->data == NULL || a->nbytes == 0 || b->nbytes == 0) {
        return true; /* not bound yet (run checks again) or empty */
    }
    return a0 >= b0 ? a0 - b0 >= b->nbytes : b0 - a0 >= a->nbytes;
}

/* The state tensors, when given: writable, contiguous [B, H], disjoint
 * from each other, input and out (checked at prepare for planned memory
 * and again at run, when bound inputs have their memory). */
static ptec_status check_state(ptec_op *op, int32_t batches, int32_t hidden)
{
    const bool has_h = !ptec_op_arg_is_null(op, ARG_INITIAL_HIDDEN);
    const bool has_c = !ptec_op_arg_is_null(op, ARG_INITIAL_CELL);
    if (has_h != has_c) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, has_h ? ARG_INITIAL_CELL : ARG_INITIAL_HIDDEN,
                            PTEC_MSG("initial_hidden and initial_cell must be given together or both be None"));
    }
    if (!has_h) {
        return PTEC_OK;
    }
    static const size_t args[2] = {ARG_INITIAL_HIDDEN, ARG_INITIAL_CELL};
    static const ptec_dtype dtypes[2] = {PTEC_DTYPE_CHAR, PTEC_DTYPE_SHORT};
    const char *const messages[2] = {
        PTEC_MSG("initial_hidden must be a writable contiguous int8 [batch, hidden] tensor"),
        PTEC_MSG("initial_cell must be a writable contiguous int16 [batch, hidden] tensor")};
    ptec_tensor *t[2];
    const ptec_tensor *input = ptec_op_tensor(op, ARG_INPUT), *out = ptec_op_tensor(op, ARG_OUT);
    for (int k = 0; k < 2; ++k) {
        ptec_status status = ptec_cm_get_tensor_of(op, args[k], dtypes[k], &t[k]);
        if (status != PTEC_OK) {
            return status;
        }
        if (t[k]->rank != 2 || !ptec_tensor_is_contiguous(t[k]) || t[k]->sizes[0] != batches ||
            t[k]->sizes[1] != hidden || (t[k]->flags & PTEC_TENSOR_CONSTANT) != 0) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, (int)args[k], messages[k]);
        }
        if (!disjoint(t[k], input) || !disjoint(t[k], out)) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, (int)args[k],
                                PTEC_MSG("initial_hidden and initial_cell must not overlap input or out"));
        }
    }
    if (!disjoint(t[0], t[1])) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_INITIAL_CELL,
                            PTEC_MSG("initial_hidden and initial_cell must not overlap"));
    }
    return PTEC_OK;
}

typedef struct lstm_state {
    ptec_nn_lstm_params params;
} lstm_state;

static ptec_status prepare(ptec_op *op)
{
    lstm_state *state = (lstm_state *)op->state;
    ptec_nn_lstm_params *p = &state->params;
    bool present = false;
    ptec_status status = ptec_op_expect_argc(op, ARG_COUNT + 1);
    if (status == PTEC_OK) status = ptec_cm_lstm_shape(op, PTEC_DTYPE_CHAR, ARG_BATCH_FIRST, p);
    if (status == PTEC_OK) status = ptec_cm_check_bias(op, ARG_INPUT_BIAS, 4 * p->hidden_size, &present);
    if (status == PTEC_OK && !present) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_INPUT_BIAS, PTEC_MSG("input_effective_bias is required"));
    }
    if (status == PTEC_OK) status = ptec_cm_check_bias(op, ARG_HIDDEN_BIAS, 4 * p->hidden_size, &present);
    if (status == PTEC_OK && !present) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_HIDDEN_BIAS,
                            PTEC_MSG("hidden_effective_bias is required"));
    }
    if (status == PTEC_OK) status = ptec_cm_lstm_quant(op, false, p);
    if (status == PTEC_OK) status = ptec_cm_get_int_in(op, ARG_OUTPUT_ZP, INT8_MIN, INT8_MAX, &p->output_offset);
    if (status == PTEC_OK) status = check_state(op, p->batches, p->hidden_size);
    if (status != PTEC_OK) {
        return status;
    }
    op->scratch_bytes = ptec_nn_lstm_s8_buffer_size(p->hidden_size);
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const lstm_state *state = (const lstm_state *)op->state;
    const ptec_nn_buffer scratch = {op->scratch, op->scratch_bytes};
    int8_t *hidden_state = NULL;
    int16_t *cell_state = NULL;
    if (!ptec_op_arg_is_null(op, ARG_INITIAL_HIDDEN)) {
        const ptec_status status = check_state(op, state->params.batches, state->params.hidden_size);
        if (status != PTEC_OK) {
            return status;
        }
        hidden_state = (int8_t *)ptec_op_tensor(op, ARG_INITIAL_HIDDEN)->data;
        cell_state = (int16_t *)ptec_op_tensor(op, ARG_INITIAL_CELL)->data;
    }
    return ptec_nn_lstm_s8_stateful(scratch, &state->params, ptec_cm_in8(op, ARG_INPUT),
                                    ptec_cm_in8(op, PTEC_CM_LSTM_INPUT_WEIGHTS),
                                    ptec_cm_in8(op, PTEC_CM_LSTM_HIDDEN_WEIGHTS),
                                    ptec_cm_in32(op, ARG_INPUT_BIAS), ptec_cm_in32(op, ARG_HIDDEN_BIAS),
                                    ptec_cm_out8(op), hidden_state, cell_state);
}

const ptec_kernel ptec_kernel_ptec_quantized_lstm_out = {"ptec::quantized_lstm.out", sizeof(lstm_state), prepare,
                                                         run};
