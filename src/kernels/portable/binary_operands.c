#include "kernels/portable/binary_operands.h"

#include <string.h>

#include "kernels/portable/broadcast.h"

ptec_status ptec_binary_operands(ptec_op *op, ptec_tensor **self, ptec_tensor **other, ptec_tensor **out)
{
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, 4u)) != PTEC_OK || (st = ptec_op_get_tensor(op, 0, self)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, 1, other)) != PTEC_OK) {
        return st;
    }
    return ptec_op_get_out(op, out);
}

ptec_status ptec_binary_expect_plain_dtype(ptec_op *op, const ptec_tensor *self)
{
    switch (self->dtype) {
    case PTEC_DTYPE_BOOL: case PTEC_DTYPE_BYTE: case PTEC_DTYPE_CHAR: case PTEC_DTYPE_SHORT:
    case PTEC_DTYPE_INT: case PTEC_DTYPE_LONG: case PTEC_DTYPE_FLOAT:
        return PTEC_OK;
    default:
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, 0,
                            PTEC_MSG("dtype not supported (bool, uint8, int8/16/32/64, float32)"));
    }
}

ptec_status ptec_binary_expect_same_dtype(ptec_op *op, const ptec_tensor *self, const ptec_tensor *other,
                                          const ptec_tensor *out)
{
    if (other->dtype != self->dtype || out->dtype != self->dtype) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, other->dtype != self->dtype ? 1 : 2,
                            PTEC_MSG("self, other and out must share one dtype (no promotion)"));
    }
    return PTEC_OK;
}

ptec_status ptec_binary_onto_out(ptec_op *op, const ptec_tensor *self, const ptec_tensor *other,
                                 const ptec_tensor *out)
{
    if (out->flags & PTEC_TENSOR_CONSTANT) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, 2, PTEC_MSG("out must not be a constant tensor"));
    }
    int32_t strides[PTEC_MAX_RANK];
    ptec_status st = ptec_broadcast_strides(op, 0, self, out, strides);
    if (st == PTEC_OK && other != NULL) {
        st = ptec_broadcast_strides(op, 1, other, out, strides);
    }
    return st;
}

bool ptec_binary_same_layout(const ptec_tensor *a, const ptec_tensor *b)
{
    return ptec_tensor_same_shape(a, b) && memcmp(a->dim_order, b->dim_order, a->rank) == 0;
}

int64_t ptec_binary_load_int(uint8_t dtype, const uint8_t *p)
{
    switch (dtype) {
    case PTEC_DTYPE_BOOL: return *p != 0;
    case PTEC_DTYPE_BYTE: return *p;
    case PTEC_DTYPE_CHAR: return (int8_t)*p;
    case PTEC_DTYPE_SHORT: { int16_t v; memcpy(&v, p, sizeof v); return v; }
    case PTEC_DTYPE_INT: { int32_t v; memcpy(&v, p, sizeof v); return v; }
    default: { int64_t v; memcpy(&v, p, sizeof v); return v; }
    }
}
