/* int8 softmax over the rows of a [rows, row_size] array, output scale
 * 1/256 and zero point -128 (cortex-m-ops.md §3.15). Bit-exact with
 * CMSIS-NN's scalar path: exp() in Q5.26 -> Q0.31, a Q12.19 sum, and a
 * Newton-Raphson reciprocal. */
#include "ptec_nn.h"
#include "ptec_nn_math.h"

enum { SUM_FRACTION_BITS = 12 }; /* exp terms are summed in Q12.19 */

static int32_t count_leading_zeros(uint32_t v)
{
    int32_t n = 0;
    if (v == 0) {
        return 32;
    }
    while ((v & 0x80000000u) == 0) {
        v <<= 1;
        ++n;
    }
    return n;
}

ptec_status ptec_nn_softmax_s8(const int8_t *input, int32_t rows, int32_t row_size,
                               const ptec_nn_softmax_params *params, int8_t *output)
{
    if (rows <= 0 || row_size <= 0) {
        return rows == 0 ? PTEC_OK : PTEC_INVALID_ARGUMENT;
    }
    if (input == NULL || output == NULL || params->input_left_shift < 0 ||
        params->input_left_shift > 31) {
        return PTEC_INVALID_ARGUMENT;
    }
    const int32_t multiplier = params->input_multiplier;
    const int32_t shift = params->input_left_shift;
    const int32_t diff_min = params->diff_min;
    for (int32_t r = 0; r < rows; ++r) {
        const int8_t *x = input + (size_t)r * (size_t)row_size;
        int8_t *y = output + (size_t)r * (size_t)row_size;
        int32_t max = x[0];
        for (int32_t i = 1; i < row_size; ++i) {
            max = x[i] > max ? x[i] : max;
        }
        int32_t sum = 0;
        for (int32_t i = 0; i < row_size; ++i) {
            const int32_t diff = x[i] - max;
            if (diff >= diff_min) {
                const int32_t scaled = ptec_nn_doubling_high_mult(ptec_nn_wrap_shl(diff, shift), multiplier);
                sum = ptec_nn_wrap_add(sum, ptec_nn_round_shift(ptec_nn_exp_on_negative(scaled),
                                                                SUM_FRACTION_BITS));
            }
        }
        /* Normalise the sum to [1, 2) and take 1/sum from its fraction. */
        const int32_t headroom = count_leading_zeros((uint32_t)sum);
        const int32_t fraction =
            (int32_t)(((uint32_t)sum << (headroom & 31)) - 0x80000000u);
        const int32_t reciprocal = ptec_nn_one_over_one_plus_x(fraction);
        const int32_t bits = SUM_FRACTION_BITS - headroom + 23;
        for (int32_t i = 0; i < row_size; ++i) {
            const int32_t diff = x[i] - max;
            if (diff >= diff_min) {
                const int32_t scaled = ptec_nn_doubling_high_mult(ptec_nn_wrap_shl(diff, shift), multiplier);
                const int32_t p = ptec_nn_round_shift(
                    ptec_nn_doubling_high_mult(reciprocal, ptec_nn_exp_on_negative(scaled)), bits);
                y[i] = (int8_t)ptec_nn_clamp(p - 128, -128, 127);
            } else {
                y[i] = -128;
            }
        }
    }
    return PTEC_OK;
}
