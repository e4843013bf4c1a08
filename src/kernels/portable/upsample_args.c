/* See upsample_args.h. */
#include <math.h>
#include <string.h>

#include "kernels/portable/portable_args.h"
#include "kernels/portable/upsample_args.h"

ptec_status ptec_upsample_output_args(ptec_op *op, size_t size_arg, size_t scales_arg, const ptec_tensor *in,
                                      const ptec_tensor *out, double factors[2])
{
    int32_t size[2];
    size_t n_size = 0;
    ptec_status st = ptec_op_get_int32_list(op, size_arg, size, 2, &n_size, true);
    if (st != PTEC_OK) {
        return st;
    }
    factors[0] = factors[1] = 0.0;
    if (ptec_op_arg_is_null(op, scales_arg)) {
        if (n_size != 2 || size[0] != out->sizes[2] || size[1] != out->sizes[3]) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, size_arg, PTEC_MSG("output_size must be out's [H, W]"));
        }
        return PTEC_OK;
    }
    /* scale_factors: two doubles, read in place from the program. */
    const ptec_value *v = op->argv[scales_arg];
    if (n_size != 0 || v->kind != PTEC_VALUE_DOUBLE_LIST || v->count != 2) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, scales_arg,
                            PTEC_MSG("give either output_size or two scale_factors"));
    }
    memcpy(factors, v->u.items, 2 * sizeof factors[0]); /* little-endian doubles, as every target is */
    for (int d = 0; d < 2; ++d) {
        const double expect = floor((double)in->sizes[2 + d] * factors[d]);
        if (!(factors[d] > 0.0) || factors[d] > 65536.0 || expect != (double)out->sizes[2 + d]) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, scales_arg,
                                PTEC_MSG("scale_factors must be positive and give out's [H, W]"));
        }
    }
    return PTEC_OK;
}
