/* aten::upsample_nearest2d.vec_out(Tensor input, SymInt[]? output_size,
 *     float[]? scale_factors, *, Tensor(a!) out) -> Tensor(a!)
 *
 * Nearest-neighbour resize of a 4-D [N, C, H, W] tensor to out's H and W,
 * any dtype (int8 in quantized graphs: a pure copy of bytes, so the grid is
 * the input's) and any dim order. Source row of output row y, as PyTorch
 * computes it without align_corners: min(floor(y * s), H - 1) with the
 * scale s = 1 / scale_factor when scale_factors are given, else H / H_out,
 * computed in double and used as float32; likewise for columns. */
#include <math.h>
#include <string.h>

#include "kernels/portable/portable_args.h"
#include "kernels/portable/strides.h"
#include "kernels/portable/upsample_args.h"

typedef struct upsample_state {
    float scale_h, scale_w;
    uint32_t elem;
} upsample_state;

enum { ARG_IN, ARG_SIZE, ARG_SCALES, ARG_OUT, ARG_RETURN, ARG_COUNT };

/* Source index of output index i along an axis of `in` source elements. */
static int32_t source_index(int32_t i, float scale, int32_t in)
{
    const int32_t s = (int32_t)floorf((float)i * scale);
    return s < in - 1 ? s : in - 1;
}

static ptec_status prepare(ptec_op *op)
{
    upsample_state *s = op->state;
    ptec_tensor *in, *out;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, ARG_COUNT)) != PTEC_OK || (st = ptec_op_get_tensor(op, ARG_IN, &in)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, ARG_OUT, &out)) != PTEC_OK) {
        return st;
    }
    if (in->rank != 4 || out->rank != 4 || in->dtype != out->dtype || in->sizes[0] != out->sizes[0] ||
        in->sizes[1] != out->sizes[1]) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_OUT,
                            PTEC_MSG("input and out must be 4-D [N, C, H, W] of one dtype, N and C equal"));
    }
    memset(s, 0, sizeof *s);
    s->elem = (uint32_t)ptec_dtype_size(in->dtype);
    double factors[2];
    if ((st = ptec_upsample_output_args(op, ARG_SIZE, ARG_SCALES, in, out, factors)) != PTEC_OK) {
        return st;
    }
    /* in / out in double, then float (upstream's area_pixel_compute_scale), or 1 / factor */
    s->scale_h = factors[0] > 0.0 ? (float)(1.0 / factors[0]) : (float)((double)in->sizes[2] / (double)out->sizes[2]);
    s->scale_w = factors[1] > 0.0 ? (float)(1.0 / factors[1]) : (float)((double)in->sizes[3] / (double)out->sizes[3]);
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const upsample_state *s = op->state;
    const ptec_tensor *in = ptec_op_tensor(op, ARG_IN), *out = ptec_op_tensor(op, ARG_OUT);
    int32_t si[PTEC_MAX_RANK], so[PTEC_MAX_RANK];
    ptec_physical_strides(in, si);
    ptec_physical_strides(out, so);
    const uint8_t *x = in->data;
    uint8_t *y = out->data;
    for (int32_t n = 0; n < out->sizes[0]; ++n) {
        for (int32_t c = 0; c < out->sizes[1]; ++c) {
            for (int32_t oh = 0; oh < out->sizes[2]; ++oh) {
                const int32_t ih = source_index(oh, s->scale_h, in->sizes[2]);
                for (int32_t ow = 0; ow < out->sizes[3]; ++ow) {
                    const int32_t iw = source_index(ow, s->scale_w, in->sizes[3]);
                    const size_t from = (size_t)n * (size_t)si[0] + (size_t)c * (size_t)si[1] +
                                        (size_t)ih * (size_t)si[2] + (size_t)iw * (size_t)si[3];
                    const size_t to = (size_t)n * (size_t)so[0] + (size_t)c * (size_t)so[1] +
                                      (size_t)oh * (size_t)so[2] + (size_t)ow * (size_t)so[3];
                    memcpy(y + to * s->elem, x + from * s->elem, s->elem);
                }
            }
        }
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_aten_upsample_nearest2d_vec_out = {"aten::upsample_nearest2d.vec_out",
                                                                 sizeof(upsample_state), prepare, run};
