/* quantized_decomposed::dequantize_per_tensor.out(Tensor input, float scale,
 *     int zero_point, int quant_min, int quant_max, ScalarType dtype, *,
 *     ScalarType? out_dtype=None, Tensor(a!) out)
 * x = float(q - zp) * float(scale). */
#include "kernels/quantized/quant_params.h"

static ptec_status prepare(ptec_op *op)
{
    quant_state *s = op->state;
    ptec_tensor *in, *out;
    ptec_status st;
    int64_t out_dtype = PTEC_DTYPE_FLOAT;
    if ((st = ptec_op_expect_argc(op, 9)) != PTEC_OK || (st = ptec_op_get_tensor(op, 0, &in)) != PTEC_OK ||
        (st = ptec_op_get_out(op, &out)) != PTEC_OK || (st = ptec_quant_params_read(op, in, s)) != PTEC_OK) {
        return st;
    }
    if (!ptec_op_arg_is_null(op, 6) && (st = ptec_op_get_int(op, 6, &out_dtype)) != PTEC_OK) {
        return st;
    }
    if (out->dtype != PTEC_DTYPE_FLOAT || out_dtype != PTEC_DTYPE_FLOAT) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, 7, "out must be float32");
    }
    if (in->numel != out->numel) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, -1, "out must have as many elements as input");
    }
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const quant_state *s = op->state;
    const void *in = ptec_op_tensor(op, 0)->data;
    float *out = ptec_op_tensor(op, op->argc - 2u)->data;
    for (uint32_t i = 0; i < s->numel; ++i) {
        out[i] = (float)(ptec_quant_load(s->qdtype, in, i) - s->zero_point) * s->scale;
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_qd_dequantize_per_tensor_out = {"quantized_decomposed::dequantize_per_tensor.out",
                                                              sizeof(quant_state), prepare, run};
