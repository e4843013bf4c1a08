/* ptec::roi_align.out(Tensor input, Tensor rois, float spatial_scale,
 *     int pooled_height, int pooled_width, int sampling_ratio, bool aligned,
 *     bool position_sensitive, Tensor out)
 *
 * torchvision's roi_align (and, position_sensitive, ps_roi_align) forward
 * on float32, in the arithmetic order of torchvision 0.14's CPU kernels so
 * that the sums round as they do there. input [N, C, H, W], rois [K, 5]
 * rows (batch index, x1, y1, x2, y2), out [K, C, PH, PW] (position
 * sensitive: [K, C / (PH * PW), PH, PW], bin (ph, pw) of output channel c
 * read from input channel (c * PH + ph) * PW + pw). rois may also be
 * [K, 4] (x1, y1, x2, y2) of image 0: torchvision's list of one box tensor,
 * taken as it is (no joined index column, whose int8 grid would widen the
 * boxes'). Any dim orders.
 *
 * Per box, with the scale rounded to float32 first (torchvision binds the
 * double to a T):
 *   start = x1 * scale - off (off 0.5 when aligned), end likewise,
 *   size = end - start, at least 1 when not aligned,
 *   bin = size / PW, grid = sampling_ratio > 0 ? sampling_ratio
 *   : ceil(size / PW) (the adaptive count: it depends on the box), and
 *   sample x = (start + pw * bin) + ((ix + 0.5) * bin) / grid.
 * A sample with y < -1, y > H, x < -1 or x > W is empty; otherwise y and x
 * clamp at 0 below, the low index is the truncation, clamped to H - 1 (W - 1)
 * with the position moved onto it, and the weights are products of
 * l = y - low and h = 1 - l, the latter formed in double as torchvision's
 * `1. - ly` is (it can round differently from a float subtraction).
 * The bin's value: acc += ((w1 v1 + w2 v2) + w3 v3) + w4 v4 over the
 * samples in row order, then acc / count. roi_align: an empty sample still
 * reads the plane's first element with weight 0 (as its precomputed table
 * does, so a NaN or inf there shows), count = max(gh * gw, 1). ps_roi_align:
 * an empty sample adds 0, count = gh * gw (an empty grid gives 0 / 0:
 * written as the quiet NaN 0x7FC00000; a reversed box's negative grid
 * gives 0 / (negative) = -0, as there).
 *
 * The boxes are data: each row's batch index must truncate into [0, N)
 * and its scaled corners and sizes must be finite, and an adaptive grid is
 * limited to 2^20 samples per bin (torchvision would read out of bounds, or
 * convert an out-of-range float to int, or allocate without bound); any of
 * these fails the run with a message, never a read outside input. */
#include <math.h>

#include "kernels/portable/portable_args.h"
#include "kernels/portable/strides.h"

enum {
    ARG_INPUT,
    ARG_ROIS,
    ARG_SCALE,
    ARG_PH,
    ARG_PW,
    ARG_SAMPLING,
    ARG_ALIGNED,
    ARG_PS,
    ARG_OUT,
    ARG_COUNT
};

#define MAX_SAMPLES (1L << 20) /* per bin: grid_h * grid_w */

typedef struct roi_state {
    float scale;
    int32_t ph, pw, sampling;
    bool aligned, ps;
    int32_t si[4], sr[2], so[4];
} roi_state;

static ptec_status prepare(ptec_op *op)
{
    roi_state *s = op->state;
    ptec_tensor *in, *rois, *out;
    double scale;
    int32_t ph, pw, sampling;
    bool aligned, ps;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, ARG_COUNT + 1)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, ARG_INPUT, &in)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, ARG_ROIS, &rois)) != PTEC_OK ||
        (st = ptec_op_get_double(op, ARG_SCALE, &scale)) != PTEC_OK ||
        (st = ptec_op_get_int32(op, ARG_PH, &ph)) != PTEC_OK ||
        (st = ptec_op_get_int32(op, ARG_PW, &pw)) != PTEC_OK ||
        (st = ptec_op_get_int32(op, ARG_SAMPLING, &sampling)) != PTEC_OK ||
        (st = ptec_op_get_bool(op, ARG_ALIGNED, &aligned)) != PTEC_OK ||
        (st = ptec_op_get_bool(op, ARG_PS, &ps)) != PTEC_OK || (st = ptec_op_get_out(op, &out)) != PTEC_OK) {
        return st;
    }
    if (in->rank != 4 || rois->rank != 2 || out->rank != 4 || in->dtype != PTEC_DTYPE_FLOAT ||
        rois->dtype != PTEC_DTYPE_FLOAT || out->dtype != PTEC_DTYPE_FLOAT) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_OUT,
                            PTEC_MSG("input and out must be 4-D float, rois 2-D float"));
    }
    if (in->sizes[0] < 1 || in->sizes[1] < 1 || in->sizes[2] < 1 || in->sizes[3] < 1) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_INPUT, PTEC_MSG("input must not be empty"));
    }
    if (ph < 1 || pw < 1 || ph > 65535 || pw > 65535) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ph < 1 || ph > 65535 ? ARG_PH : ARG_PW,
                            PTEC_MSG("pooled sizes must be in [1, 65535]"));
    }
    /* a fixed grid within the adaptive one's limit: sampling_ratio^2 <= 2^20 */
    if (sampling > 1024) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_SAMPLING, PTEC_MSG("sampling_ratio must be at most 1024"));
    }
    if (!(fabs(scale) <= 3.4e38)) { /* NaN fails too: a float32 scale */
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_SCALE, PTEC_MSG("spatial_scale must be a finite float"));
    }
    if (ps && !aligned) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_ALIGNED,
                            PTEC_MSG("position_sensitive needs aligned (its half-pixel shift)"));
    }
    int32_t channels = in->sizes[1];
    const int64_t bins = (int64_t)ph * pw;
    if (ps) {
        if (channels % bins != 0) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_INPUT,
                                PTEC_MSG("input channels must be a multiple of pooled_height * pooled_width"));
        }
        channels = (int32_t)(channels / bins);
    }
    const int32_t want_rois[2] = {rois->sizes[0], rois->sizes[1] == 4 ? 4 : 5};
    const int32_t want_out[4] = {rois->sizes[0], channels, ph, pw};
    if ((st = ptec_portable_expect_sizes(op, ARG_ROIS, rois, want_rois, 2, PTEC_MSG("rois must be [K, 5] or [K, 4]"))) !=
            PTEC_OK ||
        (st = ptec_portable_expect_sizes(op, ARG_OUT, out, want_out, 4,
                                         ps ? PTEC_MSG("out must be [K, C / (PH * PW), PH, PW]")
                                            : PTEC_MSG("out must be [K, C, PH, PW]"))) != PTEC_OK) {
        return st;
    }
    if (out->flags & PTEC_TENSOR_CONSTANT) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, ARG_OUT, PTEC_MSG("out must not be a constant tensor"));
    }
    s->scale = (float)scale;
    s->ph = ph;
    s->pw = pw;
    s->sampling = sampling;
    s->aligned = aligned;
    s->ps = ps;
    ptec_physical_strides(in, s->si);
    ptec_physical_strides(rois, s->sr);
    ptec_physical_strides(out, s->so);
    return PTEC_OK;
}

/* One sample's four taps (element offsets in the plane) and weights; none
 * when it lies outside [-1, size] on either axis. */
typedef struct taps {
    size_t at[4];
    float w[4];
    bool empty;
} taps;

/* The low index and the (possibly moved) position along one axis of `size`. */
static int32_t axis_low(float *v, int32_t size, int32_t *high)
{
    if (*v <= 0.0f) {
        *v = 0.0f;
    }
    int32_t low = (int32_t)*v; /* v in [0, size]: in range */
    if (low >= size - 1) {
        low = size - 1;
        *high = low;
        *v = (float)low;
    } else {
        *high = low + 1;
    }
    return low;
}

static void taps_at(taps *t, float y, float x, int32_t h, int32_t w, const int32_t *si)
{
    /* written as "not inside" so that a NaN position (none arises from finite boxes) is empty too,
     * never converted to an index */
    if (!(y >= -1.0f && y <= (float)h && x >= -1.0f && x <= (float)w)) {
        t->empty = true;
        for (int k = 0; k < 4; ++k) {
            t->at[k] = 0;
            t->w[k] = 0.0f;
        }
        return;
    }
    t->empty = false;
    int32_t yh, xh;
    const int32_t yl = axis_low(&y, h, &yh), xl = axis_low(&x, w, &xh);
    const float ly = y - (float)yl, lx = x - (float)xl;
    const float hy = (float)(1.0 - (double)ly), hx = (float)(1.0 - (double)lx);
    t->w[0] = hy * hx;
    t->w[1] = hy * lx;
    t->w[2] = ly * hx;
    t->w[3] = ly * lx;
    const size_t r0 = (size_t)yl * (size_t)si[2], r1 = (size_t)yh * (size_t)si[2];
    const size_t c0 = (size_t)xl * (size_t)si[3], c1 = (size_t)xh * (size_t)si[3];
    t->at[0] = r0 + c0;
    t->at[1] = r0 + c1;
    t->at[2] = r1 + c0;
    t->at[3] = r1 + c1;
}

/* The grid along one axis: the fixed ratio, or ceil(size / pooled), which
 * is negative for a reversed aligned box (no samples; torchvision keeps
 * the sign in its count); INT64_MIN beyond 2^20 either way. */
static int64_t grid_of(int32_t sampling, float size, int32_t pooled)
{
    if (sampling > 0) {
        return sampling;
    }
    const float g = ceilf(size / (float)pooled);
    if (!(g <= (float)MAX_SAMPLES && g >= -(float)MAX_SAMPLES)) {
        return INT64_MIN;
    }
    return (int64_t)g;
}

static ptec_status run(ptec_op *op)
{
    const roi_state *s = op->state;
    const ptec_tensor *in = ptec_op_tensor(op, ARG_INPUT), *rois = ptec_op_tensor(op, ARG_ROIS);
    const ptec_tensor *out = ptec_op_tensor(op, ARG_OUT);
    const float *x = in->data, *r = rois->data;
    float *y = out->data;
    const int32_t n = in->sizes[0], h = in->sizes[2], w = in->sizes[3];
    const int32_t kk = out->sizes[0], channels = out->sizes[1];
    const float off = s->aligned ? 0.5f : 0.0f;
    for (int32_t k = 0; k < kk; ++k) {
        const float *row = r + (size_t)k * (size_t)s->sr[0];
        /* [K, 4]: image 0's boxes (the index column reads as 0) */
        const int first = rois->sizes[1] == 4 ? 1 : 0;
        float v[5] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
        for (int i = first; i < 5; ++i) {
            v[i] = row[(size_t)(i - first) * (size_t)s->sr[1]];
        }
        /* torchvision truncates the index to int; (-1, N) is what truncates into [0, N) */
        if (!(v[0] > -1.0f && v[0] < (float)n) || (int32_t)v[0] >= n) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_ROIS,
                                PTEC_MSG("a box's batch index is outside the input's batch"));
        }
        const int32_t b = (int32_t)v[0];
        const float start_w = v[1] * s->scale - off, start_h = v[2] * s->scale - off;
        const float end_w = v[3] * s->scale - off, end_h = v[4] * s->scale - off;
        float size_w = end_w - start_w, size_h = end_h - start_h;
        if (!isfinite(start_w) || !isfinite(start_h) || !isfinite(size_w) || !isfinite(size_h)) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_ROIS, PTEC_MSG("a box is not finite"));
        }
        if (!s->aligned) { /* malformed boxes count as 1 x 1 */
            size_w = size_w < 1.0f ? 1.0f : size_w;
            size_h = size_h < 1.0f ? 1.0f : size_h;
        }
        const float bin_h = size_h / (float)s->ph, bin_w = size_w / (float)s->pw;
        const int64_t gh = grid_of(s->sampling, size_h, s->ph), gw = grid_of(s->sampling, size_w, s->pw);
        if (gh == INT64_MIN || gw == INT64_MIN || gh * gw > MAX_SAMPLES || gh * gw < -MAX_SAMPLES) {
            return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_ROIS,
                                PTEC_MSG("a box needs more than 2^20 samples per bin (sampling_ratio <= 0)"));
        }
        /* torchvision's count: the product of the signed grids (roi_align: at least 1) */
        float count = (float)(gh * gw);
        if (!s->ps && count < 1.0f) {
            count = 1.0f;
        }
        const float *batch = x + (size_t)b * (size_t)s->si[0];
        float *dst = y + (size_t)k * (size_t)s->so[0];
        for (int32_t ph = 0; ph < s->ph; ++ph) {
            for (int32_t pw = 0; pw < s->pw; ++pw) {
                const size_t o = (size_t)ph * (size_t)s->so[2] + (size_t)pw * (size_t)s->so[3];
                /* ps: output channel c reads input channel (c * PH + ph) * PW + pw */
                const size_t bin = s->ps ? (size_t)ph * (size_t)s->pw + (size_t)pw : 0u;
                const size_t cstep = s->ps ? (size_t)s->ph * (size_t)s->pw : 1u;
                for (int32_t c = 0; c < channels; ++c) {
                    dst[o + (size_t)c * (size_t)s->so[1]] = 0.0f;
                }
                for (int64_t iy = 0; iy < gh; ++iy) { /* none when gh <= 0 */
                    const float sy = (start_h + (float)ph * bin_h) + (((float)iy + 0.5f) * bin_h) / (float)gh;
                    for (int64_t ix = 0; ix < gw; ++ix) {
                        const float sx = (start_w + (float)pw * bin_w) + (((float)ix + 0.5f) * bin_w) / (float)gw;
                        taps t;
                        taps_at(&t, sy, sx, h, w, s->si);
                        for (int32_t c = 0; c < channels; ++c) {
                            float *acc = dst + o + (size_t)c * (size_t)s->so[1];
                            if (s->ps && t.empty) {
                                *acc += 0.0f;
                                continue;
                            }
                            const float *plane = batch + (bin + (size_t)c * cstep) * (size_t)s->si[1];
                            const float sum = ((t.w[0] * plane[t.at[0]] + t.w[1] * plane[t.at[1]]) +
                                               t.w[2] * plane[t.at[2]]) +
                                              t.w[3] * plane[t.at[3]];
                            *acc += sum;
                        }
                    }
                }
                for (int32_t c = 0; c < channels; ++c) {
                    /* ps's empty grid: torchvision's 0 / 0, as the one quiet NaN (0x7FC00000) whatever
                     * sign the FPU's default NaN has */
                    float *v = dst + o + (size_t)c * (size_t)s->so[1];
                    *v = count == 0.0f ? NAN : *v / count;
                }
            }
        }
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_ptec_roi_align_out = {"ptec::roi_align.out", sizeof(roi_state), prepare, run};
