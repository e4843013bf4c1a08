/* int8 softmax over rows with positions masked out (ptec's own operator,
 * docs/kernels.md "masked softmax"): the numerics of ptec_nn_softmax_s8
 * (CMSIS-NN arm_softmax_s8) applied to the unmasked positions of each row
 * only; a masked position is -infinity, so its probability is exactly 0
 * (-128 at scale 1/256, zero point -128) and it moves neither the row's
 * maximum nor its sum. A fully masked row is all -128. */
#include "ptec_nn.h"
#include "ptec_nn_math.h"

enum { SUM_FRACTION_BITS = 12 }; /* exp terms are summed in Q12.19, as ptec_nn_softmax_s8 */

static int32_t leading_zeros(uint32_t v)
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

static int32_t scaled_exp(int32_t diff, const ptec_nn_softmax_params *params)
{
    const int32_t scaled =
        ptec_nn_doubling_high_mult(ptec_nn_wrap_shl(diff, params->input_left_shift), params->input_multiplier);
    return ptec_nn_exp_on_negative(scaled);
}

ptec_status ptec_nn_softmax_masked_s8(const int8_t *input, int32_t rows, int32_t row_size, const uint8_t *mask,
                                      int32_t mask_rows, const ptec_nn_softmax_params *params, int8_t *output)
{
    if (rows <= 0 || row_size <= 0) {
        return rows == 0 ? PTEC_OK : PTEC_INVALID_ARGUMENT;
    }
    if (input == NULL || output == NULL || mask == NULL || params == NULL || mask_rows <= 0 ||
        mask_rows > rows || rows % mask_rows != 0 || params->input_left_shift < 0 ||
        params->input_left_shift > 31) {
        return PTEC_INVALID_ARGUMENT;
    }
    const int32_t diff_min = params->diff_min;
    for (int32_t r = 0; r < rows; ++r) {
        const int8_t *x = input + (size_t)r * (size_t)row_size;
        const uint8_t *m = mask + (size_t)(r % mask_rows) * (size_t)row_size;
        int8_t *y = output + (size_t)r * (size_t)row_size;
        int32_t max = INT32_MIN;
        for (int32_t i = 0; i < row_size; ++i) {
            if (m[i] == 0 && x[i] > max) {
                max = x[i];
            }
        }
        if (max == INT32_MIN) { /* every position masked */
            for (int32_t i = 0; i < row_size; ++i) {
                y[i] = -128;
            }
            continue;
        }
        int32_t sum = 0;
        for (int32_t i = 0; i < row_size; ++i) {
            const int32_t diff = x[i] - max;
            if (m[i] == 0 && diff >= diff_min) {
                sum = ptec_nn_wrap_add(sum, ptec_nn_round_shift(scaled_exp(diff, params), SUM_FRACTION_BITS));
            }
        }
        /* The maximum itself contributes exp(0) > 0, so sum > 0. */
        const int32_t headroom = leading_zeros((uint32_t)sum);
        const int32_t fraction = (int32_t)(((uint32_t)sum << (headroom & 31)) - 0x80000000u);
        const int32_t reciprocal = ptec_nn_one_over_one_plus_x(fraction);
        const int32_t bits = SUM_FRACTION_BITS - headroom + 23;
        for (int32_t i = 0; i < row_size; ++i) {
            const int32_t diff = x[i] - max;
            if (m[i] == 0 && diff >= diff_min) {
                const int32_t p =
                    ptec_nn_round_shift(ptec_nn_doubling_high_mult(reciprocal, scaled_exp(diff, params)), bits);
                y[i] = (int8_t)ptec_nn_clamp(p - 128, -128, 127);
            } else {
                y[i] = -128;
            }
        }
    }
    return PTEC_OK;
}
