/* See upsample_args.h. */
#include <math.h>
#include <string.h>

#include "kernels/portable/portable_args.h"
#include "kernels/portable/upsample_args.h"

ptec_status ptec_upsample_output_args(ptec_op *op, size_t size_arg, size_t scales_arg, const ptec_tensor *in,
                                      const ptec_tensor *out, double factors[2])
{
    /* every upsample schema has input first and out right after scale_factors */
    if (out->flags & PTEC_TENSOR_CONSTANT) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, (int)scales_arg + 1, PTEC_MSG("out is a constant tensor"));
    }
    if (in->numel == 0 || out->numel == 0) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 0, PTEC_MSG("empty input or output"));
    }
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

/* align_corners: (in - 1) / (out - 1); else in / out; in double, used as float. */
static float axis_scale(int32_t in, int32_t out, bool align_corners)
{
    if (align_corners) {
        return out > 1 ? (float)((double)(in - 1) / (double)(out - 1)) : 0.0f;
    }
    return (float)((double)in / (double)out);
}

ptec_status ptec_upsample_interp_prepare(ptec_op *op)
{
    ptec_upsample_interp_state *s = op->state;
    ptec_tensor *in, *out;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, PTEC_UPSAMPLE_ARGC)) != PTEC_OK || (st = ptec_op_get_tensor(op, PTEC_UPSAMPLE_IN, &in)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, PTEC_UPSAMPLE_OUT, &out)) != PTEC_OK ||
        (st = ptec_op_get_bool(op, PTEC_UPSAMPLE_ALIGN, &s->align_corners)) != PTEC_OK) {
        return st;
    }
    if (in->rank != 4 || out->rank != 4 || in->dtype != PTEC_DTYPE_FLOAT || out->dtype != PTEC_DTYPE_FLOAT ||
        in->sizes[0] != out->sizes[0] || in->sizes[1] != out->sizes[1]) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, PTEC_UPSAMPLE_OUT,
                            PTEC_MSG("input and out must be 4-D float [N, C, H, W], N and C equal"));
    }
    double factors[2];
    if ((st = ptec_upsample_output_args(op, PTEC_UPSAMPLE_SIZE, PTEC_UPSAMPLE_SCALES, in, out, factors)) != PTEC_OK) {
        return st;
    }
    /* upstream and PyTorch: align_corners ignores the factors; otherwise 1 / factor when given */
    const bool by_factor = factors[0] > 0.0 && !s->align_corners;
    for (int d = 0; d < 2; ++d) {
        s->scale[d] = by_factor ? (float)(1.0 / factors[d]) : axis_scale(in->sizes[2 + d], out->sizes[2 + d],
                                                                           s->align_corners);
    }
    return PTEC_OK;
}
