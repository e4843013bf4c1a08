/* aten::div.out(Tensor self, Tensor other, *, Tensor(a!) out): true division, float tensors only. */
#include "kernels/portable/binary_elementwise.h"

static ptec_status prepare(ptec_op *op)
{
    return ptec_binary_prepare(op, BINARY_DIV, -1);
}

const ptec_kernel ptec_kernel_aten_div_out = {"aten::div.out", sizeof(binary_state), prepare, ptec_binary_run};
