/* aten::hardtanh.out(Tensor self, Scalar min_val=-1, Scalar max_val=1, *, Tensor(a!) out) */
#include "kernels/portable/unary_elementwise.h"

static ptec_status prepare(ptec_op *op)
{
    double lo, hi;
    ptec_status st;
    if ((st = ptec_unary_prepare(op, UNARY_CLAMP, 5)) != PTEC_OK || (st = ptec_op_get_scalar(op, 1, &lo)) != PTEC_OK ||
        (st = ptec_op_get_scalar(op, 2, &hi)) != PTEC_OK) {
        return st;
    }
    return ptec_unary_set_bounds(op, 1, &lo, 2, &hi);
}

const ptec_kernel ptec_kernel_aten_hardtanh_out = {"aten::hardtanh.out", sizeof(unary_state), prepare,
                                                   ptec_unary_run};
