/* aten::upsample_bicubic2d.vec_out(Tensor input, SymInt[]? output_size,
 *     bool align_corners, float[]? scale_factors, *, Tensor(a!) out) -> Tensor(a!)
 *
 * Bicubic resize of a 4-D [N, C, H, W] float32 tensor to out's H and W, any
 * dim order; ptec's own kernel (upstream's portable library has none). Per
 * axis, PyTorch's cubic source coordinate of output index i, in float32:
 *   align_corners: src = i * s with s = (in - 1) / (out - 1) (0 when out is 1);
 *   otherwise:     src = (i + 0.5) * s - 0.5 with s = in / out, or
 *                  1 / scale_factor when scale_factors are given (not
 *                  clamped at 0: cubic keeps the negative coordinate);
 * f = floor(src), t = src - f, four taps f - 1 .. f + 2 each clamped into
 * [0, in - 1], weighted by cubic convolution with A = -0.75:
 *   near(x) = ((A + 2) * x - (A + 3)) * x * x + 1          (|x| <= 1)
 *   far(x)  = ((A * x - 5A) * x + 8A) * x - 4A             (1 < |x| < 2)
 *   w = far(t + 1), near(t), near(1 - t), far(2 - t).
 * Each of the four source rows is summed over its four columns in tap order
 * from 0, then the four weighted row sums in tap order from 0 (no fused multiply-add:
 * -ffp-contract=off). Quantized graphs run it in fp32 between a dequantize
 * and a quantize. */
#include <math.h>
#include <string.h>

#include "kernels/portable/cubic_weights.h"
#include "kernels/portable/portable_args.h"
#include "kernels/portable/strides.h"
#include "kernels/portable/upsample_args.h"

enum { ARG_IN = PTEC_UPSAMPLE_IN, ARG_OUT = PTEC_UPSAMPLE_OUT };

typedef struct cubic_tap {
    size_t off[4]; /* source index times the axis's stride */
    float w[4];
} cubic_tap;

static int32_t clamp_index(int32_t i, int32_t in)
{
    return i < 0 ? 0 : (i > in - 1 ? in - 1 : i);
}

static void source_taps(cubic_tap *t, int32_t i, float scale, int32_t in, int32_t stride, bool align_corners)
{
    const float src = align_corners ? scale * (float)i : scale * ((float)i + 0.5f) - 0.5f;
    /* scale <= in (prepare's out >= 1), so src lies in [-(in + 1) / 2, in]: f fits int32_t */
    const float f = floorf(src);
    const float x = src - f;
    const int32_t base = (int32_t)f;
    ptec_cubic_weights(x, t->w);
    for (int32_t k = 0; k < 4; ++k) {
        t->off[k] = (size_t)clamp_index(base - 1 + k, in) * (size_t)stride;
    }
}

static ptec_status run(ptec_op *op)
{
    const ptec_upsample_interp_state *s = op->state;
    const ptec_tensor *in = ptec_op_tensor(op, ARG_IN), *out = ptec_op_tensor(op, ARG_OUT);
    int32_t si[PTEC_MAX_RANK], so[PTEC_MAX_RANK];
    ptec_physical_strides(in, si);
    ptec_physical_strides(out, so);
    const float *x = in->data;
    for (int32_t n = 0; n < out->sizes[0]; ++n) {
        for (int32_t c = 0; c < out->sizes[1]; ++c) {
            const float *plane = x + (size_t)n * (size_t)si[0] + (size_t)c * (size_t)si[1];
            float *y = (float *)out->data + (size_t)n * (size_t)so[0] + (size_t)c * (size_t)so[1];
            for (int32_t oh = 0; oh < out->sizes[2]; ++oh) {
                cubic_tap th, tw;
                source_taps(&th, oh, s->scale[0], in->sizes[2], si[2], s->align_corners);
                for (int32_t ow = 0; ow < out->sizes[3]; ++ow) {
                    source_taps(&tw, ow, s->scale[1], in->sizes[3], si[3], s->align_corners);
                    float acc = 0.0f;
                    for (int32_t r = 0; r < 4; ++r) {
                        const float *row = plane + th.off[r];
                        float sum = 0.0f;
                        for (int32_t k = 0; k < 4; ++k) {
                            sum += tw.w[k] * row[tw.off[k]];
                        }
                        acc += th.w[r] * sum;
                    }
                    y[(size_t)oh * (size_t)so[2] + (size_t)ow * (size_t)so[3]] = acc;
                }
            }
        }
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_aten_upsample_bicubic2d_vec_out = {"aten::upsample_bicubic2d.vec_out",
                                                                 sizeof(ptec_upsample_interp_state),
                                                                 ptec_upsample_interp_prepare, run};
