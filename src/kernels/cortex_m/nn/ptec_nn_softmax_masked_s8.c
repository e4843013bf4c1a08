/* int8 softmax over rows with positions masked out (ptec's own operator,
 * docs/kernels.md "masked softmax"): the numerics of ptec_nn_softmax_s8
 * (CMSIS-NN arm_softmax_s8) applied to the unmasked positions of each row
 * only; a masked position is -infinity, so its probability is exactly 0
 * (-128 at scale 1/256, zero point -128) and it moves neither the row's
 * maximum nor its sum. A fully masked row is all -128. */
#include "ptec_nn.h"
#include "ptec_nn_softmax.h"

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
                sum = ptec_nn_softmax_add(sum, ptec_nn_softmax_exp(diff, params));
            }
        }
        /* The maximum itself contributes exp(0) > 0, so sum > 0. */
        const ptec_nn_softmax_scale scale = ptec_nn_softmax_scale_of(sum);
        for (int32_t i = 0; i < row_size; ++i) {
            const int32_t diff = x[i] - max;
            y[i] = m[i] == 0 && diff >= diff_min ? ptec_nn_softmax_out(ptec_nn_softmax_exp(diff, params), scale)
                                                 : -128;
        }
    }
    return PTEC_OK;
}
