/* aten::where.self_out(Tensor condition, Tensor self, Tensor other, *, Tensor(a!) out)
 *
 * out = self where condition is true, else other, with NumPy broadcasting
 * of all three. condition is bool (or uint8: nonzero is true); self, other
 * and out share one dtype, whose elements are copied as bytes (so an int8
 * program's choice is exact when both sides are on out's grid, which
 * ptec's compiler arranges). */
#include <string.h>

#include "kernels/portable/broadcast.h"

typedef struct where_state {
    uint8_t element_size;
} where_state;

static ptec_status prepare(ptec_op *op)
{
    where_state *s = op->state;
    ptec_tensor *cond, *self, *other, *out;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, 5u)) != PTEC_OK || (st = ptec_op_get_tensor(op, 0, &cond)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, 1, &self)) != PTEC_OK || (st = ptec_op_get_tensor(op, 2, &other)) != PTEC_OK ||
        (st = ptec_op_get_out(op, &out)) != PTEC_OK) {
        return st;
    }
    if (cond->dtype != PTEC_DTYPE_BOOL && cond->dtype != PTEC_DTYPE_BYTE) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, 0, PTEC_MSG("condition must be bool or uint8"));
    }
    if (self->dtype != out->dtype || other->dtype != out->dtype) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, -1, PTEC_MSG("self, other and out must share one dtype (no promotion)"));
    }
    size_t es = ptec_dtype_size(out->dtype);
    if (es == 0u || es > 8u) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, 3, PTEC_MSG("dtype not supported"));
    }
    if (out->flags & PTEC_TENSOR_CONSTANT) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, 3, PTEC_MSG("out must not be a constant tensor"));
    }
    int32_t strides[PTEC_MAX_RANK];
    for (int k = 0; k < 3; ++k) {
        if ((st = ptec_broadcast_strides(op, k, ptec_op_tensor(op, (size_t)k), out, strides)) != PTEC_OK) {
            return st;
        }
    }
    s->element_size = (uint8_t)es;
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const where_state *s = op->state;
    const uint8_t *cond = ptec_op_tensor(op, 0)->data;
    const uint8_t *a = ptec_op_tensor(op, 1)->data;
    const uint8_t *b = ptec_op_tensor(op, 2)->data;
    const ptec_tensor *t_out = ptec_op_tensor(op, 3);
    uint8_t *out = t_out->data;
    size_t es = s->element_size;
    static const int args[3] = {0, 1, 2};
    ptec_broadcast w;
    ptec_broadcast_start(&w, op, args, 3, 3);
    for (uint32_t i = 0; i < t_out->numel; ++i, ptec_broadcast_next(&w)) {
        const uint8_t *src = cond[w.off[0]] != 0u ? a + w.off[1] * es : b + w.off[2] * es;
        memcpy(out + w.off[3] * es, src, es);
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_aten_where_self_out = {"aten::where.self_out", sizeof(where_state), prepare, run};
