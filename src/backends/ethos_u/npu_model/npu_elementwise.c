/* ELEMENTWISE (spec §5.2). */
#include "npu_internal.h"

int npu_op_elementwise(ptec_npu_model *m, const npu_op *op)
{
    (void)op;
    return npu_fault_parse(m, "ELEMENTWISE is not modelled yet");
}
