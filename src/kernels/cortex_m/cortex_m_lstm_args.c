/* The argument checks the two LSTM kernels share (cortex_m_lstm_args.h).
 * Each failure names its argument; the int16 kernel's messages say int16
 * where the tensor's dtype is the difference. */
#include "cortex_m_lstm_args.h"

/* 3 * 2 * H bytes of scratch stay far inside uint32, and an int16 gate's
 * sum of up to 2^24 products far inside its 64-bit accumulator. */
enum { MAX_HIDDEN = 1 << 24 };

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

ptec_status ptec_cm_lstm_shape(ptec_op *op, ptec_dtype act, size_t batch_first_arg, ptec_nn_lstm_params *p)
{
    const bool wide = act == PTEC_DTYPE_SHORT;
    ptec_tensor *input, *input_weights, *out;
    ptec_status status = ptec_cm_get_tensor_of(op, PTEC_CM_LSTM_INPUT, act, &input);
    if (status == PTEC_OK) {
        status = ptec_cm_get_tensor_of(op, PTEC_CM_LSTM_INPUT_WEIGHTS, PTEC_DTYPE_CHAR, &input_weights);
    }
    if (status == PTEC_OK) status = ptec_cm_get_out_of(op, act, &out);
    if (status == PTEC_OK) status = ptec_op_get_bool(op, batch_first_arg, &p->batch_first);
    if (status != PTEC_OK) {
        return status;
    }
    if (input_weights->rank != 2 || input_weights->sizes[0] < 4 || input_weights->sizes[0] % 4 != 0 ||
        input_weights->sizes[0] / 4 > MAX_HIDDEN || input_weights->sizes[1] < 1) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, PTEC_CM_LSTM_INPUT_WEIGHTS,
                            PTEC_MSG("input_weights must be [4 * hidden_size, input_size], hidden_size >= 1"));
    }
    const int32_t hidden = input_weights->sizes[0] / 4;
    const int32_t features = input_weights->sizes[1];
    status = get_weights(op, PTEC_CM_LSTM_INPUT_WEIGHTS, 4 * hidden, features,
                         PTEC_MSG("input_weights must be a contiguous [4 * hidden_size, input_size] tensor"));
    if (status == PTEC_OK) {
        status = get_weights(op, PTEC_CM_LSTM_HIDDEN_WEIGHTS, 4 * hidden, hidden,
                             PTEC_MSG("hidden_weights must be a contiguous [4 * hidden_size, hidden_size] tensor"));
    }
    if (status != PTEC_OK) {
        return status;
    }
    if (!ptec_tensor_is_contiguous(input) || (input->rank != 2 && input->rank != 3) ||
        input->sizes[input->rank - 1] != features) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, PTEC_CM_LSTM_INPUT,
                            wide ? PTEC_MSG("input must be contiguous int16 [T, input_size] or [T, B, input_size] "
                                            "([B, T, input_size] with batch_first)")
                                 : PTEC_MSG("input must be contiguous [T, input_size] or [T, B, input_size] "
                                            "([B, T, input_size] with batch_first)"));
    }
    bool out_ok = ptec_tensor_is_contiguous(out) && out->rank == input->rank && out->sizes[out->rank - 1] == hidden;
    for (uint32_t d = 0; out_ok && d + 1u < input->rank; ++d) {
        out_ok = out->sizes[d] == input->sizes[d];
    }
    if (!out_ok) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, (int)op->argc - 2,
                            wide ? PTEC_MSG("out must be contiguous int16, shaped as input with hidden_size last")
                                 : PTEC_MSG("out must be contiguous, shaped as input with hidden_size last"));
    }
    p->time_steps = input->sizes[0];
    p->batches = 1;
    if (input->rank == 3) {
        p->time_steps = p->batch_first ? input->sizes[1] : input->sizes[0];
        p->batches = p->batch_first ? input->sizes[0] : input->sizes[1];
    }
    p->input_size = features;
    p->hidden_size = hidden;
    return PTEC_OK;
}

ptec_status ptec_cm_lstm_quant(ptec_op *op, bool wide, ptec_nn_lstm_params *p)
{
    ptec_status status = wide ? ptec_cm_check_per_channel_s64(op, PTEC_CM_LSTM_MULTIPLIERS, PTEC_CM_LSTM_SHIFTS, 8)
                              : ptec_cm_check_per_channel(op, PTEC_CM_LSTM_MULTIPLIERS, PTEC_CM_LSTM_SHIFTS, 8);
    if (status == PTEC_OK) status = ptec_cm_get_requant(op, PTEC_CM_LSTM_FORGET_TO_CELL, &p->forget_to_cell);
    if (status == PTEC_OK) status = ptec_cm_get_requant(op, PTEC_CM_LSTM_INPUT_TO_CELL, &p->input_to_cell);
    if (status == PTEC_OK) status = ptec_cm_get_requant(op, PTEC_CM_LSTM_OUTPUT_MULT, &p->output);
    if (status == PTEC_OK) status = ptec_cm_get_int_in(op, PTEC_CM_LSTM_CELL_CLIP, 0, INT16_MAX, &p->cell_clip);
    if (status == PTEC_OK) {
        status = ptec_cm_get_int_in(op, PTEC_CM_LSTM_CELL_SCALE_POWER, -27, 2, &p->cell_scale_power);
    }
    if (status != PTEC_OK) {
        return status;
    }
    const int32_t *mults = (const int32_t *)ptec_op_tensor(op, PTEC_CM_LSTM_MULTIPLIERS)->data;
    const int32_t *shifts = (const int32_t *)ptec_op_tensor(op, PTEC_CM_LSTM_SHIFTS)->data;
    for (int k = 0; k < 4; ++k) {
        p->gate_input[k] = (ptec_nn_quant){mults[k], shifts[k]};
        p->gate_hidden[k] = (ptec_nn_quant){mults[4 + k], shifts[4 + k]};
    }
    return PTEC_OK;
}
