/* aten::histc.out(Tensor self, int bins=100, Scalar min=0, Scalar max=0, *, Tensor(a!) out)
 *
 * torch.histc of float32 self (any shape and dim order: the counts do not
 * depend on the elements' order) into float32 out [bins], with torch
 * 1.13's CPU arithmetic, so every element lands in torch's bin:
 *   - the range: [min, max] as given; min == max takes self's own minimum
 *     and maximum (min - 1 and max + 1, in double as torch, when those are
 *     equal or self is empty), each then rounded to float32 (torch's
 *     linspace end points);
 *   - hi is torch's last linspace edge (last_edge: hi itself unless
 *     bins + 1 is a multiple of 16);
 *   - an element counts when lo <= x <= hi (values outside dropped), in
 *     bin trunc((x - lo) / (hi - lo) * bins), float32 steps in torch's
 *     order (the other order rounds to the next bin at some edges), the
 *     maximum (bin == bins) in the last bin; a NaN in bin 0, as torch 1.13
 *     on 64-bit CPUs (its cast of NaN);
 *   - counts added as float32 ones, as torch's histogram: exact below
 *     2^24 per bin.
 * A range of self's own values that is not finite (a NaN or an infinity
 * in self) is torch's error "range of [..] is not finite": the run fails.
 * A given range must be finite with min < max in float32 (prepare), and a
 * range whose width overflows float32 fails (torch's positions would be
 * NaN there, an undefined bin). No scratch: out holds the counts. */
#include <float.h>
#include <math.h>

#include "kernels/portable/portable_args.h"

enum { ARG_SELF = 0, ARG_BINS = 1, ARG_MIN = 2, ARG_MAX = 3, ARG_OUT = 4, ARG_COUNT = 6 };

typedef struct histc_state {
    uint32_t bins;
    float lo, hi;   /* the given range (own false) */
    uint8_t own;    /* min == max: self's own range */
    double given;   /* min (== max) as given, for an empty self */
} histc_state;

/* torch 1.13's outer bin edges: linspace(lo, hi, bins + 1)'s first and last
 * element. Its CPU kernel writes 16 elements at a time with AVX2 vectors
 * (the rest one by one), a vector from halfway on as
 * base + k * step, base = hi - step * 7: when bins + 1 is a multiple of
 * 16 the last edge is that sum for k = 7, which may be a float32 step off
 * hi. torch's build computes base by one fused multiply-add (rounded
 * once; two roundings give another last edge for about one range in 500)
 * and the sum by a multiply and an add: fmaf here, as -ffp-contract=off
 * keeps the rest unfused. A core without an FPU takes libm's fmaf, which
 * rounds the double hi - 7 step to float: still once here, since 7 step is
 * exact in double and so is the sum unless hi's exponent is more than 29
 * above step's, where both roundings give hi. */
static float last_edge(float lo, float hi, uint32_t bins)
{
    const uint64_t steps = (uint64_t)bins + 1u;
    if (steps % 16u != 0u) {
        return hi;
    }
    const float step = (hi - lo) / (float)bins;
    const float base = fmaf(-step, 7.0f, hi);
    return base + 7.0f * step;
}

static ptec_status prepare(ptec_op *op)
{
    histc_state *s = op->state;
    ptec_tensor *self, *out;
    int64_t bins;
    double lo, hi;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, ARG_COUNT)) != PTEC_OK || (st = ptec_op_get_tensor(op, ARG_SELF, &self)) != PTEC_OK ||
        (st = ptec_op_get_int(op, ARG_BINS, &bins)) != PTEC_OK || (st = ptec_op_get_scalar(op, ARG_MIN, &lo)) != PTEC_OK ||
        (st = ptec_op_get_scalar(op, ARG_MAX, &hi)) != PTEC_OK || (st = ptec_op_get_out(op, &out)) != PTEC_OK) {
        return st;
    }
    if (self->dtype != PTEC_DTYPE_FLOAT || out->dtype != PTEC_DTYPE_FLOAT) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_SELF, PTEC_MSG("self and out must be float32"));
    }
    if (bins < 1 || bins > INT32_MAX) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_BINS, PTEC_MSG("bins must be in [1, 2^31 - 1]"));
    }
    if (out->rank != 1 || out->sizes[0] != bins || (out->flags & (PTEC_TENSOR_DYNAMIC | PTEC_TENSOR_RESIZABLE)) != 0) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_OUT, PTEC_MSG("out must be [bins] of static size"));
    }
    if ((self->flags & (PTEC_TENSOR_DYNAMIC | PTEC_TENSOR_RESIZABLE)) != 0) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_SELF, PTEC_MSG("self must have static sizes"));
    }
    if (!(lo <= DBL_MAX && lo >= -DBL_MAX) || !(hi <= DBL_MAX && hi >= -DBL_MAX)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_MIN, PTEC_MSG("min and max must be finite"));
    }
    s->bins = (uint32_t)bins;
    s->own = lo == hi;
    s->given = lo;
    s->lo = s->hi = 0.0f;
    if (!s->own) {
        /* a given range: torch requires min < max; in float32 too (a width of 0 there divides by zero), and a
         * finite float32 width (else (x - lo) / width is NaN: no bin) */
        if (!(lo < hi) || !(lo >= -FLT_MAX && hi <= FLT_MAX) || !((float)lo < (float)hi) ||
            !((float)hi - (float)lo <= FLT_MAX)) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_MIN,
                                PTEC_MSG("min must be below max, both float32 of a finite width"));
        }
        s->lo = (float)lo;
        s->hi = last_edge((float)lo, (float)hi, s->bins);
        if (!(s->lo < s->hi) || !(s->hi - s->lo <= FLT_MAX)) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_MIN,
                                PTEC_MSG("min must be below max, both float32 of a finite width"));
        }
    }
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const histc_state *s = op->state;
    const ptec_tensor *self = ptec_op_tensor(op, ARG_SELF);
    const float *x = self->data;
    float *y = ptec_op_tensor(op, ARG_OUT)->data;
    size_t n = self->numel;
    float lo = s->lo, hi = s->hi;
    const uint32_t bins = s->bins;
    if (s->own) {
        double a = s->given, b = s->given;
        if (n > 0) {
            /* torch's aminmax: a NaN anywhere makes the range NaN */
            float mn = x[0], mx = x[0];
            bool nan = false;
            for (size_t i = 0; i < n; ++i) {
                float v = x[i];
                nan = nan || isnan(v);
                mn = v < mn ? v : mn;
                mx = v > mx ? v : mx;
            }
            if (nan) {
                return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_SELF, PTEC_MSG("histc: range of self is not finite"));
            }
            a = mn;
            b = mx;
        }
        if (a == b) {
            a -= 1.0; /* in double, then float32, as torch's edges */
            b += 1.0;
        }
        if (!(a >= -FLT_MAX && b <= FLT_MAX)) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_SELF, PTEC_MSG("histc: range of self is not finite"));
        }
        lo = (float)a;
        hi = last_edge(lo, (float)b, bins);
        if (!(lo < hi) || !(hi - lo <= FLT_MAX)) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_SELF, PTEC_MSG("histc: range wider than float32"));
        }
    }
    for (uint32_t k = 0; k < bins; ++k) {
        y[k] = 0.0f;
    }
    const float width = hi - lo;
    const float fbins = (float)bins;
    for (size_t i = 0; i < n; ++i) {
        float v = x[i];
        if (isnan(v)) {
            /* torch 1.13 skips only v < lo or v > hi: a NaN's position casts to INT64_MIN, whose float
             * offset wraps to bin 0 on its 64-bit CPUs (only a given range meets one: an own range with a NaN
             * failed above) */
            y[0] += 1.0f;
            continue;
        }
        if (v < lo || v > hi) {
            continue;
        }
        /* lo <= v <= hi and a finite width > 0: q in [0, bins] (the roundings are monotonic) */
        float q = (v - lo) / width * fbins;
        uint32_t pos = q < fbins ? (uint32_t)q : bins - 1u;
        /* (bins above 2^24: fbins rounded up could let q reach bins) */
        y[pos < bins ? pos : bins - 1u] += 1.0f;
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_aten_histc_out = {"aten::histc.out", sizeof(histc_state), prepare, run};
