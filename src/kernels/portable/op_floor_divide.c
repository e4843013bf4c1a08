/* aten::floor_divide.out(Tensor self, Tensor other, *, Tensor(a!) out)
 *
 * PyTorch's `a // b` of int32 / int64 tensors (int_binary.c): the quotient
 * rounded toward minus infinity, broadcast. Division by zero and the least
 * value by -1 fail the execute (InvalidArgument). */
#include "kernels/portable/int_binary.h"

static ptec_status run(ptec_op *op)
{
    return ptec_int_binary_run(op, INT_FLOOR_DIVIDE);
}

const ptec_kernel ptec_kernel_aten_floor_divide_out = {"aten::floor_divide.out", sizeof(int_binary_state),
                                                       ptec_int_binary_prepare, run};
