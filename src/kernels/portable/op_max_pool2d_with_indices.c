/* aten::max_pool2d_with_indices.out(Tensor self, int[2] kernel_size, int[2] stride=[],
 *     int[2] padding=0, int[2] dilation=1, bool ceil_mode=False, *, Tensor(a!) out,
 *     Tensor(b!) indices) -> (Tensor(a!), Tensor(b!))
 *
 * The max-pool out variant PyTorch and ExecuTorch's portable library have
 * (max_pool2d itself has none). Two outputs, so the call ends with a
 * TensorList return slot rather than a repeat of out. float32 or int8 (the
 * max of int8 values is exact, so quantized graphs use it unchanged), any dim
 * order. indices (int64) hold h * W + w of each maximum in its input plane;
 * the first maximum wins and a NaN beats any number, as in PyTorch. */
#include <math.h>
#include <string.h>

#include "kernels/portable/pool2d_geometry.h"
#include "kernels/portable/strides.h"

typedef struct max_pool_state {
    pool2d_params p;
    uint8_t dtype;
} max_pool_state;

static ptec_status prepare(ptec_op *op)
{
    max_pool_state *s = op->state;
    ptec_tensor *self, *out, *indices;
    size_t returns;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, 9)) != PTEC_OK || (st = ptec_op_get_tensor(op, 0, &self)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, 6, &out)) != PTEC_OK || (st = ptec_op_get_tensor(op, 7, &indices)) != PTEC_OK ||
        (st = ptec_op_get_tensor_list(op, 8, &returns)) != PTEC_OK) {
        return st;
    }
    if (returns != 2) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, 8, PTEC_MSG("return slot must list out and indices"));
    }
    if ((out->flags | indices->flags) & PTEC_TENSOR_CONSTANT) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, -1, PTEC_MSG("out and indices must not be constant tensors"));
    }
    if (self->dtype != out->dtype || (self->dtype != PTEC_DTYPE_FLOAT && self->dtype != PTEC_DTYPE_CHAR)) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, -1, PTEC_MSG("self and out must both be float32 or both int8"));
    }
    if (indices->dtype != PTEC_DTYPE_LONG || indices->rank != out->rank) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 7, PTEC_MSG("indices must be int64 with out's sizes"));
    }
    memset(s, 0, sizeof *s);
    s->dtype = self->dtype;
    if ((st = ptec_pool2d_prepare(op, self, out, 6, 1, 4, 5, &s->p)) != PTEC_OK) {
        return st;
    }
    for (int d = 0; d < 4; ++d) {
        if (indices->sizes[d] != out->sizes[d]) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 7, PTEC_MSG("indices must be int64 with out's sizes"));
        }
    }
    return PTEC_OK;
}

static float load(uint8_t dtype, const uint8_t *base, size_t at)
{
    if (dtype == PTEC_DTYPE_CHAR) {
        return (float)(int8_t)base[at];
    }
    float v;
    memcpy(&v, base + at * sizeof v, sizeof v);
    return v;
}

static ptec_status run(ptec_op *op)
{
    const max_pool_state *s = op->state;
    const pool2d_params *p = &s->p;
    const ptec_tensor *t_idx = ptec_op_tensor(op, 7);
    pool2d_tensors t;
    ptec_pool2d_tensors(op, 6, &t);
    const uint8_t *x = t.in->data;
    uint8_t *y = t.out->data;
    int64_t *idx = t_idx->data;
    int32_t si[4];
    ptec_physical_strides(t_idx, si);
    for (int32_t n = 0; n < t.out->sizes[0]; ++n) {
        for (int32_t c = 0; c < t.out->sizes[1]; ++c) {
            for (int32_t oh = 0; oh < t.out->sizes[2]; ++oh) {
                for (int32_t ow = 0; ow < t.out->sizes[3]; ++ow) {
                    int32_t h0 = oh * p->stride[0] - p->padding[0], w0 = ow * p->stride[1] - p->padding[1];
                    int32_t h1 = h0 + (p->kernel[0] - 1) * p->dilation[0] + 1;
                    int32_t w1 = w0 + (p->kernel[1] - 1) * p->dilation[1] + 1;
                    h1 = h1 < t.ih ? h1 : t.ih;
                    w1 = w1 < t.iw ? w1 : t.iw;
                    while (h0 < 0) {
                        h0 += p->dilation[0];
                    }
                    while (w0 < 0) {
                        w0 += p->dilation[1];
                    }
                    float best = -INFINITY;
                    int64_t best_at = (int64_t)h0 * t.iw + w0;
                    for (int32_t h = h0; h < h1; h += p->dilation[0]) {
                        for (int32_t w = w0; w < w1; w += p->dilation[1]) {
                            float v = load(s->dtype, x, ptec_pool2d_at(t.sx, n, c, h, w));
                            if (v > best || isnan(v)) {
                                best = v;
                                best_at = (int64_t)h * t.iw + w;
                            }
                        }
                    }
                    size_t at = ptec_pool2d_at(t.sy, n, c, oh, ow);
                    if (s->dtype == PTEC_DTYPE_CHAR) {
                        /* -inf only for an empty window, which the padding rule rules out. */
                        y[at] = (uint8_t)(int8_t)(best < -128.0f ? -128.0f : best);
                    } else {
                        memcpy(y + at * sizeof best, &best, sizeof best);
                    }
                    idx[ptec_pool2d_at(si, n, c, oh, ow)] = best_at;
                }
            }
        }
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_aten_max_pool2d_with_indices_out = {"aten::max_pool2d_with_indices.out",
                                                                  sizeof(max_pool_state), prepare, run};
