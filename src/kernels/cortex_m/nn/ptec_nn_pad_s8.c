/* Constant padding of an int8 tensor in four physical dims (cortex-m-ops.md
 * §3.17). The output is filled row by row: pad bytes, a copied input row,
 * pad bytes, so every output byte is written exactly once. */
#include <string.h>

#include "ptec_nn.h"

ptec_status ptec_nn_pad_s8(const int8_t *input, const int32_t input_dims[4],
                           const int32_t pre_pad[4], const int32_t post_pad[4], int8_t pad_value,
                           int8_t *output)
{
    int32_t out_dims[4];
    for (int d = 0; d < 4; ++d) {
        if (input_dims[d] < 0 || pre_pad[d] < 0 || post_pad[d] < 0) {
            return PTEC_INVALID_ARGUMENT;
        }
        out_dims[d] = input_dims[d] + pre_pad[d] + post_pad[d];
    }
    const size_t out_count = (size_t)out_dims[0] * (size_t)out_dims[1] * (size_t)out_dims[2] * (size_t)out_dims[3];
    if (out_count == 0) {
        return PTEC_OK;
    }
    const size_t in_count =
        (size_t)input_dims[0] * (size_t)input_dims[1] * (size_t)input_dims[2] * (size_t)input_dims[3];
    if (output == NULL || (in_count != 0 && input == NULL)) {
        return PTEC_INVALID_ARGUMENT;
    }
    const size_t row = (size_t)out_dims[3];
    int8_t *y = output;
    for (int32_t a = 0; a < out_dims[0]; ++a) {
        const int32_t ia = a - pre_pad[0];
        for (int32_t b = 0; b < out_dims[1]; ++b) {
            const int32_t ib = b - pre_pad[1];
            for (int32_t c = 0; c < out_dims[2]; ++c) {
                const int32_t ic = c - pre_pad[2];
                const int inside = ia >= 0 && ia < input_dims[0] && ib >= 0 && ib < input_dims[1] &&
                                   ic >= 0 && ic < input_dims[2] && input_dims[3] > 0;
                if (!inside) {
                    memset(y, pad_value, row);
                } else {
                    const int8_t *x =
                        input + (((size_t)ia * (size_t)input_dims[1] + (size_t)ib) * (size_t)input_dims[2] +
                                 (size_t)ic) *
                                    (size_t)input_dims[3];
                    memset(y, pad_value, (size_t)pre_pad[3]);
                    memcpy(y + pre_pad[3], x, (size_t)input_dims[3]);
                    memset(y + pre_pad[3] + input_dims[3], pad_value, (size_t)post_pad[3]);
                }
                y += row;
            }
        }
    }
    return PTEC_OK;
}
