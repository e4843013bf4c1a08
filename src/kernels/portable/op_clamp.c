/* aten::clamp.out(Tensor self, Scalar? min=None, Scalar? max=None, *, Tensor(a!) out) */
#include "kernels/portable/unary_elementwise.h"

static ptec_status prepare(ptec_op *op)
{
    double lo = 0.0, hi = 0.0;
    ptec_status st = ptec_unary_prepare(op, UNARY_CLAMP, 5);
    if (st != PTEC_OK) {
        return st;
    }
    bool has_lo = !ptec_op_arg_is_null(op, 1), has_hi = !ptec_op_arg_is_null(op, 2);
    if ((has_lo && (st = ptec_op_get_scalar(op, 1, &lo)) != PTEC_OK) ||
        (has_hi && (st = ptec_op_get_scalar(op, 2, &hi)) != PTEC_OK)) {
        return st;
    }
    if (!has_lo && !has_hi) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, -1, PTEC_MSG("at least one of min and max must be given"));
    }
    return ptec_unary_set_bounds(op, 1, has_lo ? &lo : NULL, 2, has_hi ? &hi : NULL);
}

const ptec_kernel ptec_kernel_aten_clamp_out = {"aten::clamp.out", sizeof(unary_state), prepare, ptec_unary_run};
