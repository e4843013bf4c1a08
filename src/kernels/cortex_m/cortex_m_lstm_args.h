/* The arguments the int8 and int16 LSTM kernels share (op_quantized_lstm.c,
 * op_quantized_lstm_a16.c): both schemas start input, input_weights,
 * hidden_weights, the two effective biases, gate_multipliers, gate_shifts,
 * then the forget_to_cell, input_to_cell and output (multiplier, shift)
 * pairs, cell_clip and cell_scale_power, and end with out. */
#ifndef PTEC_CORTEX_M_LSTM_ARGS_H
#define PTEC_CORTEX_M_LSTM_ARGS_H

#include "cortex_m_args.h"

enum {
    PTEC_CM_LSTM_INPUT, PTEC_CM_LSTM_INPUT_WEIGHTS, PTEC_CM_LSTM_HIDDEN_WEIGHTS, PTEC_CM_LSTM_INPUT_BIAS,
    PTEC_CM_LSTM_HIDDEN_BIAS, PTEC_CM_LSTM_MULTIPLIERS, PTEC_CM_LSTM_SHIFTS, PTEC_CM_LSTM_FORGET_TO_CELL,
    PTEC_CM_LSTM_FORGET_TO_CELL_SHIFT, PTEC_CM_LSTM_INPUT_TO_CELL, PTEC_CM_LSTM_INPUT_TO_CELL_SHIFT,
    PTEC_CM_LSTM_OUTPUT_MULT, PTEC_CM_LSTM_OUTPUT_SHIFT, PTEC_CM_LSTM_CELL_CLIP, PTEC_CM_LSTM_CELL_SCALE_POWER
};

/* input, the weights and out (activations of dtype act: int8 or int16),
 * batch_first (argument batch_first_arg): fills the shape fields and
 * batch_first of p. */
ptec_status ptec_cm_lstm_shape(ptec_op *op, ptec_dtype act, size_t batch_first_arg, ptec_nn_lstm_params *p);

/* The eight gate (multiplier, shift) pairs (int64-range shifts in
 * [-31, 7] when wide, the int16 LSTM's), the cell's and the output's
 * requantization, cell_clip and cell_scale_power into p. */
ptec_status ptec_cm_lstm_quant(ptec_op *op, bool wide, ptec_nn_lstm_params *p);

#endif
