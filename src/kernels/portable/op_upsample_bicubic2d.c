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
 * Each of the four source rows is summed over its four columns in tap order,
 * then the four row sums in tap order (no fused multiply-add:
 * -ffp-contract=off). Quantized graphs run it in fp32 between a dequantize
 * and a quantize. */
#include <math.h>
#include <string.h>

#include "kernels/portable/portable_args.h"
#include "kernels/portable/strides.h"
#include "kernels/portable/upsample_args.h"

typedef struct bicubic_state {
    float scale_h, scale_w;
    bool align_corners;
} bicubic_state;

enum { ARG_IN, ARG_SIZE, ARG_ALIGN, ARG_SCALES, ARG_OUT, ARG_RETURN, ARG_COUNT };

#define CUBIC_A (-0.75f)

typedef struct cubic_tap {
    int32_t idx[4];
    float w[4];
} cubic_tap;

static float cubic_near(float x)
{
    return ((CUBIC_A + 2.0f) * x - (CUBIC_A + 3.0f)) * x * x + 1.0f;
}

static float cubic_far(float x)
{
    return ((CUBIC_A * x - 5.0f * CUBIC_A) * x + 8.0f * CUBIC_A) * x - 4.0f * CUBIC_A;
}

static int32_t clamp_index(int32_t i, int32_t in)
{
    return i < 0 ? 0 : (i > in - 1 ? in - 1 : i);
}

static cubic_tap source_taps(int32_t i, float scale, int32_t in, bool align_corners)
{
    cubic_tap t;
    const float src = align_corners ? scale * (float)i : scale * ((float)i + 0.5f) - 0.5f;
    float f = floorf(src);
    /* src lies in [-0.5 * scale - 0.5, in]: keep the integer part in range all the same */
    f = f < -2.0f ? -2.0f : (f > (float)in ? (float)in : f);
    const float x = src - f;
    const int32_t base = (int32_t)f;
    t.w[0] = cubic_far(x + 1.0f);
    t.w[1] = cubic_near(x);
    t.w[2] = cubic_near(1.0f - x);
    t.w[3] = cubic_far(2.0f - x);
    for (int32_t k = 0; k < 4; ++k) {
        t.idx[k] = clamp_index(base - 1 + k, in);
    }
    return t;
}

/* align_corners: (in - 1) / (out - 1); else in / out; in double, used as float. */
static float axis_scale(int32_t in, int32_t out, bool align_corners)
{
    if (align_corners) {
        return out > 1 ? (float)((double)(in - 1) / (double)(out - 1)) : 0.0f;
    }
    return (float)((double)in / (double)out);
}

static ptec_status prepare(ptec_op *op)
{
    bicubic_state *s = op->state;
    ptec_tensor *in, *out;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, ARG_COUNT)) != PTEC_OK || (st = ptec_op_get_tensor(op, ARG_IN, &in)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, ARG_OUT, &out)) != PTEC_OK ||
        (st = ptec_op_get_bool(op, ARG_ALIGN, &s->align_corners)) != PTEC_OK) {
        return st;
    }
    if (in->rank != 4 || out->rank != 4 || in->dtype != PTEC_DTYPE_FLOAT || out->dtype != PTEC_DTYPE_FLOAT ||
        in->sizes[0] != out->sizes[0] || in->sizes[1] != out->sizes[1]) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_OUT,
                            PTEC_MSG("input and out must be 4-D float [N, C, H, W], N and C equal"));
    }
    if (out->flags & PTEC_TENSOR_CONSTANT) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, ARG_OUT, PTEC_MSG("out is a constant tensor"));
    }
    if (in->numel == 0 || out->numel == 0) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_IN, PTEC_MSG("empty input or output"));
    }
    double factors[2];
    if ((st = ptec_upsample_output_args(op, ARG_SIZE, ARG_SCALES, in, out, factors)) != PTEC_OK) {
        return st;
    }
    /* as PyTorch: align_corners ignores the factors; otherwise 1 / factor when given */
    const bool by_factor = factors[0] > 0.0 && !s->align_corners;
    s->scale_h = by_factor ? (float)(1.0 / factors[0]) : axis_scale(in->sizes[2], out->sizes[2], s->align_corners);
    s->scale_w = by_factor ? (float)(1.0 / factors[1]) : axis_scale(in->sizes[3], out->sizes[3], s->align_corners);
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const bicubic_state *s = op->state;
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
                const cubic_tap th = source_taps(oh, s->scale_h, in->sizes[2], s->align_corners);
                for (int32_t ow = 0; ow < out->sizes[3]; ++ow) {
                    const cubic_tap tw = source_taps(ow, s->scale_w, in->sizes[3], s->align_corners);
                    float acc = 0.0f;
                    for (int32_t r = 0; r < 4; ++r) {
                        const float *row = plane + (size_t)th.idx[r] * (size_t)si[2];
                        float sum = tw.w[0] * row[(size_t)tw.idx[0] * (size_t)si[3]];
                        for (int32_t k = 1; k < 4; ++k) {
                            sum += tw.w[k] * row[(size_t)tw.idx[k] * (size_t)si[3]];
                        }
                        acc = r == 0 ? th.w[0] * sum : acc + th.w[r] * sum;
                    }
                    y[(size_t)n * (size_t)so[0] + (size_t)c * (size_t)so[1] + (size_t)oh * (size_t)so[2] +
                      (size_t)ow * (size_t)so[3]] = acc;
                }
            }
        }
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_aten_upsample_bicubic2d_vec_out = {"aten::upsample_bicubic2d.vec_out",
                                                                 sizeof(bicubic_state), prepare, run};
