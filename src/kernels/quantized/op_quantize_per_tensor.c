/* quantized_decomposed::quantize_per_tensor.out(Tensor input, float scale,
 *     int zero_point, int quant_min, int quant_max, ScalarType dtype, *, Tensor(a!) out)
 * q = clamp(zp + nearbyint(float(1/scale) * x), qmin, qmax), in float32. */
#include <math.h>

#include "kernels/quantized/quant_params.h"

static ptec_status prepare(ptec_op *op)
{
    quant_state *s = op->state;
    ptec_tensor *in, *out;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, 8)) != PTEC_OK || (st = ptec_op_get_tensor(op, 0, &in)) != PTEC_OK ||
        (st = ptec_op_get_out(op, &out)) != PTEC_OK || (st = ptec_quant_params_read(op, out, s)) != PTEC_OK) {
        return st;
    }
    if (in->dtype != PTEC_DTYPE_FLOAT) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, 0, "input must be float32");
    }
    if (in->numel != out->numel) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, -1, "out must have as many elements as input");
    }
    s->scale = 1.0f / s->scale;
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const quant_state *s = op->state;
    const float *in = ptec_op_tensor(op, 0)->data;
    void *out = ptec_op_tensor(op, op->argc - 2u)->data;
    /* Clamp in float first: a huge, infinite or NaN input must not reach an
     * out-of-range float-to-integer conversion. */
    const float lo = (float)(s->qmin - s->zero_point), hi = (float)(s->qmax - s->zero_point);
    for (uint32_t i = 0; i < s->numel; ++i) {
        float r = nearbyintf(s->scale * in[i]);
        r = r > lo ? r : lo; /* NaN falls to the low bound */
        r = r < hi ? r : hi;
        int64_t q = (int64_t)s->zero_point + (int64_t)r;
        q = q < s->qmin ? s->qmin : (q > s->qmax ? s->qmax : q);
        ptec_quant_store(s->qdtype, out, i, q);
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_qd_quantize_per_tensor_out = {"quantized_decomposed::quantize_per_tensor.out",
                                                            sizeof(quant_state), prepare, run};
