/* aten::sub.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) */
#include "kernels/portable/binary_elementwise.h"

static ptec_status prepare(ptec_op *op)
{
    return ptec_binary_prepare(op, BINARY_SUB, 2);
}

const ptec_kernel ptec_kernel_aten_sub_out = {"aten::sub.out", sizeof(binary_state), prepare, ptec_binary_run};
