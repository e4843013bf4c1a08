/* aten::{gt,ge,lt,le,eq,ne}.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out)
 * aten::{gt,ge,lt,le,eq,ne}.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out)
 *
 * Element-wise comparisons into a bool out, with NumPy broadcasting (the
 * Tensor form). self and other share one dtype (bool, uint8, int8/16/32/64
 * or float32; no promotion); ptec's int8 programs compare raw int8 codes
 * only where both sides are on one grid (why that is exact:
 * python/ptec/backends/cortex_m/lowering_bool.py). Floats compare in single
 * precision, as PyTorch and upstream do: a Scalar is first rounded to
 * float32, and a NaN is unequal to everything. An integer or bool self is
 * compared with the Scalar exactly, as numbers (upstream would compute in float32 for a
 * non-integral Scalar; ptec's compiler gives integral ones only). A bool
 * reads as 0 or 1 (any nonzero byte is true). */
#include <float.h>
#include <math.h>
#include <string.h>

#include "kernels/portable/binary_operands.h"
#include "kernels/portable/broadcast.h"

typedef enum cmp_kind { CMP_GT, CMP_GE, CMP_LT, CMP_LE, CMP_EQ, CMP_NE } cmp_kind;

typedef struct compare_state {
    uint8_t kind;      /* cmp_kind */
    uint8_t dtype;     /* self's (and other's) */
    uint8_t scalar;    /* 1: the Scalar form */
    float fscalar;     /* the Scalar rounded to float32 (float self) */
    double dscalar;    /* the Scalar as given (integer self) */
} compare_state;

/* A double rounded to float32 to nearest, ties to even, as C's conversion
 * does in range; beyond FLT_MAX C leaves it undefined, IEEE gives FLT_MAX
 * below FLT_MAX + half its ulp (2^103) and infinity from there. */
static float to_float(double d)
{
    const double limit = (double)FLT_MAX + ldexp(1.0, 103);
    if (d >= limit) {
        return INFINITY;
    }
    if (d <= -limit) {
        return -INFINITY;
    }
    if (d > (double)FLT_MAX) {
        return FLT_MAX;
    }
    if (d < -(double)FLT_MAX) {
        return -FLT_MAX;
    }
    return (float)d;
}

static ptec_status prepare(ptec_op *op, cmp_kind kind, bool scalar)
{
    compare_state *s = op->state;
    ptec_tensor *self, *other = NULL, *out;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, 4u)) != PTEC_OK || (st = ptec_op_get_tensor(op, 0, &self)) != PTEC_OK ||
        (st = ptec_op_get_out(op, &out)) != PTEC_OK) {
        return st;
    }
    memset(s, 0, sizeof *s);
    if (scalar) {
        if ((st = ptec_op_get_scalar(op, 1, &s->dscalar)) != PTEC_OK) {
            return st;
        }
        s->fscalar = to_float(s->dscalar);
    } else if ((st = ptec_op_get_tensor(op, 1, &other)) != PTEC_OK) {
        return st;
    }
    if ((st = ptec_binary_expect_plain_dtype(op, self)) != PTEC_OK) {
        return st;
    }
    if (other != NULL && other->dtype != self->dtype) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, 1, PTEC_MSG("self and other must share one dtype (no promotion)"));
    }
    if (out->dtype != PTEC_DTYPE_BOOL) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, 2, PTEC_MSG("out must be bool"));
    }
    if ((st = ptec_binary_onto_out(op, self, other, out)) != PTEC_OK) {
        return st;
    }
    if (scalar && !ptec_tensor_same_shape(self, out)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 2, PTEC_MSG("out must have self's sizes"));
    }
    s->kind = (uint8_t)kind;
    s->dtype = self->dtype;
    s->scalar = scalar ? 1u : 0u;
    return PTEC_OK;
}

static bool decide(uint8_t kind, int order)
{
    switch (kind) {
    case CMP_GT: return order > 0;
    case CMP_GE: return order >= 0;
    case CMP_LT: return order < 0;
    case CMP_LE: return order <= 0;
    case CMP_EQ: return order == 0;
    default: return order != 0;
    }
}

/* -1, 0 or 1; 2 for unordered (a NaN): only `ne` holds then. */
static int order_float(float a, float b)
{
    return a > b ? 1 : a < b ? -1 : a == b ? 0 : 2;
}

/* An integer against a double, exactly: d's floor as an integer first
 * (both in int64's range), then d's fraction breaks a tie. */
static int order_int_double(int64_t x, double d)
{
    if (isnan(d)) {
        return 2;
    }
    if (d >= 9223372036854775808.0) {
        return -1;
    }
    if (d < -9223372036854775808.0) {
        return 1;
    }
    double fl = floor(d);
    int64_t k = (int64_t)fl;
    if (x != k) {
        return x > k ? 1 : -1;
    }
    return d > fl ? -1 : 0;
}

static bool element(const compare_state *s, const uint8_t *a, const uint8_t *b)
{
    int order;
    if (s->dtype == PTEC_DTYPE_FLOAT) {
        float x, y = s->fscalar;
        memcpy(&x, a, sizeof x);
        if (!s->scalar) {
            memcpy(&y, b, sizeof y);
        }
        order = order_float(x, y);
    } else if (s->scalar) {
        order = order_int_double(ptec_binary_load_int(s->dtype, a), s->dscalar);
    } else {
        int64_t x = ptec_binary_load_int(s->dtype, a), y = ptec_binary_load_int(s->dtype, b);
        order = x > y ? 1 : x < y ? -1 : 0;
    }
    return order != 2 ? decide(s->kind, order) : s->kind == CMP_NE;
}

static ptec_status run(ptec_op *op)
{
    const compare_state *s = op->state;
    const uint8_t *a = ptec_op_tensor(op, 0)->data;
    const uint8_t *b = s->scalar ? NULL : ptec_op_tensor(op, 1)->data;
    const ptec_tensor *t_out = ptec_op_tensor(op, 2);
    uint8_t *out = t_out->data;
    size_t es = ptec_dtype_size(s->dtype);
    static const int args[2] = {0, 1};
    ptec_broadcast w;
    ptec_broadcast_start(&w, op, args, s->scalar ? 1 : 2, 2);
    for (uint32_t i = 0; i < t_out->numel; ++i, ptec_broadcast_next(&w)) {
        out[w.off[w.n]] = element(s, a + w.off[0] * es, s->scalar ? NULL : b + w.off[1] * es) ? 1u : 0u;
    }
    return PTEC_OK;
}

/* One prepare per kernel, so each kernel knows its comparison; the
 * kernels themselves are written out, one line each, where the operator
 * manifest's test finds them. */
#define PREPARES(op_name, KIND)                                                                    \
    static ptec_status prepare_##op_name##_tensor(ptec_op *op) { return prepare(op, KIND, false); } \
    static ptec_status prepare_##op_name##_scalar(ptec_op *op) { return prepare(op, KIND, true); }

PREPARES(gt, CMP_GT)
PREPARES(ge, CMP_GE)
PREPARES(lt, CMP_LT)
PREPARES(le, CMP_LE)
PREPARES(eq, CMP_EQ)
PREPARES(ne, CMP_NE)

const ptec_kernel ptec_kernel_aten_gt_tensor_out = {"aten::gt.Tensor_out", sizeof(compare_state), prepare_gt_tensor, run};
const ptec_kernel ptec_kernel_aten_gt_scalar_out = {"aten::gt.Scalar_out", sizeof(compare_state), prepare_gt_scalar, run};
const ptec_kernel ptec_kernel_aten_ge_tensor_out = {"aten::ge.Tensor_out", sizeof(compare_state), prepare_ge_tensor, run};
const ptec_kernel ptec_kernel_aten_ge_scalar_out = {"aten::ge.Scalar_out", sizeof(compare_state), prepare_ge_scalar, run};
const ptec_kernel ptec_kernel_aten_lt_tensor_out = {"aten::lt.Tensor_out", sizeof(compare_state), prepare_lt_tensor, run};
const ptec_kernel ptec_kernel_aten_lt_scalar_out = {"aten::lt.Scalar_out", sizeof(compare_state), prepare_lt_scalar, run};
const ptec_kernel ptec_kernel_aten_le_tensor_out = {"aten::le.Tensor_out", sizeof(compare_state), prepare_le_tensor, run};
const ptec_kernel ptec_kernel_aten_le_scalar_out = {"aten::le.Scalar_out", sizeof(compare_state), prepare_le_scalar, run};
const ptec_kernel ptec_kernel_aten_eq_tensor_out = {"aten::eq.Tensor_out", sizeof(compare_state), prepare_eq_tensor, run};
const ptec_kernel ptec_kernel_aten_eq_scalar_out = {"aten::eq.Scalar_out", sizeof(compare_state), prepare_eq_scalar, run};
const ptec_kernel ptec_kernel_aten_ne_tensor_out = {"aten::ne.Tensor_out", sizeof(compare_state), prepare_ne_tensor, run};
const ptec_kernel ptec_kernel_aten_ne_scalar_out = {"aten::ne.Scalar_out", sizeof(compare_state), prepare_ne_scalar, run};
