#include "kernels/portable/unary_elementwise.h"

#include <math.h>
#include <string.h>

#include "kernels/portable/strides.h"

static bool clamp_dtype(uint8_t dtype)
{
    return dtype == PTEC_DTYPE_FLOAT || dtype == PTEC_DTYPE_CHAR || dtype == PTEC_DTYPE_BYTE ||
           dtype == PTEC_DTYPE_SHORT || dtype == PTEC_DTYPE_INT;
}

ptec_status ptec_unary_prepare(ptec_op *op, unary_kind kind, size_t argc)
{
    unary_state *s = op->state;
    ptec_tensor *self, *out;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, argc)) != PTEC_OK || (st = ptec_op_get_tensor(op, 0, &self)) != PTEC_OK ||
        (st = ptec_op_get_out(op, &out)) != PTEC_OK) {
        return st;
    }
    if (self->dtype != out->dtype || !ptec_tensor_same_shape(self, out)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, -1, PTEC_MSG("out must have the dtype and sizes of self"));
    }
    if (kind == UNARY_CLAMP ? !clamp_dtype(out->dtype) : out->dtype != PTEC_DTYPE_FLOAT) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, 0,
                            kind == UNARY_CLAMP ? PTEC_MSG("dtype not supported (float32, int8, uint8, int16, int32)")
                                                : PTEC_MSG("dtype must be float32"));
    }
    memset(s, 0, sizeof *s);
    s->kind = (uint8_t)kind;
    s->dtype = out->dtype;
    s->rank = out->rank;
    s->numel = out->numel;
    s->flat = memcmp(self->dim_order, out->dim_order, out->rank) == 0 ||
              (ptec_tensor_is_contiguous(self) && ptec_tensor_is_contiguous(out));
    return PTEC_OK;
}

static void dtype_range(uint8_t dtype, double *lo, double *hi)
{
    switch (dtype) {
    case PTEC_DTYPE_CHAR: *lo = -128.0; *hi = 127.0; break;
    case PTEC_DTYPE_BYTE: *lo = 0.0; *hi = 255.0; break;
    case PTEC_DTYPE_SHORT: *lo = -32768.0; *hi = 32767.0; break;
    default: *lo = -2147483648.0; *hi = 2147483647.0; break;
    }
}

ptec_status ptec_unary_set_bounds(ptec_op *op, int lo_arg, const double *lo, int hi_arg, const double *hi)
{
    unary_state *s = op->state;
    const double *bound[2] = {lo, hi};
    const int arg[2] = {lo_arg, hi_arg};
    double range_lo, range_hi;
    dtype_range(s->dtype, &range_lo, &range_hi);
    for (int k = 0; k < 2; ++k) {
        if (bound[k] == NULL) {
            continue;
        }
        double v = *bound[k];
        if (isnan(v)) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, arg[k], PTEC_MSG("bound is NaN"));
        }
        if (s->dtype != PTEC_DTYPE_FLOAT && v != floor(v)) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, arg[k], PTEC_MSG("bound must be an integer for integer tensors"));
        }
        /* A bound beyond the dtype's range clamps nothing on that side. */
        double sat = v < range_lo ? range_lo : (v > range_hi ? range_hi : v);
        if (k == 0) {
            s->has_lo = 1;
            s->lo = (float)v;
            s->lo_int = (int32_t)sat;
        } else {
            s->has_hi = 1;
            s->hi = (float)v;
            s->hi_int = (int32_t)sat;
        }
    }
    return PTEC_OK;
}

static float apply_float(const unary_state *s, float x)
{
    switch (s->kind) {
    case UNARY_SIGMOID:
        return 1.0f / (1.0f + expf(-x));
    case UNARY_TANH:
        return tanhf(x);
    default:
        /* Lower bound first, then upper: a NaN passes through, and min > max gives max, as in PyTorch. */
        if (s->has_lo && x < s->lo) {
            x = s->lo;
        }
        if (s->has_hi && x > s->hi) {
            x = s->hi;
        }
        return x;
    }
}

static int32_t clamp_int(const unary_state *s, int32_t x)
{
    if (s->has_lo && x < s->lo_int) {
        x = s->lo_int;
    }
    if (s->has_hi && x > s->hi_int) {
        x = s->hi_int;
    }
    return x;
}

static void apply_one(const unary_state *s, const uint8_t *in, uint8_t *out)
{
    switch (s->dtype) {
    case PTEC_DTYPE_FLOAT: {
        float x;
        memcpy(&x, in, sizeof x);
        x = apply_float(s, x);
        memcpy(out, &x, sizeof x);
        break;
    }
    case PTEC_DTYPE_CHAR: *out = (uint8_t)(int8_t)clamp_int(s, (int8_t)*in); break;
    case PTEC_DTYPE_BYTE: *out = (uint8_t)clamp_int(s, *in); break;
    case PTEC_DTYPE_SHORT: {
        int16_t x;
        memcpy(&x, in, sizeof x);
        x = (int16_t)clamp_int(s, x);
        memcpy(out, &x, sizeof x);
        break;
    }
    default: {
        int32_t x;
        memcpy(&x, in, sizeof x);
        x = clamp_int(s, x);
        memcpy(out, &x, sizeof x);
        break;
    }
    }
}

ptec_status ptec_unary_run(ptec_op *op)
{
    const unary_state *s = op->state;
    const ptec_tensor *t_in = ptec_op_tensor(op, 0);
    const ptec_tensor *t_out = ptec_op_tensor(op, op->argc - 2u);
    const uint8_t *in = t_in->data;
    uint8_t *out = t_out->data;
    size_t es = ptec_dtype_size(s->dtype);
    if (s->flat) {
        if (s->dtype == PTEC_DTYPE_FLOAT) {
            const float *x = (const float *)(const void *)in;
            float *y = (float *)(void *)out;
            for (uint32_t i = 0; i < s->numel; ++i) {
                y[i] = apply_float(s, x[i]);
            }
            return PTEC_OK;
        }
        for (uint32_t i = 0; i < s->numel; ++i) {
            apply_one(s, in + i * es, out + i * es);
        }
        return PTEC_OK;
    }
    int32_t stride_in[PTEC_MAX_RANK], stride_out[PTEC_MAX_RANK], index[PTEC_MAX_RANK] = {0};
    ptec_physical_strides(t_in, stride_in);
    ptec_physical_strides(t_out, stride_out);
    size_t off_in = 0, off_out = 0;
    for (uint32_t n = 0; n < s->numel; ++n) {
        apply_one(s, in + off_in * es, out + off_out * es);
        ptec_walk_step(s->rank, t_out->sizes, index, stride_in, &off_in, stride_out, &off_out);
    }
    return PTEC_OK;
}

/* fn(x), every NaN the quiet NaN 0x7FC00000: the CPUs' and libms' NaN signs
 * differ, and the host, the boards and the reference write the same bytes. */
static float math_value(ptec_float_fn fn, float x)
{
    float y = fn(x);
    return y != y ? NAN : y;
}

ptec_status ptec_unary_run_float(ptec_op *op, ptec_float_fn fn)
{
    const unary_state *s = op->state;
    const ptec_tensor *t_in = ptec_op_tensor(op, 0);
    const ptec_tensor *t_out = ptec_op_tensor(op, op->argc - 2u);
    const float *x = (const float *)(const void *)t_in->data;
    float *y = (float *)(void *)t_out->data;
    if (s->flat) {
        for (uint32_t i = 0; i < s->numel; ++i) {
            y[i] = math_value(fn, x[i]);
        }
        return PTEC_OK;
    }
    int32_t stride_in[PTEC_MAX_RANK], stride_out[PTEC_MAX_RANK], index[PTEC_MAX_RANK] = {0};
    ptec_physical_strides(t_in, stride_in);
    ptec_physical_strides(t_out, stride_out);
    size_t off_in = 0, off_out = 0;
    for (uint32_t n = 0; n < s->numel; ++n) {
        y[off_out] = math_value(fn, x[off_in]);
        ptec_walk_step(s->rank, t_out->sizes, index, stride_in, &off_in, stride_out, &off_out);
    }
    return PTEC_OK;
}
