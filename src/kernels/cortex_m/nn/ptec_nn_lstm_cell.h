/* The pieces the int8 and int16 LSTM layers share (ptec_nn_lstm_cell.c). */
#ifndef PTEC_NN_LSTM_CELL_H
#define PTEC_NN_LSTM_CELL_H

#include "ptec_nn.h"

enum { PTEC_NN_GATE_I, PTEC_NN_GATE_F, PTEC_NN_GATE_G, PTEC_NN_GATE_O };

/* The shape, cell scale and clip in range (the layers check their own
 * gate shifts, which the int16 one bounds more tightly). */
bool ptec_nn_lstm_params_ok(const ptec_nn_lstm_params *p);

/* c = sat16(rq(f * c, forget_to_cell)), for hidden_size values. */
void ptec_nn_lstm_forget(const ptec_nn_lstm_params *p, const int16_t *forget, int16_t *cell);

/* c = clamp(c + rq(i * g, input_to_cell), +-cell_clip, or int16 when
 * cell_clip is 0), for hidden_size values. */
void ptec_nn_lstm_add_input(const ptec_nn_lstm_params *p, const int16_t *input_gate, const int16_t *cell_gate,
                            int16_t *cell);

#endif
