/* dim_order_ops::_to_dim_order_copy.out(Tensor self, *, bool non_blocking=False,
 *                                       int[]? dim_order=None, Tensor(a!) out)
 *
 * A dtype conversion, ExecuTorch's form of `x.to(dtype)` / `x.float()`:
 * here from an integer tensor (int64 indices of argmax, int8/16/32, uint8)
 * or float32 into float32, element by element in one dim order. Only into
 * float32 because every integer converts to it with a defined result (C
 * rounds an int64 beyond 2^24 to the nearest float), while a float out of
 * an integer type's range has no defined conversion in C. A bool (a
 * comparison's result: `mask.float()`, `.int()`, `.long()`) converts into
 * float32, int32 or int64 as 0 or 1 (any nonzero byte is true). */
#include <string.h>

#include "kernels/portable/portable_args.h"

typedef struct to_copy_state {
    uint8_t dtype; /* self's */
    uint8_t out;   /* out's */
} to_copy_state;

static bool convertible(uint8_t dtype)
{
    return dtype == PTEC_DTYPE_BOOL || dtype == PTEC_DTYPE_LONG || dtype == PTEC_DTYPE_INT || dtype == PTEC_DTYPE_SHORT ||
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
    bool into_int = out->dtype == PTEC_DTYPE_INT || out->dtype == PTEC_DTYPE_LONG;
    if (!convertible(self->dtype) || (out->dtype != PTEC_DTYPE_FLOAT && !(into_int && self->dtype == PTEC_DTYPE_BOOL))) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, -1,
                            PTEC_MSG("into float32 only (a bool also into int32/int64)"));
    }
    if (out->flags & PTEC_TENSOR_CONSTANT) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, 3, PTEC_MSG("out must not be a constant tensor"));
    }
    if (!ptec_tensor_same_shape(self, out) || memcmp(self->dim_order, out->dim_order, out->rank) != 0) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, -1, PTEC_MSG("out must have self's sizes and dim order"));
    }
    s->dtype = self->dtype;
    s->out = out->dtype;
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const to_copy_state *s = op->state;
    const ptec_tensor *t_in = ptec_op_tensor(op, 0), *t_out = ptec_op_tensor(op, 3);
    float *y = t_out->data;
    uint32_t n = t_out->numel;
    if (s->dtype == PTEC_DTYPE_BOOL) {
        /* one loop per out dtype, each choosing between two constants (no
         * conversion inside a branch, which GCC emits for Cortex-M55 as a
         * predicated vcvt its assembler rejects) */
        const uint8_t *b = t_in->data;
        if (s->out == PTEC_DTYPE_LONG) {
            for (uint32_t i = 0; i < n; ++i) {
                ((int64_t *)t_out->data)[i] = b[i] != 0u ? 1 : 0;
            }
        } else if (s->out == PTEC_DTYPE_INT) {
            for (uint32_t i = 0; i < n; ++i) {
                ((int32_t *)t_out->data)[i] = b[i] != 0u ? 1 : 0;
            }
        } else {
            for (uint32_t i = 0; i < n; ++i) {
                y[i] = b[i] != 0u ? 1.0f : 0.0f;
            }
        }
        return PTEC_OK;
    }
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
