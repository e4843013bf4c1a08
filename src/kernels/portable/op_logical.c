/* aten::logical_{and,or,xor}.out(Tensor self, Tensor other, *, Tensor(a!) out)
 * aten::logical_not.out(Tensor self, *, Tensor(a!) out)
 *
 * Truth values into a bool out, with NumPy broadcasting. A value is true
 * when it is nonzero, as in PyTorch (a float NaN is true); the inputs may
 * be bool, uint8, int8 or float32, each of its own dtype. ptec's programs
 * call these on bools: `&`, `|`, `^` and `~` of bool tensors are the same
 * functions, so they lower here too. */
#include <string.h>

#include "kernels/portable/broadcast.h"

typedef enum logical_kind { LOGICAL_AND, LOGICAL_OR, LOGICAL_XOR, LOGICAL_NOT } logical_kind;

typedef struct logical_state {
    uint8_t kind;      /* logical_kind */
    uint8_t dtype[2];  /* self's, other's */
} logical_state;

static bool truth_dtype(uint8_t dtype)
{
    return dtype == PTEC_DTYPE_BOOL || dtype == PTEC_DTYPE_BYTE || dtype == PTEC_DTYPE_CHAR ||
           dtype == PTEC_DTYPE_FLOAT;
}

static ptec_status prepare(ptec_op *op, logical_kind kind)
{
    logical_state *s = op->state;
    int inputs = kind == LOGICAL_NOT ? 1 : 2;
    ptec_tensor *in[2] = {NULL, NULL}, *out;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, (size_t)inputs + 2u)) != PTEC_OK || (st = ptec_op_get_out(op, &out)) != PTEC_OK) {
        return st;
    }
    memset(s, 0, sizeof *s);
    int32_t strides[PTEC_MAX_RANK];
    for (int k = 0; k < inputs; ++k) {
        if ((st = ptec_op_get_tensor(op, (size_t)k, &in[k])) != PTEC_OK) {
            return st;
        }
        if (!truth_dtype(in[k]->dtype)) {
            return ptec_op_fail(op, PTEC_NOT_SUPPORTED, k, PTEC_MSG("dtype not supported (bool, uint8, int8, float32)"));
        }
        if ((st = ptec_broadcast_strides(op, k, in[k], out, strides)) != PTEC_OK) {
            return st;
        }
        s->dtype[k] = in[k]->dtype;
    }
    if (out->dtype != PTEC_DTYPE_BOOL) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, inputs, PTEC_MSG("out must be bool"));
    }
    if (out->flags & PTEC_TENSOR_CONSTANT) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, inputs, PTEC_MSG("out must not be a constant tensor"));
    }
    if (kind == LOGICAL_NOT && !ptec_tensor_same_shape(in[0], out)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 1, PTEC_MSG("out must have self's sizes"));
    }
    s->kind = (uint8_t)kind;
    return PTEC_OK;
}

static bool truth(uint8_t dtype, const uint8_t *p)
{
    if (dtype == PTEC_DTYPE_FLOAT) {
        float f;
        memcpy(&f, p, sizeof f);
        return f != 0.0f;         /* NaN != 0: true, as in PyTorch */
    }
    return *p != 0u;
}

static ptec_status run(ptec_op *op)
{
    const logical_state *s = op->state;
    int inputs = s->kind == LOGICAL_NOT ? 1 : 2;
    const uint8_t *a = ptec_op_tensor(op, 0)->data;
    const uint8_t *b = inputs == 2 ? ptec_op_tensor(op, 1)->data : NULL;
    const ptec_tensor *t_out = ptec_op_tensor(op, (size_t)inputs);
    uint8_t *out = t_out->data;
    size_t es_a = ptec_dtype_size(s->dtype[0]), es_b = inputs == 2 ? ptec_dtype_size(s->dtype[1]) : 0u;
    static const int args[2] = {0, 1};
    ptec_broadcast w;
    ptec_broadcast_start(&w, op, args, inputs, inputs);
    for (uint32_t i = 0; i < t_out->numel; ++i, ptec_broadcast_next(&w)) {
        bool x = truth(s->dtype[0], a + w.off[0] * es_a);
        bool y = inputs == 2 && truth(s->dtype[1], b + w.off[1] * es_b);
        bool r = s->kind == LOGICAL_AND ? (x && y) : s->kind == LOGICAL_OR ? (x || y)
                 : s->kind == LOGICAL_XOR ? (x != y) : !x;
        out[w.off[w.n]] = r ? 1u : 0u;
    }
    return PTEC_OK;
}

static ptec_status prepare_and(ptec_op *op) { return prepare(op, LOGICAL_AND); }
static ptec_status prepare_or(ptec_op *op) { return prepare(op, LOGICAL_OR); }
static ptec_status prepare_xor(ptec_op *op) { return prepare(op, LOGICAL_XOR); }
static ptec_status prepare_not(ptec_op *op) { return prepare(op, LOGICAL_NOT); }

const ptec_kernel ptec_kernel_aten_logical_and_out = {"aten::logical_and.out", sizeof(logical_state), prepare_and, run};
const ptec_kernel ptec_kernel_aten_logical_or_out = {"aten::logical_or.out", sizeof(logical_state), prepare_or, run};
const ptec_kernel ptec_kernel_aten_logical_xor_out = {"aten::logical_xor.out", sizeof(logical_state), prepare_xor, run};
const ptec_kernel ptec_kernel_aten_logical_not_out = {"aten::logical_not.out", sizeof(logical_state), prepare_not, run};
