/* aten::_native_batch_norm_legit_no_training.out(Tensor input, Tensor? weight, Tensor? bias,
 *     Tensor running_mean, Tensor running_var, float momentum, float eps, *,
 *     Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2) -> (Tensor(a!), Tensor(b!), Tensor(c!))
 *
 * Inference batch-norm over dim 1, float32, any dim order:
 * out0 = (x - mean[c]) * (1 / sqrtf(var[c] + eps)) * weight[c] + bias[c].
 * out1 and out2 (the saved statistics of training) are not written, as
 * upstream leaves them empty. */
#include <math.h>
#include <string.h>

#include "kernels/portable/portable_args.h"
#include "kernels/portable/strides.h"

typedef struct batch_norm_state {
    float eps;
    uint8_t has_weight, has_bias;
} batch_norm_state;

static ptec_status check_channel_vector(ptec_op *op, int arg, const ptec_tensor *t, int32_t channels)
{
    if (t == NULL) {
        return PTEC_OK;
    }
    ptec_status st = ptec_portable_expect_float(op, arg, t);
    if (st == PTEC_OK && (t->rank != 1 || t->sizes[0] != channels)) {
        st = ptec_op_fail(op, PTEC_INVALID_ARGUMENT, arg, PTEC_MSG("per-channel tensor must be [C]"));
    }
    return st;
}

static ptec_status prepare(ptec_op *op)
{
    batch_norm_state *s = op->state;
    ptec_tensor *in, *weight, *bias, *mean, *var, *out0, *out1, *out2;
    double momentum, eps;
    size_t returns;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, 11)) != PTEC_OK || (st = ptec_op_get_tensor(op, 0, &in)) != PTEC_OK ||
        (st = ptec_op_get_optional_tensor(op, 1, &weight)) != PTEC_OK ||
        (st = ptec_op_get_optional_tensor(op, 2, &bias)) != PTEC_OK || (st = ptec_op_get_tensor(op, 3, &mean)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, 4, &var)) != PTEC_OK || (st = ptec_op_get_double(op, 5, &momentum)) != PTEC_OK ||
        (st = ptec_op_get_double(op, 6, &eps)) != PTEC_OK || (st = ptec_op_get_tensor(op, 7, &out0)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, 8, &out1)) != PTEC_OK || (st = ptec_op_get_tensor(op, 9, &out2)) != PTEC_OK ||
        (st = ptec_op_get_tensor_list(op, 10, &returns)) != PTEC_OK) {
        return st;
    }
    (void)momentum; /* only training updates the running statistics */
    if (returns != 3) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, 10, PTEC_MSG("return slot must list out0, out1 and out2"));
    }
    if (out0->flags & PTEC_TENSOR_CONSTANT) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, 7, PTEC_MSG("out0 is a constant tensor"));
    }
    if ((st = ptec_portable_expect_float(op, 0, in)) != PTEC_OK) {
        return st;
    }
    if (in->rank < 2) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 0, PTEC_MSG("input must be at least 2-D [N, C, ...]"));
    }
    if (in->dtype != out0->dtype || !ptec_tensor_same_shape(in, out0)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 7, PTEC_MSG("out0 must have the dtype and sizes of input"));
    }
    int32_t c = in->sizes[1];
    if ((st = check_channel_vector(op, 1, weight, c)) != PTEC_OK || (st = check_channel_vector(op, 2, bias, c)) != PTEC_OK ||
        (st = check_channel_vector(op, 3, mean, c)) != PTEC_OK || (st = check_channel_vector(op, 4, var, c)) != PTEC_OK) {
        return st;
    }
    if (!(eps >= 0.0) || eps > 3.0e38) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 6, PTEC_MSG("eps must be a finite non-negative float32"));
    }
    memset(s, 0, sizeof *s);
    s->eps = (float)eps;
    s->has_weight = weight != NULL;
    s->has_bias = bias != NULL;
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const batch_norm_state *s = op->state;
    const ptec_tensor *t_in = ptec_op_tensor(op, 0), *t_out = ptec_op_tensor(op, 7);
    const float *x = t_in->data;
    const float *w = s->has_weight ? (const float *)ptec_op_tensor(op, 1)->data : NULL;
    const float *b = s->has_bias ? (const float *)ptec_op_tensor(op, 2)->data : NULL;
    const float *mean = ptec_op_tensor(op, 3)->data, *var = ptec_op_tensor(op, 4)->data;
    float *y = t_out->data;
    int32_t sx[PTEC_MAX_RANK], sy[PTEC_MAX_RANK], index[PTEC_MAX_RANK] = {0};
    ptec_physical_strides(t_in, sx);
    ptec_physical_strides(t_out, sy);
    size_t off_x = 0, off_y = 0;
    for (uint32_t i = 0; i < t_out->numel; ++i) {
        int32_t c = index[1];
        float inv_std = 1.0f / sqrtf(var[c] + s->eps);
        float v = (x[off_x] - mean[c]) * inv_std;
        v = v * (w != NULL ? w[c] : 1.0f);
        y[off_y] = v + (b != NULL ? b[c] : 0.0f);
        ptec_walk_step(t_out->rank, t_out->sizes, index, sx, &off_x, sy, &off_y);
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_aten_native_batch_norm_no_training_out = {
    "aten::_native_batch_norm_legit_no_training.out", sizeof(batch_norm_state), prepare, run};
