#include "kernels/portable/binary_elementwise.h"

#include <math.h>
#include <string.h>

#include "kernels/portable/broadcast.h"
#include "kernels/portable/strides.h"

static bool supported_dtype(uint8_t dtype)
{
    switch (dtype) {
    case PTEC_DTYPE_BYTE: case PTEC_DTYPE_CHAR: case PTEC_DTYPE_SHORT: case PTEC_DTYPE_INT:
    case PTEC_DTYPE_LONG: case PTEC_DTYPE_FLOAT: case PTEC_DTYPE_DOUBLE:
        return true;
    default:
        return false;
    }
}

static bool same_layout(const ptec_tensor *a, const ptec_tensor *b)
{
    return ptec_tensor_same_shape(a, b) && memcmp(a->dim_order, b->dim_order, a->rank) == 0;
}

ptec_status ptec_binary_prepare(ptec_op *op, binary_kind kind, int alpha_arg)
{
    binary_state *s = op->state;
    ptec_tensor *self, *other, *out;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, alpha_arg >= 0 ? 5u : 4u)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, 0, &self)) != PTEC_OK || (st = ptec_op_get_tensor(op, 1, &other)) != PTEC_OK ||
        (st = ptec_op_get_out(op, &out)) != PTEC_OK) {
        return st;
    }
    if (self->dtype != out->dtype || other->dtype != out->dtype) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, -1, "inputs and out must share one dtype (no promotion)");
    }
    if (!supported_dtype(out->dtype)) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, -1, "dtype not supported (uint8/int8/16/32/64, float32/64)");
    }
    if (kind == BINARY_DIV && out->dtype != PTEC_DTYPE_FLOAT && out->dtype != PTEC_DTYPE_DOUBLE) {
        /* PyTorch's true division of integers gives a float tensor: a promotion ptec does not make. */
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, -1, "div needs float32 or float64 tensors");
    }
    memset(s, 0, sizeof *s);
    s->kind = (uint8_t)kind;
    s->dtype = out->dtype;
    s->rank = out->rank;
    s->numel = out->numel;
    s->alpha = 1.0;
    s->alpha_int = 1;
    if (alpha_arg >= 0) {
        if ((st = ptec_op_get_scalar(op, (size_t)alpha_arg, &s->alpha)) != PTEC_OK) {
            return st;
        }
        bool integral_dtype = out->dtype != PTEC_DTYPE_FLOAT && out->dtype != PTEC_DTYPE_DOUBLE;
        if (integral_dtype && (s->alpha != floor(s->alpha) || fabs(s->alpha) > 9.0e18)) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, alpha_arg, "alpha must be an integer for integer tensors");
        }
        s->alpha_int = integral_dtype ? (int64_t)s->alpha : 0;
    }
    int32_t strides[PTEC_MAX_RANK];
    if ((st = ptec_broadcast_strides(op, 0, self, out, strides)) != PTEC_OK ||
        (st = ptec_broadcast_strides(op, 1, other, out, strides)) != PTEC_OK) {
        return st;
    }
    if (same_layout(self, out) && same_layout(other, out)) {
        s->flat = 1;
    } else if (same_layout(self, out) && other->numel == 1) {
        s->flat = 2;
    }
    return PTEC_OK;
}

static double load_real(uint8_t dtype, const uint8_t *p)
{
    if (dtype == PTEC_DTYPE_FLOAT) {
        float f;
        memcpy(&f, p, sizeof f);
        return f;
    }
    double d;
    memcpy(&d, p, sizeof d);
    return d;
}

static int64_t load_int(uint8_t dtype, const uint8_t *p)
{
    switch (dtype) {
    case PTEC_DTYPE_BYTE: return *p;
    case PTEC_DTYPE_CHAR: return (int8_t)*p;
    case PTEC_DTYPE_SHORT: { int16_t v; memcpy(&v, p, sizeof v); return v; }
    case PTEC_DTYPE_INT: { int32_t v; memcpy(&v, p, sizeof v); return v; }
    default: { int64_t v; memcpy(&v, p, sizeof v); return v; }
    }
}

static void store_int(uint8_t dtype, uint8_t *p, uint64_t v)
{
    /* Integer results wrap, as in PyTorch, by truncating the two's complement bits. */
    switch (dtype) {
    case PTEC_DTYPE_BYTE: case PTEC_DTYPE_CHAR: *p = (uint8_t)v; break;
    case PTEC_DTYPE_SHORT: { uint16_t t = (uint16_t)v; memcpy(p, &t, sizeof t); break; }
    case PTEC_DTYPE_INT: { uint32_t t = (uint32_t)v; memcpy(p, &t, sizeof t); break; }
    default: memcpy(p, &v, sizeof v); break;
    }
}

static void combine(const binary_state *s, const uint8_t *a, const uint8_t *b, uint8_t *out)
{
    if (s->dtype == PTEC_DTYPE_FLOAT) {
        /* Single precision throughout, as upstream's portable kernel computes it. */
        float x = (float)load_real(s->dtype, a), y = (float)load_real(s->dtype, b);
        float r = s->kind == BINARY_ADD ? x + (float)s->alpha * y
                  : s->kind == BINARY_SUB ? x - (float)s->alpha * y
                  : s->kind == BINARY_MUL ? x * y
                                          : x / y;
        memcpy(out, &r, sizeof r);
    } else if (s->dtype == PTEC_DTYPE_DOUBLE) {
        double x = load_real(s->dtype, a), y = load_real(s->dtype, b);
        double r = s->kind == BINARY_ADD ? x + s->alpha * y
                   : s->kind == BINARY_SUB ? x - s->alpha * y
                   : s->kind == BINARY_MUL ? x * y
                                           : x / y;
        memcpy(out, &r, sizeof r);
    } else {
        uint64_t x = (uint64_t)load_int(s->dtype, a), y = (uint64_t)load_int(s->dtype, b);
        uint64_t r = s->kind == BINARY_ADD ? x + (uint64_t)s->alpha_int * y
                     : s->kind == BINARY_SUB ? x - (uint64_t)s->alpha_int * y
                                             : x * y;
        store_int(s->dtype, out, r);
    }
}

/* The common case, kept short: float add over equal layouts (or one other
 * element), straight from the tensors' data. */
static ptec_status run_flat_float_add(const ptec_op *op, const binary_state *s)
{
    const float *a = ptec_op_tensor(op, 0)->data;
    const float *b = ptec_op_tensor(op, 1)->data;
    float *out = ptec_op_tensor(op, op->argc - 2u)->data;
    const float alpha = (float)s->alpha;
    const uint32_t n = s->numel;
    if (s->flat == 1) {
        for (uint32_t i = 0; i < n; ++i) {
            out[i] = a[i] + alpha * b[i];
        }
    } else {
        const float y = alpha * b[0];
        for (uint32_t i = 0; i < n; ++i) {
            out[i] = a[i] + y;
        }
    }
    return PTEC_OK;
}

/* Every other case. Out of line, so that its index arrays do not make the
 * float add pay a large stack frame. */
static ptec_status __attribute__((noinline)) run_general(ptec_op *op, const binary_state *s)
{
    const uint8_t *a = ptec_op_tensor(op, 0)->data;
    const uint8_t *b = ptec_op_tensor(op, 1)->data;
    uint8_t *out = ptec_op_tensor(op, op->argc - 2u)->data;
    size_t es = ptec_dtype_size(s->dtype);
    if (s->flat != 0) {
        size_t step_b = s->flat == 1 ? es : 0u;
        for (uint32_t i = 0; i < s->numel; ++i) {
            combine(s, a + i * es, b + i * step_b, out + i * es);
        }
        return PTEC_OK;
    }
    const ptec_tensor *t_out = ptec_op_tensor(op, op->argc - 2u);
    int32_t stride_a[PTEC_MAX_RANK], stride_b[PTEC_MAX_RANK], stride_out[PTEC_MAX_RANK];
    int32_t index[PTEC_MAX_RANK] = {0};
    /* prepare() already checked that both inputs broadcast to out. */
    (void)ptec_broadcast_strides(op, 0, ptec_op_tensor(op, 0), t_out, stride_a);
    (void)ptec_broadcast_strides(op, 1, ptec_op_tensor(op, 1), t_out, stride_b);
    ptec_physical_strides(t_out, stride_out);
    const int32_t *sizes = t_out->sizes;
    size_t off_a = 0, off_b = 0, off_out = 0;
    for (uint32_t n = 0; n < s->numel; ++n) {
        combine(s, a + off_a * es, b + off_b * es, out + off_out * es);
        for (int d = (int)s->rank - 1; d >= 0; --d) {
            if (++index[d] < sizes[d]) {
                off_a += (size_t)stride_a[d];
                off_b += (size_t)stride_b[d];
                off_out += (size_t)stride_out[d];
                break;
            }
            off_a -= (size_t)stride_a[d] * (size_t)(sizes[d] - 1);
            off_b -= (size_t)stride_b[d] * (size_t)(sizes[d] - 1);
            off_out -= (size_t)stride_out[d] * (size_t)(sizes[d] - 1);
            index[d] = 0;
        }
    }
    return PTEC_OK;
}

ptec_status ptec_binary_run(ptec_op *op)
{
    const binary_state *s = op->state;
    if (s->flat != 0 && s->dtype == PTEC_DTYPE_FLOAT && s->kind == BINARY_ADD) {
        return run_flat_float_add(op, s);
    }
    return run_general(op, s);
}
