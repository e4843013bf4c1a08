/* The element-wise extremes of two tensors, broadcast (NumPy rules, each
 * tensor through its own dim order; broadcast.c's walk):
 *   aten::minimum.out(Tensor self, Tensor other, *, Tensor(a!) out)
 *   aten::maximum.out(Tensor self, Tensor other, *, Tensor(a!) out)
 *   aten::fmin.out(Tensor self, Tensor other, *, Tensor(a!) out)
 *   aten::fmax.out(Tensor self, Tensor other, *, Tensor(a!) out)
 *
 * self, other and out share one dtype: bool, uint8, int8, int16, int32,
 * int64 or float32 (PyTorch's promotion is the program's, a cast). Integers
 * compare as numbers; a bool reads as 0 or 1 (any nonzero byte is true) and
 * is written as 0 or 1, so minimum is logical and, maximum logical or.
 *
 * float32: minimum / maximum give NaN where either operand is NaN (torch's
 * propagation); fmin / fmax give the other operand where one is NaN (C99's
 * fminf / fmaxf, which torch calls), NaN only where both are. Every NaN is
 * written as the one quiet NaN 0x7FC00000, as float_binary.c's: the CPUs'
 * default NaNs differ in sign and torch's vectorized loop writes another
 * pattern than its scalar one, so no NaN's bits are promised by torch.
 * Equal operands (-0.0 against +0.0) give self, what torch 1.13's CPU
 * kernels give in their scalar loop (and fmin / fmax everywhere); its
 * vectorized minimum / maximum loop (whole blocks of 16 floats on AVX2) gives other's
 * zero instead, so torch's own sign of such a zero depends on the tensor's
 * size. No arithmetic: comparisons and copies only, so every target writes
 * the same bytes and no libm function is linked. */
#include <math.h>
#include <string.h>

#include "kernels/portable/binary_operands.h"
#include "kernels/portable/broadcast.h"

typedef enum extreme_kind { EXTREME_MIN, EXTREME_MAX, EXTREME_FMIN, EXTREME_FMAX } extreme_kind;

typedef struct extreme_state {
    uint8_t dtype; /* self's, other's and out's */
} extreme_state;

static ptec_status prepare(ptec_op *op)
{
    extreme_state *s = op->state;
    ptec_tensor *self, *other, *out;
    ptec_status st;
    if ((st = ptec_binary_operands(op, &self, &other, &out)) != PTEC_OK ||
        (st = ptec_binary_expect_plain_dtype(op, self)) != PTEC_OK ||
        (st = ptec_binary_expect_same_dtype(op, self, other, out)) != PTEC_OK ||
        (st = ptec_binary_onto_out(op, self, other, out)) != PTEC_OK) {
        return st;
    }
    s->dtype = out->dtype;
    return PTEC_OK;
}

/* The float32 extreme; a NaN result is the quiet NaN 0x7FC00000. */
static float extreme_float(extreme_kind kind, float a, float b)
{
    bool a_nan = a != a, b_nan = b != b;
    if (a_nan || b_nan) {
        if (kind == EXTREME_FMIN || kind == EXTREME_FMAX) {
            return a_nan && b_nan ? NAN : (a_nan ? b : a);
        }
        return NAN;
    }
    bool want_min = kind == EXTREME_MIN || kind == EXTREME_FMIN;
    /* strict comparisons: equal operands (+0.0, -0.0) keep self */
    return want_min ? (b < a ? b : a) : (b > a ? b : a);
}

/* v is one of the operands, so it lies in the dtype: no narrowing loses bits */
static void store_int(uint8_t dtype, uint8_t *p, int64_t v)
{
    switch (dtype) {
    case PTEC_DTYPE_BOOL: case PTEC_DTYPE_BYTE: *p = (uint8_t)v; break;
    case PTEC_DTYPE_CHAR: { int8_t t = (int8_t)v; memcpy(p, &t, sizeof t); break; }
    case PTEC_DTYPE_SHORT: { int16_t t = (int16_t)v; memcpy(p, &t, sizeof t); break; }
    case PTEC_DTYPE_INT: { int32_t t = (int32_t)v; memcpy(p, &t, sizeof t); break; }
    default: memcpy(p, &v, sizeof v); break;
    }
}

static void element(extreme_kind kind, uint8_t dtype, const uint8_t *a, const uint8_t *b, uint8_t *y)
{
    if (dtype == PTEC_DTYPE_FLOAT) {
        float x, z;
        memcpy(&x, a, sizeof x);
        memcpy(&z, b, sizeof z);
        float r = extreme_float(kind, x, z);
        memcpy(y, &r, sizeof r);
        return;
    }
    /* integers hold no NaN: fmin is minimum, fmax maximum */
    int64_t x = ptec_binary_load_int(dtype, a), z = ptec_binary_load_int(dtype, b);
    bool want_min = kind == EXTREME_MIN || kind == EXTREME_FMIN;
    store_int(dtype, y, want_min ? (z < x ? z : x) : (z > x ? z : x));
}

static ptec_status run(ptec_op *op, extreme_kind kind)
{
    const extreme_state *s = op->state;
    const uint8_t *a = ptec_op_tensor(op, 0)->data, *b = ptec_op_tensor(op, 1)->data;
    const ptec_tensor *t_out = ptec_op_tensor(op, 2);
    uint8_t *y = t_out->data;
    const size_t es = ptec_dtype_size(s->dtype);
    static const int args[2] = {0, 1};
    ptec_broadcast w;
    ptec_broadcast_start(&w, op, args, 2, 2);
    for (uint32_t n = 0; n < t_out->numel; ++n, ptec_broadcast_next(&w)) {
        element(kind, s->dtype, a + w.off[0] * es, b + w.off[1] * es, y + w.off[2] * es);
    }
    return PTEC_OK;
}

static ptec_status run_minimum(ptec_op *op) { return run(op, EXTREME_MIN); }
static ptec_status run_maximum(ptec_op *op) { return run(op, EXTREME_MAX); }
static ptec_status run_fmin(ptec_op *op) { return run(op, EXTREME_FMIN); }
static ptec_status run_fmax(ptec_op *op) { return run(op, EXTREME_FMAX); }

const ptec_kernel ptec_kernel_aten_minimum_out = {"aten::minimum.out", sizeof(extreme_state), prepare, run_minimum};
const ptec_kernel ptec_kernel_aten_maximum_out = {"aten::maximum.out", sizeof(extreme_state), prepare, run_maximum};
const ptec_kernel ptec_kernel_aten_fmin_out = {"aten::fmin.out", sizeof(extreme_state), prepare, run_fmin};
const ptec_kernel ptec_kernel_aten_fmax_out = {"aten::fmax.out", sizeof(extreme_state), prepare, run_fmax};
