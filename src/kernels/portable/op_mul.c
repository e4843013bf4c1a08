/* aten::mul.out(Tensor self, Tensor other, *, Tensor(a!) out) */
#include "kernels/portable/binary_elementwise.h"

static ptec_status prepare(ptec_op *op)
{
    return ptec_binary_prepare(op, BINARY_MUL, -1);
}

const ptec_kernel ptec_kernel_aten_mul_out = {"aten::mul.out", sizeof(binary_state), prepare, ptec_binary_run};
