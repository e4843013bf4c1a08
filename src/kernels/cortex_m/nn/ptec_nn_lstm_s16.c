/* int16 LSTM with int8 weights, int64 biases and int16 gates and cell
 * (ptec_nn_lstm_s16.h, docs/kernels.md "int16 LSTM"): the numerics of
 * CMSIS-NN's arm_lstm_unidirectional_s16 (arm_nn_lstm_step_s16, its gates
 * from arm_nn_vec_mat_mul_result_acc_s16), as one portable reference that
 * every build runs.
 *
 * Per step and batch, with rq64(v, m, s) the s16 kernels' 64-bit
 * requantization (v saturated to +-(2^48 - 1), times m rounded to Q15,
 * / 2^(15 - s) rounded half up), rq the int8 kernels' 32-bit one and sat16
 * a clamp to int16:
 *   gate[k] = act_k(sat16(sat16(rq64(Wx_k x + bx_k)) + rq64(Wh_k h + bh_k)))
 *   c = sat16(rq(f * c, forget_to_cell))
 *   c = clamp(c + rq(i * g, input_to_cell), +-cell_clip or int16)
 *   h = sat16(rq(o * tanh(c * 2^(cell_scale_power + 12)), output))
 * with act = sigmoid for i, f, o and tanh for g (CMSIS-NN's table
 * activation, ptec_nn_sigmoid_s16 / ptec_nn_tanh_s16). At t = 0 the hidden
 * term is left out (the hidden state is zero). The DSP and Helium builds
 * take the gate sums from the s16 fully connected layer's dot product
 * (PTEC_NN_DOT_ROWS_S16), which gives the same exact integers. */
#include <string.h>

#include "ptec_nn_lstm_cell.h"
#include "ptec_nn_lstm_s16.h"
#include "ptec_nn_math.h"
#include "ptec_nn_variants.h"

uint32_t ptec_nn_lstm_s16_buffer_size(int32_t hidden_size)
{
    return hidden_size > 0 ? 3u * (uint32_t)hidden_size * (uint32_t)sizeof(int16_t) : 0u;
}

/* dst[r] = sat16(dst[r] + rq64(bias[r] + sum_c w[r][c] * v[c])), r < rows.
 * |v[c] * w[r][c]| <= 2^22, so the exact sum of any int32 count of products
 * stays below 2^53; ptec_nn_add_bias_s64 saturates it with the bias to
 * 2^48, and the requantized value (< 2^56) plus an int16 fits int64. */
static void gate_accumulate(const int16_t *v, const int8_t *w, const int64_t *bias, int32_t rows, int32_t cols,
                            ptec_nn_quant quant, int16_t *dst)
{
    const int32_t reduced = ptec_nn_reduce_multiplier(quant.multiplier);
#if defined(PTEC_NN_DOT_ROWS_S16)
    /* The DSP and Helium builds: two rows per pass over v with the s16
     * fully connected layer's dot product, the same exact int64 sum
     * (ptec_nn_dot_rows_s16_dsp.c, _mve.c); the order of an exact sum does
     * not change it, so the results are the reference's. */
    const size_t n = (size_t)cols;
    for (int32_t r = 0; r < rows; r += 2) {
        const int32_t pair = rows - r >= 2 ? 2 : 1;
        int64_t acc[2] = {0, 0};
        PTEC_NN_DOT_ROWS_S16(v, w + (size_t)r * n, n, n, pair, acc);
        for (int32_t i = 0; i < pair; ++i) {
            const int64_t q =
                ptec_nn_requantize_s64(ptec_nn_add_bias_s64(acc[i], bias, r + i), reduced, quant.shift);
            dst[r + i] = ptec_nn_clamp_s16(q + dst[r + i], INT16_MIN, INT16_MAX);
        }
    }
#else
    for (int32_t r = 0; r < rows; ++r) {
        const int8_t *row = w + (size_t)r * (size_t)cols;
        int64_t acc = 0;
        for (int32_t c = 0; c < cols; ++c) {
            acc += (int32_t)v[c] * (int32_t)row[c];
        }
        const int64_t q = ptec_nn_requantize_s64(ptec_nn_add_bias_s64(acc, bias, r), reduced, quant.shift);
        dst[r] = ptec_nn_clamp_s16(q + dst[r], INT16_MIN, INT16_MAX);
    }
#endif
}

static void gate(const ptec_nn_lstm_params *p, int k, const int16_t *x, const int16_t *h,
                 const int8_t *input_weights, const int8_t *hidden_weights, const int64_t *input_bias,
                 const int64_t *hidden_bias, int16_t *dst)
{
    const int32_t n = p->hidden_size;
    const size_t first = (size_t)k * (size_t)n;
    memset(dst, 0, (size_t)n * sizeof(int16_t));
    gate_accumulate(x, input_weights + first * (size_t)p->input_size, input_bias + first, n, p->input_size,
                    p->gate_input[k], dst);
    if (h != NULL) {
        gate_accumulate(h, hidden_weights + first * (size_t)n, hidden_bias != NULL ? hidden_bias + first : NULL, n,
                        n, p->gate_hidden[k], dst);
    }
    for (int32_t j = 0; j < n; ++j) {
        dst[j] = k == PTEC_NN_GATE_G ? ptec_nn_tanh_s16(dst[j], 0) : ptec_nn_sigmoid_s16(dst[j], 0);
    }
}

static void step(const ptec_nn_lstm_params *p, const int16_t *x, const int16_t *h, const int8_t *input_weights,
                 const int8_t *hidden_weights, const int64_t *input_bias, const int64_t *hidden_bias,
                 int16_t *gate_a, int16_t *gate_b, int16_t *cell, int16_t *out)
{
    gate(p, PTEC_NN_GATE_F, x, h, input_weights, hidden_weights, input_bias, hidden_bias, gate_a);
    ptec_nn_lstm_forget(p, gate_a, cell);
    gate(p, PTEC_NN_GATE_I, x, h, input_weights, hidden_weights, input_bias, hidden_bias, gate_a);
    gate(p, PTEC_NN_GATE_G, x, h, input_weights, hidden_weights, input_bias, hidden_bias, gate_b);
    ptec_nn_lstm_add_input(p, gate_a, gate_b, cell);
    gate(p, PTEC_NN_GATE_O, x, h, input_weights, hidden_weights, input_bias, hidden_bias, gate_a);
    for (int32_t j = 0; j < p->hidden_size; ++j) {
        const int32_t t = ptec_nn_tanh_s16(cell[j], p->cell_scale_power + 12);
        out[j] = ptec_nn_clamp_s16(ptec_nn_requantize(gate_a[j] * t, p->output.multiplier, p->output.shift),
                                   INT16_MIN, INT16_MAX);
    }
}

static bool shifts_ok(const ptec_nn_quant *q)
{
    for (int k = 0; k < 4; ++k) {
        if (q[k].shift < -31 || q[k].shift > 7) {
            return false;
        }
    }
    return true;
}

ptec_status ptec_nn_lstm_s16(ptec_nn_buffer scratch, const ptec_nn_lstm_params *params, const int16_t *input,
                             const int8_t *input_weights, const int8_t *hidden_weights, const int64_t *input_bias,
                             const int64_t *hidden_bias, int16_t *output)
{
    if (!ptec_nn_lstm_params_ok(params) || params->output_offset != 0 || !shifts_ok(params->gate_input) ||
        !shifts_ok(params->gate_hidden)) {
        return PTEC_INVALID_ARGUMENT;
    }
    if (params->time_steps == 0 || params->batches == 0) {
        return PTEC_OK;
    }
    if (input == NULL || input_weights == NULL || hidden_weights == NULL || input_bias == NULL || output == NULL ||
        scratch.buf == NULL || scratch.size < ptec_nn_lstm_s16_buffer_size(params->hidden_size)) {
        return PTEC_INVALID_ARGUMENT;
    }
    const size_t n = (size_t)params->hidden_size;
    const size_t in = (size_t)params->input_size;
    const size_t steps = (size_t)params->time_steps;
    const size_t batches = (size_t)params->batches;
    int16_t *gate_a = (int16_t *)scratch.buf;
    int16_t *gate_b = gate_a + n;
    int16_t *cell = gate_b + n;
    for (size_t b = 0; b < batches; ++b) {
        const int16_t *h = NULL;
        memset(cell, 0, n * sizeof(int16_t));
        for (size_t t = 0; t < steps; ++t) {
            /* the row (t, b) of [T, B, *] or (b, t) of [B, T, *] */
            const size_t row = params->batch_first ? b * steps + t : t * batches + b;
            int16_t *out = output + row * n;
            step(params, input + row * in, h, input_weights, hidden_weights, input_bias, hidden_bias, gate_a,
                 gate_b, cell, out);
            h = out;
        }
    }
    return PTEC_OK;
}
