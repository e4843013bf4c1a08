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

#include "ptec_nn.h"
#include "ptec_nn_dot.h"
#include "ptec_nn_math.h"

enum { GATE_I, GATE_F, GATE_G, GATE_O };

/* 65536 / (1 + e^(-k/24)) for k = 0..255, as CMSIS-NN tabulates it
 * (arm_nntables.c, sigmoid_table_uint16; within one unit of the formula,
 * not always its rounding). */
static const uint16_t sigmoid_table[256] = {
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149,
    40794, 41432, 42064, 42688, 43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369,
    47911, 48443, 48964, 49475, 49975, 50464, 50942, 51409, 51865, 52311, 52745, 53169,
    53581, 53983, 54374, 54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433,
    57724, 58007, 58280, 58544, 58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370,
    60565, 60753, 60935, 61110, 61279, 61441, 61599, 61750, 61896, 62036, 62172, 62302,
    62428, 62549, 62666, 62778, 62886, 62990, 63090, 63186, 63279, 63368, 63454, 63536,
    63615, 63691, 63765, 63835, 63903, 63968, 64030, 64090, 64148, 64204, 64257, 64308,
    64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652, 64687, 64721, 64754, 64786,
    64816, 64845, 64873, 64900, 64926, 64950, 64974, 64997, 65019, 65039, 65060, 65079,
    65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208, 65221, 65234, 65246, 65258,
    65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360, 65367,
    65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433,
    65438, 65442, 65445, 65449, 65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474,
    65476, 65479, 65481, 65483, 65485, 65488, 65489, 65491, 65493, 65495, 65497, 65498,
    65500, 65501, 65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513,
    65514, 65515, 65516, 65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522,
    65523, 65523, 65524, 65524, 65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528,
    65528, 65528, 65529, 65529, 65529, 65529, 65530, 65530, 65530, 65530, 65531, 65531,
    65531, 65531, 65531, 65532, 65532, 65532, 65532, 65532, 65532, 65533, 65533, 65533,
    65533, 65533, 65533, 65533, 65533, 65534, 65534, 65534, 65534, 65534, 65534, 65534,
    65534, 65534, 65534, 65535,
};

static int16_t activation_s16(int16_t x, int32_t left_shift, bool tanh_type)
{
    const uint32_t index_shift = tanh_type ? 8u : 9u;
    const int32_t multiplier = left_shift < 0 ? 3 : 3 * (1 << left_shift);
    const int32_t right = left_shift < 0 ? -left_shift : 0;
    const int32_t rounding = right > 0 ? (int32_t)(1u << (right - 1)) : 0;
    /* |x| * 3 * 2^14 < 2^31 and 3 * 2^15 + 2^30 < 2^31: no overflow. */
    const int32_t v = (x * multiplier + rounding) >> right;
    const uint32_t magnitude = v >= 0 ? (uint32_t)v : (uint32_t)(-(int64_t)v);
    const uint32_t upper = magnitude >> index_shift;
    uint32_t r;
    if (upper >= 255u) {
        r = tanh_type ? 0xFFFFu << 8 : 0x7FFFu << 10;
    } else {
        const uint32_t a = sigmoid_table[upper];
        const uint32_t b = sigmoid_table[upper + 1u];
        const uint32_t frac = magnitude & ((1u << index_shift) - 1u);
        r = (a << index_shift) + frac * (b - a); /* the table increases: b >= a */
    }
    if (!tanh_type) {
        /* sigmoid(-x) = 1 - sigmoid(x); r < 2^25, so neither side wraps */
        return (int16_t)((v >= 0 ? r + (1u << 9) : (1u << 25) - r + (1u << 9) - 1u) >> 10);
    }
    /* tanh(x) = 2 sigmoid(2x) - 1; r >= 2^23. The negative side is
     * floor((2^23 - r + 127) / 256), which may be below zero. */
    const int32_t t = v >= 0 ? (int32_t)(r - (1u << 23)) + 128 : (int32_t)(1u << 23) - (int32_t)r + 127;
    return (int16_t)(t >> 8);
}

int16_t ptec_nn_sigmoid_s16(int16_t x, int32_t left_shift)
{
    return activation_s16(x, left_shift, false);
}

int16_t ptec_nn_tanh_s16(int16_t x, int32_t left_shift)
{
    return activation_s16(x, left_shift, true);
}

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
        dst[j] = activation_s16(dst[j], 0, k == GATE_G);
    }
}

static int16_t sat16(int32_t v, int32_t lo, int32_t hi)
{
    return (int16_t)ptec_nn_clamp(v, lo, hi);
}

static void step(const ptec_nn_lstm_params *p, const int8_t *x, const int8_t *h, const int8_t *input_weights,
                 const int8_t *hidden_weights, const int32_t *input_bias, const int32_t *hidden_bias, int16_t *gate_a,
                 int16_t *gate_b, int16_t *cell, int8_t *out)
{
    const int32_t n = p->hidden_size;
    const int32_t clip_hi = p->cell_clip > 0 ? p->cell_clip : INT16_MAX;
    const int32_t clip_lo = p->cell_clip > 0 ? -p->cell_clip : INT16_MIN;
    gate(p, GATE_F, x, h, input_weights, hidden_weights, input_bias, hidden_bias, gate_a);
    for (int32_t j = 0; j < n; ++j) {
        const int32_t fc = ptec_nn_requantize(gate_a[j] * cell[j], p->forget_to_cell.multiplier,
                                              p->forget_to_cell.shift);
        cell[j] = sat16(fc, INT16_MIN, INT16_MAX);
    }
    gate(p, GATE_I, x, h, input_weights, hidden_weights, input_bias, hidden_bias, gate_a);
    gate(p, GATE_G, x, h, input_weights, hidden_weights, input_bias, hidden_bias, gate_b);
    for (int32_t j = 0; j < n; ++j) {
        const int64_t ig = ptec_nn_requantize(gate_a[j] * gate_b[j], p->input_to_cell.multiplier,
                                              p->input_to_cell.shift);
        const int64_t sum = ig + cell[j];
        cell[j] = (int16_t)(sum < clip_lo ? clip_lo : sum > clip_hi ? clip_hi : sum);
    }
    gate(p, GATE_O, x, h, input_weights, hidden_weights, input_bias, hidden_bias, gate_a);
    for (int32_t j = 0; j < n; ++j) {
        const int32_t t = activation_s16(cell[j], p->cell_scale_power + 12, true);
        out[j] = ptec_nn_requantize_s8(gate_a[j] * t, p->output.multiplier, p->output.shift, p->output_offset,
                                       INT8_MIN, INT8_MAX);
    }
}

ptec_status ptec_nn_lstm_s8_stateful(ptec_nn_buffer scratch, const ptec_nn_lstm_params *params, const int8_t *input,
                                     const int8_t *input_weights, const int8_t *hidden_weights,
                                     const int32_t *input_bias, const int32_t *hidden_bias, int8_t *output,
                                     int8_t *hidden_state, int16_t *cell_state)
{
    if (params == NULL || params->time_steps < 0 || params->batches < 0 || params->input_size < 1 ||
        params->hidden_size < 1 || params->cell_scale_power < -27 || params->cell_scale_power > 2 ||
        (hidden_state == NULL) != (cell_state == NULL)) {
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
