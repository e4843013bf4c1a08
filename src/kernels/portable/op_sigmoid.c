/* aten::sigmoid.out(Tensor self, *, Tensor(a!) out): 1 / (1 + expf(-x)) in float32. */
#include "kernels/portable/unary_elementwise.h"

static ptec_status prepare(ptec_op *op)
{
    return ptec_unary_prepare(op, UNARY_SIGMOID, 3);
}

const ptec_kernel ptec_kernel_aten_sigmoid_out = {"aten::sigmoid.out", sizeof(unary_state), prepare,
                                                  ptec_unary_run};
