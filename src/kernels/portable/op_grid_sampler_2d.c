/* aten::grid_sampler_2d.out(Tensor input, Tensor grid, int interpolation_mode,
 *     int padding_mode, bool align_corners, *, Tensor(a!) out) -> Tensor(a!)
 *
 * F.grid_sample on float32: out[n, c, h, w] samples input[n, c] (any dim
 * order) at the position grid[n, h, w] = (x, y), each in [-1, 1] across
 * the plane. The arithmetic is PyTorch's vectorized CPU kernel, in float32,
 * per axis of size S:
 *   unnormalize: align_corners: (g + 1) * ((S - 1) / 2);
 *                otherwise:     (g + 1) * (S / 2) - 0.5;
 *   padding 1 (border): clip to [0, S - 1], a NaN to 0;
 *   padding 2 (reflection): about 0 and S - 1 (align_corners; S = 1 gives 0)
 *     or -0.5 and S - 0.5: a = |v - low|, extra = a - trunc(a / 2span) * 2span,
 *     min(extra, 2span - extra) + low (a NaN stays NaN), then the clip.
 * Modes: 0 bilinear: f = floor(v), t = v - f, taps f and f + 1 weighing
 * 1 - t and t; out = sum over (row, column) in order of
 * value * (wy * wx), starting from the first term. 1 nearest: the tap
 * nearbyint(v) (round half to even), its value. 2 bicubic: v unnormalized
 * only, taps f - 1 .. f + 2 (each padded as above) with cubic convolution
 * weights (cubic_weights.h); each row's four columns summed, then the four
 * weighted rows. A tap outside the plane reads 0 (zeros padding).
 * Positions come from a tensor, so they may be anything: a coordinate is
 * turned into an index only by ptec_grid_index (grid_sampler_args.h: only
 * within [-8, 2^30], where C defines the conversion), and every index is
 * checked against the plane before the read; a NaN position gives NaN
 * (zeros padding) or reads index 0 (border, reflection), as PyTorch. */
#include <math.h>
#include <string.h>

#include "kernels/portable/cubic_weights.h"
#include "kernels/portable/grid_sampler_args.h"
#include "kernels/portable/strides.h"

/* The taps along one axis: index in [0, S) or -1 (outside: reads 0), and weight. */
typedef struct axis_taps {
    int32_t at[4];
    float w[4];
    int32_t n;
} axis_taps;

static ptec_status prepare(ptec_op *op)
{
    return ptec_grid_sampler_prepare(op, 2, PTEC_GRID_BICUBIC);
}

/* Vectorized minimum: a NaN operand gives NaN. */
static float nan_min(float a, float b)
{
    return (isnan(a) || isnan(b)) ? NAN : (a < b ? a : b);
}

/* PyTorch's clip: NaN to 0, then into [0, max]. */
static float clip(float v, float max)
{
    v = v > 0.0f ? v : 0.0f;
    return v < max ? v : max;
}

static float padded(float v, int32_t size, const ptec_grid_state *s)
{
    const float max = (float)(size - 1);
    if (s->padding == PTEC_GRID_BORDER) {
        return clip(v, max);
    }
    if (s->padding == PTEC_GRID_REFLECTION) {
        if (s->align_corners && size <= 1) {
            return 0.0f;
        }
        const float low = s->align_corners ? 0.0f : -0.5f;
        const float span2 = s->align_corners ? max * 2.0f : (float)size * 2.0f;
        const float a = fabsf(v - low);
        const float extra = a - truncf(a / span2) * span2;
        return clip(nan_min(extra, span2 - extra) + low, max);
    }
    return v;
}

static void taps_of(axis_taps *t, float g, int32_t size, const ptec_grid_state *s)
{
    const float v = s->align_corners ? (g + 1.0f) * ((float)(size - 1) / 2.0f)
                                     : (g + 1.0f) * ((float)size / 2.0f) - 0.5f;
    if (s->mode == PTEC_GRID_BICUBIC) {
        const float f = floorf(v);
        ptec_cubic_weights(v - f, t->w);
        for (int32_t k = 0; k < 4; ++k) {
            t->at[k] = ptec_grid_index(padded(f + (float)(k - 1), size, s), 0, size);
        }
        t->n = 4;
        return;
    }
    const float p = padded(v, size, s);
    if (s->mode == PTEC_GRID_NEAREST) {
        t->at[0] = ptec_grid_index(nearbyintf(p), 0, size);
        t->w[0] = 1.0f;
        t->n = 1;
        return;
    }
    const float f = floorf(p);
    t->w[1] = p - f;
    t->w[0] = 1.0f - t->w[1];
    t->at[0] = ptec_grid_index(f, 0, size);
    t->at[1] = ptec_grid_index(f, 1, size);
    t->n = 2;
}

static float value_at(const float *plane, const int32_t *si, int32_t h, int32_t w)
{
    return (h < 0 || w < 0) ? 0.0f : plane[(size_t)h * (size_t)si[2] + (size_t)w * (size_t)si[3]];
}

static float sample(const float *plane, const int32_t *si, const axis_taps *ty, const axis_taps *tx, uint8_t mode)
{
    if (mode == PTEC_GRID_NEAREST) {
        return value_at(plane, si, ty->at[0], tx->at[0]);
    }
    float acc = 0.0f;
    for (int32_t r = 0; r < ty->n; ++r) {
        float row = 0.0f;
        for (int32_t k = 0; k < tx->n; ++k) {
            const float v = value_at(plane, si, ty->at[r], tx->at[k]);
            if (mode == PTEC_GRID_BILINEAR) {
                const float term = v * (ty->w[r] * tx->w[k]);
                acc = (r == 0 && k == 0) ? term : acc + term;
            } else {
                const float term = tx->w[k] * v;
                row = k == 0 ? term : row + term;
            }
        }
        if (mode == PTEC_GRID_BICUBIC) {
            const float term = ty->w[r] * row;
            acc = r == 0 ? term : acc + term;
        }
    }
    return acc;
}

static ptec_status run(ptec_op *op)
{
    const ptec_grid_state *s = op->state;
    const ptec_tensor *in = ptec_op_tensor(op, PTEC_GRID_IN), *grid = ptec_op_tensor(op, PTEC_GRID_GRID);
    const ptec_tensor *out = ptec_op_tensor(op, PTEC_GRID_OUT);
    int32_t si[PTEC_MAX_RANK], sg[PTEC_MAX_RANK], so[PTEC_MAX_RANK];
    ptec_physical_strides(in, si);
    ptec_physical_strides(grid, sg);
    ptec_physical_strides(out, so);
    const float *x = in->data, *g = grid->data;
    float *y = out->data;
    for (int32_t n = 0; n < out->sizes[0]; ++n) {
        for (int32_t h = 0; h < out->sizes[2]; ++h) {
            for (int32_t w = 0; w < out->sizes[3]; ++w) {
                const float *xy = g + (size_t)n * (size_t)sg[0] + (size_t)h * (size_t)sg[1] + (size_t)w * (size_t)sg[2];
                axis_taps tx, ty;
                taps_of(&tx, xy[0], in->sizes[3], s);
                taps_of(&ty, xy[sg[3]], in->sizes[2], s);
                for (int32_t c = 0; c < out->sizes[1]; ++c) {
                    const float *plane = x + (size_t)n * (size_t)si[0] + (size_t)c * (size_t)si[1];
                    y[(size_t)n * (size_t)so[0] + (size_t)c * (size_t)so[1] + (size_t)h * (size_t)so[2] +
                      (size_t)w * (size_t)so[3]] = sample(plane, si, &ty, &tx, s->mode);
                }
            }
        }
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_aten_grid_sampler_2d_out = {"aten::grid_sampler_2d.out", sizeof(ptec_grid_state), prepare,
                                                          run};
