/* int8 batched matrix product with the right operand stored transposed
 * (cortex-m-ops.md §3.12): out[b,i,j] = sum_k (lhs[b,i,k] + lhs_offset) *
 * (rhs_t[b,j,k] + rhs_offset), requantized. Both operand rows are
 * contiguous in k. */
#include "ptec_nn.h"
#include "ptec_nn_math.h"

uint32_t ptec_nn_batch_matmul_s8_buffer_size(const ptec_nn_bmm_dims *dims)
{
    (void)dims;
    return 0;
}

ptec_status ptec_nn_batch_matmul_s8(ptec_nn_buffer scratch, const ptec_nn_bmm_params *params,
                                    const ptec_nn_bmm_dims *dims, const int8_t *lhs,
                                    const int8_t *rhs_transposed, int8_t *output)
{
    (void)scratch;
    const ptec_nn_bmm_dims d = *dims;
    if ((size_t)d.batches * (size_t)d.m * (size_t)d.n == 0) {
        return PTEC_OK;
    }
    if (lhs == NULL || rhs_transposed == NULL || output == NULL) {
        return PTEC_INVALID_ARGUMENT;
    }
    const ptec_nn_bmm_params p = *params;
    int8_t *y = output;
    for (int32_t b = 0; b < d.batches; ++b) {
        const int8_t *lhs_b = lhs + (size_t)b * (size_t)d.m * (size_t)d.k;
        const int8_t *rhs_b = rhs_transposed + (size_t)b * (size_t)d.n * (size_t)d.k;
        for (int32_t i = 0; i < d.m; ++i) {
            const int8_t *row = lhs_b + (size_t)i * (size_t)d.k;
            for (int32_t j = 0; j < d.n; ++j) {
                const int8_t *col = rhs_b + (size_t)j * (size_t)d.k;
                uint32_t acc = 0;
                for (int32_t k = 0; k < d.k; ++k) {
                    acc += (uint32_t)((row[k] + p.lhs_offset) * (col[k] + p.rhs_offset));
                }
                *y++ = ptec_nn_requantize_s8((int32_t)acc, p.quant.multiplier, p.quant.shift, p.output_offset,
                                             p.activation.min, p.activation.max);
            }
        }
    }
    return PTEC_OK;
}
