/* int16 softmax over rows (docs/kernels.md, "16-bit activations"; CMSIS-NN
 * arm_softmax_s16). Per row: d = x - max is scaled by (multiplier, shift)
 * with the int8 kernels' requantization, moved to the symmetric int16
 * range (+32767, saturated) and looked up in the exp table; the int32 sum
 * of those values is normalized to 16 significant bits, looked up in the
 * 1/(1+x) table, and each exp value times that reciprocal is shifted back
 * by the normalization, rounded half up.
 *
 * CMSIS-NN keeps several intermediates in int16 variables (the table
 * slope, the interpolated value, the recentred sum): those narrowings wrap
 * modulo 2^16, which is part of the result (the recentring by -98304 is a
 * -32768 modulo 2^16), so they are written out as explicit wraps here.
 * The final narrowing is the exception: ptec saturates it where CMSIS-NN
 * wraps, because a row whose maximum dominates (a row of one value, or
 * the others below exp(-10)) can round to 32768, which would wrap to
 * -32768 = -1.0 where the probability is 1.0. */
#include "ptec_nn.h"
#include "ptec_nn_math.h"

/* v modulo 2^16 as int16 (the conversion GCC and Clang define as a wrap). */
static inline int16_t wrap16(int32_t v)
{
    return (int16_t)(uint16_t)(uint32_t)v;
}

/* The table at v (an int16 value): entry 256 + v / 128 (floor), plus the
 * slope to the next entry times (v mod 128) / 128, rounded half up. */
static int16_t lookup(const int16_t *lut, int32_t v)
{
    const int32_t index = 256 + (v >> 7);
    const int32_t offset = v & 0x7F;
    const int16_t base = lut[index];
    const int16_t slope = wrap16(lut[index + 1] - lut[index]);
    return wrap16(base + wrap16((slope * offset + 64) >> 7));
}

ptec_status ptec_nn_softmax_s16(const int16_t *input, int32_t rows, int32_t row_size,
                                const ptec_nn_softmax_s16_params *params, int16_t *output)
{
    if (rows < 0 || row_size < 0 || row_size > 65535) {
        return PTEC_INVALID_ARGUMENT;
    }
    if (rows == 0 || row_size == 0) {
        return PTEC_OK;
    }
    if (input == NULL || output == NULL || params == NULL || params->exp_lut == NULL ||
        params->one_by_one_lut == NULL || params->input_shift < -31 || params->input_shift > 31) {
        return PTEC_INVALID_ARGUMENT;
    }
    const ptec_nn_softmax_s16_params p = *params;
    for (int32_t r = 0; r < rows; ++r) {
        const int16_t *x = input + (size_t)r * (size_t)row_size;
        int16_t *y = output + (size_t)r * (size_t)row_size;
        int32_t max = x[0];
        for (int32_t i = 1; i < row_size; ++i) {
            max = x[i] > max ? x[i] : max;
        }
        /* The exp values go to y first (x may be y: each x[i] is read once
         * before y[i] is written, after the maximum is known). */
        int32_t sum = 0;
        for (int32_t i = 0; i < row_size; ++i) {
            const int32_t scaled = ptec_nn_requantize(x[i] - max, p.input_multiplier, p.input_shift);
            const int32_t symmetric = ptec_nn_clamp(ptec_nn_wrap_add(scaled, INT16_MAX), INT16_MIN, INT16_MAX);
            y[i] = lookup(p.exp_lut, symmetric);
            sum += y[i]; /* |sum| <= 65535 * 2^15 < 2^31 */
        }
        /* With real tables the row's maximum alone adds 32767; a sum below
         * 2 (only hostile tables give one) has no normalization: zeros. */
        if (sum < 2) {
            for (int32_t i = 0; i < row_size; ++i) {
                y[i] = 0;
            }
            continue;
        }
        const int32_t headroom = ptec_nn_leading_zeros((uint32_t)sum); /* 1 .. 30 */
        const int32_t shifted_sum = ((sum << (headroom - 1)) + (1 << 13)) >> 14;
        const int16_t reciprocal = lookup(p.one_by_one_lut, wrap16(shifted_sum - 98304));
        const int32_t right_shift = 30 - headroom;
        for (int32_t i = 0; i < row_size; ++i) {
            const int32_t scaled = (y[i] * reciprocal) >> right_shift;
            y[i] = (int16_t)ptec_nn_clamp((scaled + 1) >> 1, INT16_MIN, INT16_MAX);
        }
    }
    return PTEC_OK;
}
