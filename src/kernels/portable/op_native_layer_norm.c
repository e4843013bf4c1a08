/* aten::native_layer_norm.out(Tensor input, SymInt[] normalized_shape,
 *     Tensor? weight, Tensor? bias, float eps, *, Tensor(a!) out0,
 *     Tensor(b!) out1, Tensor(c!) out2) -> (Tensor(a!), Tensor(b!), Tensor(c!))
 *
 * Layer normalisation over the last K dims (K = len(normalized_shape), M
 * their element count), float32, contiguous tensors. Per row of M values,
 * the mean and rstd as normalization.h computes them (in the order the numpy
 * reference ptec.reference.portable.layer_norm repeats), then
 *   out0[i] = (x[i] - mean) * rstd * weight[i] + bias[i].
 * out1 and out2 receive each row's mean and rstd when they hold one value
 * per row; empty ones (what ptec's AOT writes) are left alone. */
#include <math.h>
#include <string.h>

#include "kernels/portable/normalization.h"
#include "kernels/portable/portable_args.h"

typedef struct layer_norm_state {
    float eps;
    uint32_t row;  /* M: elements normalised together */
    uint32_t rows;
    uint8_t has_weight, has_bias, write_stats;
} layer_norm_state;

enum { ARG_IN, ARG_SHAPE, ARG_WEIGHT, ARG_BIAS, ARG_EPS, ARG_OUT0, ARG_OUT1, ARG_OUT2, ARG_RETURNS, ARG_COUNT };

static ptec_status check_affine(ptec_op *op, int arg, const ptec_tensor *t, const ptec_tensor *in, int k)
{
    if (t == NULL) {
        return PTEC_OK;
    }
    ptec_status st = ptec_portable_expect_float(op, arg, t);
    if (st == PTEC_OK && (t->rank != k || !ptec_tensor_is_contiguous(t) ||
                          memcmp(t->sizes, in->sizes + (in->rank - k), (size_t)k * sizeof(int32_t)) != 0)) {
        st = ptec_op_fail(op, PTEC_INVALID_ARGUMENT, arg, PTEC_MSG("weight and bias must have normalized_shape"));
    }
    return st;
}

static ptec_status prepare(ptec_op *op)
{
    layer_norm_state *s = op->state;
    ptec_tensor *in, *weight, *bias, *out0, *out1, *out2;
    int64_t shape[PTEC_MAX_RANK];
    size_t k, returns;
    double eps;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, ARG_COUNT)) != PTEC_OK || (st = ptec_op_get_tensor(op, ARG_IN, &in)) != PTEC_OK ||
        (st = ptec_op_get_int_list(op, ARG_SHAPE, shape, PTEC_MAX_RANK, &k, false)) != PTEC_OK ||
        (st = ptec_op_get_optional_tensor(op, ARG_WEIGHT, &weight)) != PTEC_OK ||
        (st = ptec_op_get_optional_tensor(op, ARG_BIAS, &bias)) != PTEC_OK ||
        (st = ptec_op_get_double(op, ARG_EPS, &eps)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, ARG_OUT0, &out0)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, ARG_OUT1, &out1)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, ARG_OUT2, &out2)) != PTEC_OK ||
        (st = ptec_op_get_tensor_list(op, ARG_RETURNS, &returns)) != PTEC_OK) {
        return st;
    }
    if (returns != 3) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, ARG_RETURNS, PTEC_MSG("return slot must list out0, out1 and out2"));
    }
    if (out0->flags & PTEC_TENSOR_CONSTANT) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, ARG_OUT0, PTEC_MSG("out0 is a constant tensor"));
    }
    if ((st = ptec_portable_expect_float(op, ARG_IN, in)) != PTEC_OK ||
        (st = ptec_portable_expect_float(op, ARG_OUT0, out0)) != PTEC_OK) {
        return st;
    }
    if (k == 0 || k > in->rank) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_SHAPE,
                            PTEC_MSG("normalized_shape must name 1 to rank of the input's last dims"));
    }
    uint64_t row = 1;
    for (size_t d = 0; d < k; ++d) {
        if (shape[d] != in->sizes[in->rank - k + d]) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_SHAPE,
                                PTEC_MSG("normalized_shape must equal the input's last dims"));
        }
        row *= (uint64_t)shape[d];
    }
    if (!ptec_tensor_same_shape(in, out0) || !ptec_tensor_is_contiguous(in) || !ptec_tensor_is_contiguous(out0)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_OUT0,
                            PTEC_MSG("input and out0 must be contiguous with the same sizes"));
    }
    if ((st = check_affine(op, ARG_WEIGHT, weight, in, (int)k)) != PTEC_OK ||
        (st = check_affine(op, ARG_BIAS, bias, in, (int)k)) != PTEC_OK) {
        return st;
    }
    if (!(eps >= 0.0) || eps > 3.0e38) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_EPS, PTEC_MSG("eps must be a finite non-negative float32"));
    }
    if (row == 0 || row > UINT32_MAX) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_SHAPE, PTEC_MSG("normalized rows must hold 1 to 2^32-1 values"));
    }
    const uint64_t rows = in->numel / row;
    /* The statistics outputs are written only when each holds one float per row. */
    const bool stats = ptec_norm_writes_stats(out1, out2, rows);
    if (!stats && (out1->numel != 0 || out2->numel != 0)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_OUT1,
                            PTEC_MSG("out1 and out2 must be empty or hold one float per normalised row"));
    }
    memset(s, 0, sizeof *s);
    s->eps = (float)eps;
    s->row = (uint32_t)row;
    s->rows = (uint32_t)rows;
    s->has_weight = weight != NULL;
    s->has_bias = bias != NULL;
    s->write_stats = stats;
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const layer_norm_state *s = op->state;
    const float *x = ptec_op_tensor(op, ARG_IN)->data;
    const float *w = s->has_weight ? (const float *)ptec_op_tensor(op, ARG_WEIGHT)->data : NULL;
    const float *b = s->has_bias ? (const float *)ptec_op_tensor(op, ARG_BIAS)->data : NULL;
    float *y = ptec_op_tensor(op, ARG_OUT0)->data;
    float *mean_out = s->write_stats ? ptec_op_tensor(op, ARG_OUT1)->data : NULL;
    float *rstd_out = s->write_stats ? ptec_op_tensor(op, ARG_OUT2)->data : NULL;
    for (uint32_t r = 0; r < s->rows; ++r, x += s->row, y += s->row) {
        const ptec_norm_stats st = ptec_norm_block_stats(x, s->row, s->eps);
        const float mean = st.mean, rstd = st.rstd;
        for (uint32_t i = 0; i < s->row; ++i) {
            float v = (x[i] - mean) * rstd;
            v = v * (w != NULL ? w[i] : 1.0f);
            y[i] = v + (b != NULL ? b[i] : 0.0f);
        }
        if (mean_out != NULL) {
            mean_out[r] = mean;
            rstd_out[r] = rstd;
        }
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_aten_native_layer_norm_out = {"aten::native_layer_norm.out", sizeof(layer_norm_state),
                                                             prepare, run};
