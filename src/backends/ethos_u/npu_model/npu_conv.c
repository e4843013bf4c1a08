/* STUB: CONV and DEPTHWISE. This file belongs to helper npu-weights, who
 * replaces it wholesale with the real npu_conv.c (plus mlw_decode.c and
 * npu_weights.c). Until then both operations stop the stream with a clean
 * "not modelled" parse fault. Contract: npu_internal.h (npu_op_conv,
 * npu_conv_work_bytes; fmap accessors, npu_output_scale, npu_round_scale,
 * npu_output_store, npu_work, npu_spend). */
#include "npu_internal.h"

int npu_op_conv(ptec_npu_model *m, const npu_op *op)
{
    (void)op;
    return npu_fault_parse(m, "CONV/DEPTHWISE are not modelled in this build");
}

size_t npu_conv_work_bytes(const ptec_npu_model *m, const npu_op *op)
{
    (void)m;
    (void)op;
    return 0;
}
