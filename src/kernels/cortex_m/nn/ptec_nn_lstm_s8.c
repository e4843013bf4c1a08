/* int8 LSTM with int16 gates and cell (ptec_nn.h, docs/kernels.md "LSTM"):
 * the numerics of CMSIS-NN's arm_lstm_unidirectional_s8 (one
 * arm_nn_lstm_step_s8 per time step), written as one portable reference.
 * CMSIS-NN's DSP and Helium code paths differ only inside its
 * vector-matrix product and element-wise multiplies, which give the same
 * bits; every build of ptec runs this file, its gate products through the
 * convolutions' dot products (ptec_nn_dot.h), which have DSP and Helium
 * forms.
 *
 * Per step and batch, with rq(v, m, s) = ptec_nn_requantize and sat16 a
 * clamp to int16:
 *   gate[k] = act_k(sat16(sat16(rq(Wx_k x + bx_k)) + rq(Wh_k h + bh_k)))
 *   c = sat16(rq(f * c, forget_to_cell))
 *   c = clamp(c + rq(i * g, input_to_cell), +-cell_clip or int16)
 *   h = clamp(rq(o * tanh(c * 2^(cell_scale_power + 12)), output) + zp, int8)
 * with act = sigmoid for i, f, o and tanh for g. Without a given state, at
 * t = 0 the hidden term is left out (a zero hidden state: h = zp makes
 * Wh h + bh exactly 0) and c starts at 0; with one (the streaming form),
 * h and c start from it, the hidden term is always taken, and the final
 * h and c are written back to it. */
#include <string.h>

#include "ptec_nn_dot.h"
#include "ptec_nn_lstm_cell.h"
#include "ptec_nn_math.h"

uint32_t ptec_nn_lstm_s8_buffer_size(int32_t hidden_size)
{
    return hidden_size > 0 ? 3u * (uint32_t)hidden_size * (uint32_t)sizeof(int16_t) : 0u;
}

/* dst[r] = sat16(dst[r] + rq(bias + dot)) for one row. */
static void gate_finish(int16_t *dst, int32_t bias, uint32_t dot, ptec_nn_quant quant)
{
    const int32_t acc = (int32_t)((uint32_t)bias + dot);
    const int64_t sum = (int64_t)ptec_nn_requantize(acc, quant.multiplier, quant.shift) + *dst;
    *dst = (int16_t)(sum < INT16_MIN ? INT16_MIN : sum > INT16_MAX ? INT16_MAX : sum);
}

/* dst[r] = sat16(dst[r] + rq(bias[r] + sum_c w[r][c] * v[c])) for r < rows,
 * the int32 accumulator wrapping as CMSIS-NN's. The dot products are the
 * convolutions' (ptec_nn_dot.h, with DSP and Helium forms): a sum modulo
 * 2^32 is the same in any order, so every form gives the same bits. */
static void gate_accumulate(const int8_t *v, const int8_t *w, const int32_t *bias, int32_t rows, int32_t cols,
                            ptec_nn_quant quant, int16_t *dst)
{
    const size_t n = (size_t)cols;
    int32_t r = 0;
    for (; r + 4 <= rows; r += 4) {
        uint32_t sums[4] = {0u, 0u, 0u, 0u};
        ptec_nn_dot4_s8(v, w + (size_t)r * n, n, n, sums);
        for (int32_t k = 0; k < 4; ++k) {
            gate_finish(dst + r + k, bias[r + k], sums[k], quant);
        }
    }
    for (; r < rows; ++r) {
        gate_finish(dst + r, bias[r], ptec_nn_dot_s8(v, w + (size_t)r * n, n), quant);
    }
}

static void gate(const ptec_nn_lstm_params *p, int k, const int8_t *x, const int8_t *h, const int8_t *input_weights,
                 const int8_t *hidden_weights, const int32_t *input_bias, const int32_t *hidden_bias, int16_t *dst)
{
    const int32_t n = p->hidden_size;
    const size_t first = (size_t)k * (size_t)n;
    memset(dst, 0, (size_t)n * sizeof(int16_t));
    gate_accumulate(x, input_weights + first * (size_t)p->input_size, input_bias + first, n, p->input_size,
                    p->gate_input[k], dst);
    if (h != NULL) {
        gate_accumulate(h, hidden_weights + first * (size_t)n, hidden_bias + first, n, n, p->gate_hidden[k], dst);
    }
    for (int32_t j = 0; j < n; ++j) {
        dst[j] = k == PTEC_NN_GATE_G ? ptec_nn_tanh_s16(dst[j], 0) : ptec_nn_sigmoid_s16(dst[j], 0);
    }
}

static void step(const ptec_nn_lstm_params *p, const int8_t *x, const int8_t *h, const int8_t *input_weights,
                 const int8_t *hidden_weights, const int32_t *input_bias, const int32_t *hidden_bias, int16_t *gate_a,
                 int16_t *gate_b, int16_t *cell, int8_t *out)
{
    gate(p, PTEC_NN_GATE_F, x, h, input_weights, hidden_weights, input_bias, hidden_bias, gate_a);
    ptec_nn_lstm_forget(p, gate_a, cell);
    gate(p, PTEC_NN_GATE_I, x, h, input_weights, hidden_weights, input_bias, hidden_bias, gate_a);
    gate(p, PTEC_NN_GATE_G, x, h, input_weights, hidden_weights, input_bias, hidden_bias, gate_b);
    ptec_nn_lstm_add_input(p, gate_a, gate_b, cell);
    gate(p, PTEC_NN_GATE_O, x, h, input_weights, hidden_weights, input_bias, hidden_bias, gate_a);
    for (int32_t j = 0; j < p->hidden_size; ++j) {
        const int32_t t = ptec_nn_tanh_s16(cell[j], p->cell_scale_power + 12);
        out[j] = ptec_nn_requantize_s8(gate_a[j] * t, p->output.multiplier, p->output.shift, p->output_offset,
                                       INT8_MIN, INT8_MAX);
    }
}

ptec_status ptec_nn_lstm_s8_stateful(ptec_nn_buffer scratch, const ptec_nn_lstm_params *params, const int8_t *input,
                                     const int8_t *input_weights, const int8_t *hidden_weights,
                                     const int32_t *input_bias, const int32_t *hidden_bias, int8_t *output,
                                     int8_t *hidden_state, int16_t *cell_state)
{
    if (!ptec_nn_lstm_params_ok(params) || (hidden_state == NULL) != (cell_state == NULL)) {
        return PTEC_INVALID_ARGUMENT;
    }
    if (params->time_steps == 0 || params->batches == 0) {
        return PTEC_OK; /* no step: a given state stays as it is */
    }
    if (input == NULL || input_weights == NULL || hidden_weights == NULL || input_bias == NULL ||
        hidden_bias == NULL || output == NULL || scratch.buf == NULL ||
        scratch.size < ptec_nn_lstm_s8_buffer_size(params->hidden_size)) {
        return PTEC_INVALID_ARGUMENT;
    }
    const size_t n = (size_t)params->hidden_size;
    const size_t in = (size_t)params->input_size;
    const size_t steps = (size_t)params->time_steps;
    const size_t batches = (size_t)params->batches;
    int16_t *gate_a = (int16_t *)scratch.buf;
    int16_t *gate_b = gate_a + n;
    for (size_t b = 0; b < batches; ++b) {
        /* A given state: batch b's rows are the starting h and c, the cell
         * updated in place and h written back after the last step. With
         * none, h is left out at t = 0 and the cell starts at zero. */
        const int8_t *h = hidden_state != NULL ? hidden_state + b * n : NULL;
        int16_t *cell = cell_state != NULL ? cell_state + b * n : gate_b + n;
        if (cell_state == NULL) {
            memset(cell, 0, n * sizeof(int16_t));
        }
        for (size_t t = 0; t < steps; ++t) {
            /* the row (t, b) of [T, B, *] or (b, t) of [B, T, *] */
            const size_t row = params->batch_first ? b * steps + t : t * batches + b;
            int8_t *out = output + row * n;
            step(params, input + row * in, h, input_weights, hidden_weights, input_bias, hidden_bias, gate_a,
                 gate_b, cell, out);
            h = out;
        }
        if (hidden_state != NULL) {
            memcpy(hidden_state + b * n, h, n); /* h is the last output row, never the state itself */
        }
    }
    return PTEC_OK;
}

ptec_status ptec_nn_lstm_s8(ptec_nn_buffer scratch, const ptec_nn_lstm_params *params, const int8_t *input,
                            const int8_t *input_weights, const int8_t *hidden_weights, const int32_t *input_bias,
                            const int32_t *hidden_bias, int8_t *output)
{
    return ptec_nn_lstm_s8_stateful(scratch, params, input, input_weights, hidden_weights, input_bias, hidden_bias,
                                    output, NULL, NULL);
}
