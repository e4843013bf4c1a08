/* What the int8 and int16 LSTM layers share (ptec_nn_lstm_s8.c,
 * ptec_nn_lstm_s16.c; docs/kernels.md "LSTM"): CMSIS-NN's table sigmoid
 * and tanh (arm_nn_activation_s16), the checks on the parameters both
 * read, and the two cell updates between their gates. The layers differ
 * only in their gate sums (int32 or int64) and their output (int8 with a
 * zero point, or int16). */
#include "ptec_nn_lstm_cell.h"
#include "ptec_nn_math.h"

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

bool ptec_nn_lstm_params_ok(const ptec_nn_lstm_params *p)
{
    return p != NULL && p->time_steps >= 0 && p->batches >= 0 && p->input_size >= 1 && p->hidden_size >= 1 &&
           p->cell_scale_power >= -27 && p->cell_scale_power <= 2 && p->cell_clip >= 0 && p->cell_clip <= INT16_MAX;
}

void ptec_nn_lstm_forget(const ptec_nn_lstm_params *p, const int16_t *forget, int16_t *cell)
{
    for (int32_t j = 0; j < p->hidden_size; ++j) {
        /* |f * c| <= 2^30: an int32 product */
        const int32_t fc = ptec_nn_requantize(forget[j] * cell[j], p->forget_to_cell.multiplier,
                                              p->forget_to_cell.shift);
        cell[j] = ptec_nn_clamp_s16(fc, INT16_MIN, INT16_MAX);
    }
}

void ptec_nn_lstm_add_input(const ptec_nn_lstm_params *p, const int16_t *input_gate, const int16_t *cell_gate,
                            int16_t *cell)
{
    const int32_t clip_hi = p->cell_clip > 0 ? p->cell_clip : INT16_MAX;
    const int32_t clip_lo = p->cell_clip > 0 ? -p->cell_clip : INT16_MIN;
    for (int32_t j = 0; j < p->hidden_size; ++j) {
        const int64_t ig = ptec_nn_requantize(input_gate[j] * cell_gate[j], p->input_to_cell.multiplier,
                                              p->input_to_cell.shift);
        cell[j] = ptec_nn_clamp_s16(ig + cell[j], clip_lo, clip_hi);
    }
}
