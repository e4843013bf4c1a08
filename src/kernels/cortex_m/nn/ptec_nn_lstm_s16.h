/* int16 LSTM with int8 weights (docs/kernels.md "int16 LSTM"): the numerics
 * of CMSIS-NN's arm_lstm_unidirectional_s16, on the int8 LSTM's parameter
 * struct (ptec_nn.h). */
#ifndef PTEC_NN_LSTM_S16_H
#define PTEC_NN_LSTM_S16_H

#include "ptec_nn.h"

/* One unidirectional LSTM layer. Gates in PyTorch's order i, f, g, o: the
 * weights are [4 * hidden, input] and [4 * hidden, hidden] int8 row-major,
 * the effective biases 4 * hidden int64 (int16 activations are symmetric,
 * so there is nothing to fold in: they are the float bias on the input
 * product's grid, and zero or absent on the hidden side). Each gate is
 * sat16(sat16(rq64(Wx x + bx)) + rq64(Wh h + bh)) in Q3.12, rq64 the
 * 64-bit requantization of the s16 kernels (ptec_nn_math.h), then sigmoid
 * (i, f, o) or tanh (g) to Q0.15. The cell is int16 at 2^cell_scale_power;
 * the output (and hidden state) int16 with zero point 0. The initial
 * hidden and cell states are zero. The parameters are the int8 LSTM's
 * (ptec_nn.h) with output_offset 0 and every gate shift in [-31, 7]. */

/* Three int16 vectors of hidden_size: two gate buffers and the cell. */
uint32_t ptec_nn_lstm_s16_buffer_size(int32_t hidden_size);

/* input [T, B, input_size] ([B, T, input_size] with batch_first), output
 * the same with hidden_size; hidden_bias may be NULL (zero). */
ptec_status ptec_nn_lstm_s16(ptec_nn_buffer scratch, const ptec_nn_lstm_params *params, const int16_t *input,
                             const int8_t *input_weights, const int8_t *hidden_weights, const int64_t *input_bias,
                             const int64_t *hidden_bias, int16_t *output);

#endif
