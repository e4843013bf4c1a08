/* aten::grid_sampler_3d.out(Tensor input, Tensor grid, int interpolation_mode,
 *     int padding_mode, bool align_corners, *, Tensor(a!) out) -> Tensor(a!)
 *
 * F.grid_sample of a volume on float32: out[n, c, d, h, w] samples
 * input[n, c] (any dim order) at grid[n, d, h, w] = (x, y, z), each in
 * [-1, 1] across the volume. The arithmetic is PyTorch's scalar CPU kernel
 * (it has no vectorized 3-D one), in float32, per axis of size S:
 *   unnormalize: align_corners: ((g + 1) / 2) * (S - 1);
 *                otherwise:     ((g + 1) * S - 1) / 2;
 *   padding 1 (border): clip: min(S - 1, max(v, 0)) as C++'s std::min and
 *     std::max compare, so a NaN becomes S - 1;
 *   padding 2 (reflection): about low = 0 and S - 1 (align_corners; S = 1
 *     gives 0) or low = -0.5 and S - 0.5, span their distance:
 *     a = |v - low|, extra = fmod(a, span), and extra + low after an even
 *     number floor(a / span) of flips, span - extra + low after an odd one;
 *     then the clip.
 * Modes: 0 bilinear (trilinear): f = floor(v) per axis, the corner taps f
 * and f + 1 weighing (f + 1) - v and v - f; out starts at 0 and adds
 * value * ((wx * wy) * wz) for each corner inside the volume, z outer, then
 * y, then x, low tap first. 1 nearest: the tap nearbyint(v) (halves to
 * even, as PyTorch since 2.1 and its 2-D kernel; 1.13's 3-D kernel rounded
 * halves away from zero), its value, or 0 outside.
 * Positions come from a tensor, so they may be anything: PyTorch replaces a
 * coordinate that is not finite or lies beyond int32 by -100 (outside); here
 * a coordinate becomes an index only by ptec_grid_index (grid_sampler_args.h:
 * only within [-8, 2^30], where C defines the conversion), which gives the
 * same reads, and every index is checked against the volume before the read.
 * So a NaN position reads nothing (0) with zeros padding, index S - 1 with
 * border or reflection, as PyTorch. */
#include <math.h>

#include "kernels/portable/grid_sampler_args.h"
#include "kernels/portable/strides.h"

/* The two taps along one axis: index in [0, S) or -1 (outside: read as
 * nothing), and weight; nearest uses the first only. */
typedef struct axis_taps {
    int32_t at[2];
    float w[2];
} axis_taps;

static ptec_status prepare(ptec_op *op)
{
    return ptec_grid_sampler_prepare(op, 3, PTEC_GRID_NEAREST);
}

/* std::min(S - 1, std::max(v, 0)): NaN passes max and loses to S - 1. */
static float clip(float v, float top)
{
    const float m = v < 0.0f ? 0.0f : v;
    return m < top ? m : top;
}

/* Reflection about low and low + span; the parity of the flips is taken
 * in float (a quotient of 2^24 and above is an even whole number, as is
 * the value PyTorch's int conversion gives beyond int32). */
static float reflect(float v, float low, float span)
{
    const float a = fabsf(v - low);
    const float extra = fmodf(a, span);
    const bool odd = fmodf(floorf(a / span), 2.0f) == 1.0f;
    return odd ? span - extra + low : extra + low;
}

static float source(float g, int32_t size, const ptec_grid_state *s)
{
    const float top = (float)(size - 1);
    float v = s->align_corners ? ((g + 1.0f) / 2.0f) * top : ((g + 1.0f) * (float)size - 1.0f) / 2.0f;
    if (s->padding == PTEC_GRID_BORDER) {
        v = clip(v, top);
    } else if (s->padding == PTEC_GRID_REFLECTION) {
        if (s->align_corners) {
            v = size <= 1 ? 0.0f : reflect(v, 0.0f, top);
        } else {
            v = reflect(v, -0.5f, (float)size);
        }
        v = clip(v, top);
    }
    return v;
}

static void taps_of(axis_taps *t, float g, int32_t size, const ptec_grid_state *s)
{
    const float v = source(g, size, s);
    if (s->mode == PTEC_GRID_NEAREST) {
        t->at[0] = ptec_grid_index(nearbyintf(v), 0, size);
        t->w[0] = 1.0f;
        return;
    }
    const float f = floorf(v);
    t->w[0] = (f + 1.0f) - v;
    t->w[1] = v - f;
    t->at[0] = ptec_grid_index(f, 0, size);
    t->at[1] = ptec_grid_index(f, 1, size);
}

static float sample(const float *volume, const int32_t *si, const axis_taps *t, uint8_t mode)
{
    const axis_taps *tz = &t[0], *ty = &t[1], *tx = &t[2];
    const int32_t taps = mode == PTEC_GRID_NEAREST ? 1 : 2;
    float acc = 0.0f;
    for (int32_t a = 0; a < taps; ++a) {
        for (int32_t b = 0; b < taps; ++b) {
            for (int32_t k = 0; k < taps; ++k) {
                const int32_t z = tz->at[a], y = ty->at[b], x = tx->at[k];
                if (z < 0 || y < 0 || x < 0) {
                    continue;
                }
                const float v =
                    volume[(size_t)z * (size_t)si[2] + (size_t)y * (size_t)si[3] + (size_t)x * (size_t)si[4]];
                if (mode == PTEC_GRID_NEAREST) {
                    return v;
                }
                acc += v * ((tx->w[k] * ty->w[b]) * tz->w[a]);
            }
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
        for (int32_t d = 0; d < out->sizes[2]; ++d) {
            for (int32_t h = 0; h < out->sizes[3]; ++h) {
                for (int32_t w = 0; w < out->sizes[4]; ++w) {
                    const float *xyz = g + (size_t)n * (size_t)sg[0] + (size_t)d * (size_t)sg[1] +
                                       (size_t)h * (size_t)sg[2] + (size_t)w * (size_t)sg[3];
                    axis_taps t[3]; /* z, y, x */
                    taps_of(&t[2], xyz[0], in->sizes[4], s);
                    taps_of(&t[1], xyz[sg[4]], in->sizes[3], s);
                    taps_of(&t[0], xyz[2 * (size_t)sg[4]], in->sizes[2], s);
                    for (int32_t c = 0; c < out->sizes[1]; ++c) {
                        const float *volume = x + (size_t)n * (size_t)si[0] + (size_t)c * (size_t)si[1];
                        y[(size_t)n * (size_t)so[0] + (size_t)c * (size_t)so[1] + (size_t)d * (size_t)so[2] +
                          (size_t)h * (size_t)so[3] + (size_t)w * (size_t)so[4]] = sample(volume, si, t, s->mode);
                    }
                }
            }
        }
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_aten_grid_sampler_3d_out = {"aten::grid_sampler_3d.out", sizeof(ptec_grid_state), prepare,
                                                          run};
