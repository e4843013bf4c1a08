/* int8 softmax over the rows of a [rows, row_size] array, output scale
 * 1/256 and zero point -128 (cortex-m-ops.md §3.15). Bit-exact with
 * CMSIS-NN's scalar path: exp() in Q5.26 -> Q0.31, a Q12.19 sum, and a
 * Newton-Raphson reciprocal (the steps: ptec_nn_softmax.h). */
#include "ptec_nn.h"
#include "ptec_nn_softmax.h"

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
                sum = ptec_nn_softmax_add(sum, ptec_nn_softmax_exp(diff, params));
            }
        }
        const ptec_nn_softmax_scale scale = ptec_nn_softmax_scale_of(sum);
        for (int32_t i = 0; i < row_size; ++i) {
            const int32_t diff = x[i] - max;
            y[i] = diff >= diff_min ? ptec_nn_softmax_out(ptec_nn_softmax_exp(diff, params), scale) : -128;
        }
    }
    return PTEC_OK;
}
