/* dim_order_ops::_to_dim_order_copy.out(Tensor self, *, bool non_blocking=False,
 *                                       int[]? dim_order=None, Tensor(a!) out)
 *
 * A dtype conversion, ExecuTorch's form of `x.to(dtype)` / `x.float()` /
 * `x.long()`, element by element in one dim order:
 *  - an integer tensor (int64 indices of argmax, int8/16/32, uint8) or
 *    float32 into float32: every integer converts with a defined result (C
 *    rounds an int64 beyond 2^24 to the nearest float);
 *  - float32 into int64 or int32 (ids computed in the program): truncation
 *    toward zero, as PyTorch's. A NaN, an infinity or a value whose
 *    truncation is outside the integer type has no defined conversion in C
 *    (PyTorch's result there is whatever the CPU gives): it fails the
 *    execute with InvalidArgument, checked for every element before any is
 *    written. */
#include <string.h>

#include "kernels/portable/portable_args.h"

typedef struct to_copy_state {
    uint8_t dtype;     /* self's */
    uint8_t out_dtype; /* float32, or int64/int32 from float32 */
} to_copy_state;

static bool convertible(uint8_t dtype)
{
    return dtype == PTEC_DTYPE_LONG || dtype == PTEC_DTYPE_INT || dtype == PTEC_DTYPE_SHORT ||
           dtype == PTEC_DTYPE_CHAR || dtype == PTEC_DTYPE_BYTE || dtype == PTEC_DTYPE_FLOAT;
}

static ptec_status prepare(ptec_op *op)
{
    to_copy_state *s = op->state;
    ptec_tensor *self, *out;
    ptec_status st = ptec_portable_dim_order_copy_args(op, &self, &out);
    if (st != PTEC_OK) {
        return st;
    }
    bool to_float = convertible(self->dtype) && out->dtype == PTEC_DTYPE_FLOAT;
    bool to_index = self->dtype == PTEC_DTYPE_FLOAT && (out->dtype == PTEC_DTYPE_LONG || out->dtype == PTEC_DTYPE_INT);
    if (!to_float && !to_index) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, -1,
                            PTEC_MSG("converts integers and float32 into float32, float32 into int64/int32"));
    }
    if (out->flags & PTEC_TENSOR_CONSTANT) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, 3, PTEC_MSG("out must not be a constant tensor"));
    }
    if (!ptec_tensor_same_shape(self, out) || memcmp(self->dim_order, out->dim_order, out->rank) != 0) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, -1, PTEC_MSG("out must have self's sizes and dim order"));
    }
    s->dtype = self->dtype;
    s->out_dtype = out->dtype;
    return PTEC_OK;
}

/* Whether float v truncates to an integer in [-2^(bits-1), 2^(bits-1)):
 * the bounds are powers of two, exact in float, and no float lies between
 * -2^(bits-1) - 1 and -2^(bits-1); NaN fails both tests. */
static bool truncates_into(float v, int bits)
{
    const float bound = bits == 64 ? 0x1p63f : 0x1p31f;
    return v >= -bound && v < bound;
}

static ptec_status run_to_index(ptec_op *op, const to_copy_state *s)
{
    const ptec_tensor *t_in = ptec_op_tensor(op, 0), *t_out = ptec_op_tensor(op, 3);
    const float *x = t_in->data;
    uint32_t n = t_out->numel;
    int bits = s->out_dtype == PTEC_DTYPE_LONG ? 64 : 32;
    for (uint32_t i = 0; i < n; ++i) {
        if (!truncates_into(x[i], bits)) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 0,
                                PTEC_MSG("a value is NaN, infinite or outside the integer type"));
        }
    }
    for (uint32_t i = 0; i < n; ++i) {
        if (bits == 64) {
            ((int64_t *)t_out->data)[i] = (int64_t)x[i];
        } else {
            ((int32_t *)t_out->data)[i] = (int32_t)x[i];
        }
    }
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const to_copy_state *s = op->state;
    if (s->out_dtype != PTEC_DTYPE_FLOAT) {
        return run_to_index(op, s);
    }
    const ptec_tensor *t_in = ptec_op_tensor(op, 0), *t_out = ptec_op_tensor(op, 3);
    float *y = t_out->data;
    uint32_t n = t_out->numel;
    /* Same sizes and dim order: element i of one is element i of the other. */
    for (uint32_t i = 0; i < n; ++i) {
        switch (s->dtype) {
        case PTEC_DTYPE_LONG: y[i] = (float)((const int64_t *)t_in->data)[i]; break;
        case PTEC_DTYPE_INT: y[i] = (float)((const int32_t *)t_in->data)[i]; break;
        case PTEC_DTYPE_SHORT: y[i] = (float)((const int16_t *)t_in->data)[i]; break;
        case PTEC_DTYPE_CHAR: y[i] = (float)((const int8_t *)t_in->data)[i]; break;
        case PTEC_DTYPE_BYTE: y[i] = (float)((const uint8_t *)t_in->data)[i]; break;
        default: y[i] = ((const float *)t_in->data)[i]; break;
        }
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_dim_order_to_copy_out = {"dim_order_ops::_to_dim_order_copy.out",
                                                       sizeof(to_copy_state), prepare, run};
