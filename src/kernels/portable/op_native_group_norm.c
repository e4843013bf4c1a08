/* aten::native_group_norm.out(Tensor input, Tensor? weight, Tensor? bias,
 *     SymInt N, SymInt C, SymInt HxW, int group, float eps, *,
 *     Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2)
 *
 * Group normalisation of a contiguous float32 [N, C, *] input: the C
 * channels form `group` groups of C / group channels, and each (n, group)
 * block of M = C / group * HxW values is normalised on its own: its mean
 * and rstd as normalization.h computes them (the layer norm's order, which
 * the numpy reference ptec.reference.portable.group_norm repeats), then
 *   out0 = (x - mean) * rstd * weight[c] + bias[c], c the value's channel.
 * nn.InstanceNorm is the case group = C. out1 and out2 receive each
 * block's mean and rstd ([N, group]) when they hold N * group values. */
#include <math.h>
#include <string.h>

#include "kernels/portable/normalization.h"
#include "kernels/portable/portable_args.h"

typedef struct group_norm_state {
    float eps;
    uint32_t n, channels, hxw, groups;
    uint8_t has_weight, has_bias, write_stats;
} group_norm_state;

enum { ARG_IN, ARG_WEIGHT, ARG_BIAS, ARG_N, ARG_C, ARG_HXW, ARG_GROUP, ARG_EPS, ARG_OUT0, ARG_OUT1, ARG_OUT2,
       ARG_RETURNS, ARG_COUNT };

static ptec_status check_affine(ptec_op *op, int arg, const ptec_tensor *t, int64_t channels)
{
    if (t == NULL) {
        return PTEC_OK;
    }
    ptec_status st = ptec_portable_expect_float(op, arg, t);
    if (st == PTEC_OK && (t->rank != 1 || t->sizes[0] != channels)) {
        st = ptec_op_fail(op, PTEC_INVALID_ARGUMENT, arg, PTEC_MSG("weight and bias must hold one value per channel"));
    }
    return st;
}

static ptec_status prepare(ptec_op *op)
{
    group_norm_state *s = op->state;
    ptec_tensor *in, *weight, *bias, *out0, *out1, *out2;
    int64_t n, c, hxw, group;
    size_t returns;
    double eps;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, ARG_COUNT)) != PTEC_OK || (st = ptec_op_get_tensor(op, ARG_IN, &in)) != PTEC_OK ||
        (st = ptec_op_get_optional_tensor(op, ARG_WEIGHT, &weight)) != PTEC_OK ||
        (st = ptec_op_get_optional_tensor(op, ARG_BIAS, &bias)) != PTEC_OK ||
        (st = ptec_op_get_int(op, ARG_N, &n)) != PTEC_OK || (st = ptec_op_get_int(op, ARG_C, &c)) != PTEC_OK ||
        (st = ptec_op_get_int(op, ARG_HXW, &hxw)) != PTEC_OK || (st = ptec_op_get_int(op, ARG_GROUP, &group)) != PTEC_OK ||
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
    if (in->rank < 2 || !ptec_tensor_same_shape(in, out0) || !ptec_tensor_is_contiguous(in) ||
        !ptec_tensor_is_contiguous(out0)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_OUT0,
                            PTEC_MSG("input and out0 must be contiguous [N, C, *] with the same sizes"));
    }
    /* N, C and HxW must describe the input. N and C are its first two sizes
     * (so each is below 2^31 and their product fits 64 bits); HxW is
     * compared with what the sizes leave, without multiplying by it. */
    if (n != in->sizes[0] || c != in->sizes[1] || n <= 0 || c <= 0 || hxw <= 0 ||
        (uint64_t)in->numel % ((uint64_t)n * (uint64_t)c) != 0u ||
        (uint64_t)hxw != (uint64_t)in->numel / ((uint64_t)n * (uint64_t)c)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_HXW, PTEC_MSG("N, C and HxW must be the input's"));
    }
    if (group <= 0 || group > c || c % group != 0) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_GROUP, PTEC_MSG("group must divide C"));
    }
    if ((st = check_affine(op, ARG_WEIGHT, weight, c)) != PTEC_OK || (st = check_affine(op, ARG_BIAS, bias, c)) != PTEC_OK) {
        return st;
    }
    if (!(eps >= 0.0) || eps > 3.0e38) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_EPS, PTEC_MSG("eps must be a finite non-negative float32"));
    }
    const uint64_t blocks = (uint64_t)n * (uint64_t)group;
    const bool stats = ptec_norm_writes_stats(out1, out2, blocks);
    if (!stats && (out1->numel != 0 || out2->numel != 0)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_OUT1, PTEC_MSG("out1 and out2 must be empty or hold N * group floats"));
    }
    memset(s, 0, sizeof *s);
    s->eps = (float)eps;
    s->n = (uint32_t)n;
    s->channels = (uint32_t)c;
    s->hxw = (uint32_t)hxw;
    s->groups = (uint32_t)group;
    s->has_weight = weight != NULL;
    s->has_bias = bias != NULL;
    s->write_stats = stats;
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const group_norm_state *s = op->state;
    const float *x = ptec_op_tensor(op, ARG_IN)->data;
    const float *w = s->has_weight ? (const float *)ptec_op_tensor(op, ARG_WEIGHT)->data : NULL;
    const float *b = s->has_bias ? (const float *)ptec_op_tensor(op, ARG_BIAS)->data : NULL;
    float *y = ptec_op_tensor(op, ARG_OUT0)->data;
    float *mean_out = s->write_stats ? ptec_op_tensor(op, ARG_OUT1)->data : NULL;
    float *rstd_out = s->write_stats ? ptec_op_tensor(op, ARG_OUT2)->data : NULL;
    const uint32_t per_group = s->channels / s->groups;
    const uint32_t block = per_group * s->hxw; /* <= numel, which fits the sizes */
    for (uint32_t k = 0; k < s->n * s->groups; ++k, x += block, y += block) {
        const ptec_norm_stats st = ptec_norm_block_stats(x, block, s->eps);
        const float mean = st.mean, rstd = st.rstd;
        const uint32_t c0 = (k % s->groups) * per_group;
        for (uint32_t i = 0; i < block; ++i) {
            const uint32_t c = c0 + i / s->hxw;
            float v = (x[i] - mean) * rstd;
            v = v * (w != NULL ? w[c] : 1.0f);
            y[i] = v + (b != NULL ? b[c] : 0.0f);
        }
        if (mean_out != NULL) {
            mean_out[k] = mean;
            rstd_out[k] = rstd;
        }
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_aten_native_group_norm_out = {"aten::native_group_norm.out", sizeof(group_norm_state),
                                                             prepare, run};
