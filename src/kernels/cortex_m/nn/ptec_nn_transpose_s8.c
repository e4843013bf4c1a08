/* out = in.permute(perm) for contiguous int8 tensors of rank 1..4
 * (cortex-m-ops.md §3.16). Every perm is honoured, including the identity
 * of rank 2 that the pinned CMSIS-NN turns into a swap. */
#include "ptec_nn.h"

ptec_status ptec_nn_transpose_s8(const int8_t *input, const int32_t *input_sizes, int32_t rank,
                                 const int32_t *perm, int8_t *output)
{
    if (rank < 1 || rank > 4) {
        return PTEC_INVALID_ARGUMENT;
    }
    /* Pad to rank 4 with leading unit dims so one loop nest serves all. */
    int32_t out_sizes[4] = {1, 1, 1, 1};
    uint32_t in_strides_of_out[4] = {0, 0, 0, 0};
    uint32_t in_strides[4];
    uint32_t stride = 1;
    unsigned seen = 0;
    for (int32_t d = rank - 1; d >= 0; --d) {
        in_strides[d] = stride;
        stride *= (uint32_t)input_sizes[d];
    }
    const int32_t lead = 4 - rank;
    for (int32_t d = 0; d < rank; ++d) {
        if (perm[d] < 0 || perm[d] >= rank || (seen & (1u << perm[d])) != 0) {
            return PTEC_INVALID_ARGUMENT;
        }
        seen |= 1u << perm[d];
        out_sizes[lead + d] = input_sizes[perm[d]];
        in_strides_of_out[lead + d] = in_strides[perm[d]];
    }
    if (stride == 0) {
        return PTEC_OK;
    }
    if (input == NULL || output == NULL) {
        return PTEC_INVALID_ARGUMENT;
    }
    int8_t *y = output;
    for (int32_t a = 0; a < out_sizes[0]; ++a) {
        for (int32_t b = 0; b < out_sizes[1]; ++b) {
            for (int32_t c = 0; c < out_sizes[2]; ++c) {
                const int8_t *x = input + (uint32_t)a * in_strides_of_out[0] +
                                  (uint32_t)b * in_strides_of_out[1] + (uint32_t)c * in_strides_of_out[2];
                const uint32_t step = in_strides_of_out[3];
                for (int32_t d = 0; d < out_sizes[3]; ++d) {
                    *y++ = x[(uint32_t)d * step];
                }
            }
        }
    }
    return PTEC_OK;
}
