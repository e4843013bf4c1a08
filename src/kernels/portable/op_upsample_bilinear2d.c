/* aten::upsample_bilinear2d.vec_out(Tensor input, SymInt[]? output_size,
 *     bool align_corners, float[]? scale_factors, *, Tensor(a!) out) -> Tensor(a!)
 *
 * Bilinear resize of a 4-D [N, C, H, W] float32 tensor to out's H and W, any
 * dim order. Per axis, PyTorch's source coordinate of output index i, in
 * float32 (area_pixel_compute_source_index):
 *   align_corners: src = i * s with s = (in - 1) / (out - 1) (0 when out is 1);
 *   otherwise:     src = max((i + 0.5) * s - 0.5, 0) with s = in / out, or
 *                  1 / scale_factor when scale_factors are given;
 * i0 = (int)src, i1 = i0 + (i0 < in - 1), l1 = src - i0 clamped to [0, 1],
 * l0 = 1 - l1 (an axis whose size does not change is copied: i0 = i1 = i,
 * l0 = 1, l1 = 0), and
 *   y = l0h * (l0w * x[i0h][i0w] + l1w * x[i0h][i1w]) + l1h * (l0w * x[i1h][i0w] + l1w * x[i1h][i1w])
 * in that order (the build has no fused multiply-add: -ffp-contract=off),
 * as upstream's portable kernel computes it. Quantized graphs run it in
 * fp32 between a dequantize and a quantize. */
#include <math.h>
#include <string.h>

#include "kernels/portable/portable_args.h"
#include "kernels/portable/strides.h"
#include "kernels/portable/upsample_args.h"

enum { ARG_IN = PTEC_UPSAMPLE_IN, ARG_OUT = PTEC_UPSAMPLE_OUT };

typedef struct axis_tap {
    int32_t i0, i1;
    float l0, l1;
} axis_tap;

static axis_tap source_tap(int32_t i, float scale, int32_t in, int32_t out, bool align_corners)
{
    axis_tap t;
    if (in == out) { /* upstream copies: the tap itself, weight 1 */
        t.i0 = t.i1 = i;
        t.l0 = 1.0f;
        t.l1 = 0.0f;
        return t;
    }
    float src = align_corners ? scale * (float)i : scale * ((float)i + 0.5f) - 0.5f;
    if (src < 0.0f) {
        src = 0.0f;
    }
    t.i0 = (int32_t)src;
    if (t.i0 > in - 1) {
        t.i0 = in - 1;
    }
    t.i1 = t.i0 + (t.i0 < in - 1 ? 1 : 0);
    t.l1 = src - (float)t.i0;
    t.l1 = t.l1 < 0.0f ? 0.0f : (t.l1 > 1.0f ? 1.0f : t.l1);
    t.l0 = 1.0f - t.l1;
    return t;
}

static ptec_status run(ptec_op *op)
{
    const ptec_upsample_interp_state *s = op->state;
    const ptec_tensor *in = ptec_op_tensor(op, ARG_IN), *out = ptec_op_tensor(op, ARG_OUT);
    int32_t si[PTEC_MAX_RANK], so[PTEC_MAX_RANK];
    ptec_physical_strides(in, si);
    ptec_physical_strides(out, so);
    const float *x = in->data;
    float *y = out->data;
    for (int32_t n = 0; n < out->sizes[0]; ++n) {
        for (int32_t c = 0; c < out->sizes[1]; ++c) {
            const float *plane = x + (size_t)n * (size_t)si[0] + (size_t)c * (size_t)si[1];
            for (int32_t oh = 0; oh < out->sizes[2]; ++oh) {
                const axis_tap th = source_tap(oh, s->scale[0], in->sizes[2], out->sizes[2], s->align_corners);
                const float *r0 = plane + (size_t)th.i0 * (size_t)si[2];
                const float *r1 = plane + (size_t)th.i1 * (size_t)si[2];
                for (int32_t ow = 0; ow < out->sizes[3]; ++ow) {
                    const axis_tap tw = source_tap(ow, s->scale[1], in->sizes[3], out->sizes[3], s->align_corners);
                    const size_t c0 = (size_t)tw.i0 * (size_t)si[3], c1 = (size_t)tw.i1 * (size_t)si[3];
                    const float top = tw.l0 * r0[c0] + tw.l1 * r0[c1];
                    const float bottom = tw.l0 * r1[c0] + tw.l1 * r1[c1];
                    y[(size_t)n * (size_t)so[0] + (size_t)c * (size_t)so[1] + (size_t)oh * (size_t)so[2] +
                      (size_t)ow * (size_t)so[3]] = th.l0 * top + th.l1 * bottom;
                }
            }
        }
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_aten_upsample_bilinear2d_vec_out = {"aten::upsample_bilinear2d.vec_out",
                                                                  sizeof(ptec_upsample_interp_state),
                                                                  ptec_upsample_interp_prepare, run};
