/* aten::relu.out(Tensor self, *, Tensor(a!) out) */
#include "kernels/portable/unary_elementwise.h"

static ptec_status prepare(ptec_op *op)
{
    static const double zero = 0.0;
    ptec_status st = ptec_unary_prepare(op, UNARY_CLAMP, 3);
    return st != PTEC_OK ? st : ptec_unary_set_bounds(op, -1, &zero, -1, NULL);
}

const ptec_kernel ptec_kernel_aten_relu_out = {"aten::relu.out", sizeof(unary_state), prepare, ptec_unary_run};
