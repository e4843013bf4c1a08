/* aten::tanh.out(Tensor self, *, Tensor(a!) out): tanhf in float32. */
#include "kernels/portable/unary_elementwise.h"

static ptec_status prepare(ptec_op *op)
{
    return ptec_unary_prepare(op, UNARY_TANH, 3);
}

const ptec_kernel ptec_kernel_aten_tanh_out = {"aten::tanh.out", sizeof(unary_state), prepare, ptec_unary_run};
