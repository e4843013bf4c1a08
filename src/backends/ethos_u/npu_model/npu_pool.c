/* POOL: MAX, AVERAGE, REDUCE_SUM (spec §5.2). */
#include "npu_internal.h"

int npu_op_pool(ptec_npu_model *m, const npu_op *op)
{
    (void)op;
    return npu_fault_parse(m, "POOL is not modelled yet");
}
