/* aten::reflection_pad1d.out / reflection_pad2d.out / replication_pad1d.out /
 * replication_pad2d.out(Tensor self, SymInt[2|4] padding, *, Tensor(a!) out)
 *
 * Padding of the last one (1d: [N, C, L]) or two (2d: [N, C, H, W]) dims by
 * reflecting the input about its edge (without repeating the edge) or by
 * repeating the edge value. padding lists the last dim first: [left, right]
 * then [top, bottom]. Any dtype (int8 in quantized graphs: a copy of bytes,
 * so the grid is the input's) and any dim order. As in PyTorch, every pad is
 * non-negative, a reflection pad is smaller than the padded dim, and a
 * replication pad needs a non-empty dim. */
#include <string.h>

#include "kernels/portable/portable_args.h"
#include "kernels/portable/strides.h"

typedef struct edge_pad_state {
    int32_t before[2]; /* pads before the padded dims, outermost first */
    uint32_t elem;
    uint8_t padded;    /* 1 or 2 */
    uint8_t reflect;
} edge_pad_state;

enum { ARG_SELF, ARG_PADDING, ARG_OUT, ARG_RETURN, ARG_COUNT };

/* The input index that output index i (in [-before, size + after)) reads. */
static int32_t source_index(int32_t i, int32_t size, int reflect)
{
    if (i < 0) {
        return reflect ? -i : 0;
    }
    if (i >= size) {
        return reflect ? 2 * (size - 1) - i : size - 1;
    }
    return i;
}

static ptec_status prepare_padded(ptec_op *op, uint8_t padded, uint8_t reflect)
{
    edge_pad_state *s = op->state;
    ptec_tensor *in, *out;
    int32_t pads[4];
    size_t n_pads = 0;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, ARG_COUNT)) != PTEC_OK || (st = ptec_op_get_tensor(op, ARG_SELF, &in)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, ARG_OUT, &out)) != PTEC_OK ||
        (st = ptec_op_get_int32_list(op, ARG_PADDING, pads, 4, &n_pads, false)) != PTEC_OK) {
        return st;
    }
    const uint8_t rank = (uint8_t)(padded + 2u);
    if (n_pads != 2u * padded) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_PADDING,
                            padded == 1 ? PTEC_MSG("padding must be [left, right]")
                                        : PTEC_MSG("padding must be [left, right, top, bottom]"));
    }
    if (in->rank != rank || out->rank != rank || in->dtype != out->dtype || in->sizes[0] != out->sizes[0] ||
        in->sizes[1] != out->sizes[1]) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_OUT,
                            padded == 1 ? PTEC_MSG("self and out must be 3-D [N, C, L] of one dtype, N and C equal")
                                        : PTEC_MSG("self and out must be 4-D [N, C, H, W] of one dtype, N and C equal"));
    }
    if (out->flags & PTEC_TENSOR_CONSTANT) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, ARG_OUT, PTEC_MSG("out is a constant tensor"));
    }
    memset(s, 0, sizeof *s);
    for (uint8_t k = 0; k < padded; ++k) {
        /* Dim 2 + k is padded by pads[2 * (padded - 1 - k)] before and the next after. */
        const int32_t before = pads[2 * (padded - 1 - k)];
        const int32_t after = pads[2 * (padded - 1 - k) + 1];
        const int32_t size = in->sizes[2 + k];
        if (before < 0 || after < 0) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_PADDING, PTEC_MSG("padding must not be negative"));
        }
        if (size < 1 || (reflect && (before >= size || after >= size))) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_PADDING,
                                reflect ? PTEC_MSG("a reflection pad must be smaller than the padded dim")
                                        : PTEC_MSG("a replication pad needs a non-empty dim"));
        }
        if ((int64_t)size + before + after != out->sizes[2 + k]) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_OUT, PTEC_MSG("out's size is not the padded size"));
        }
        s->before[k] = before;
    }
    s->elem = (uint32_t)ptec_dtype_size(in->dtype);
    s->padded = padded;
    s->reflect = reflect;
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const edge_pad_state *s = op->state;
    const ptec_tensor *in = ptec_op_tensor(op, ARG_SELF), *out = ptec_op_tensor(op, ARG_OUT);
    int32_t si[PTEC_MAX_RANK], so[PTEC_MAX_RANK];
    ptec_physical_strides(in, si);
    ptec_physical_strides(out, so);
    const uint8_t *x = in->data;
    uint8_t *y = out->data;
    /* A 1d pad is a 2d pad of a height-1 image: one loop nest for both. */
    const int two = s->padded == 2;
    const int32_t in_h = two ? in->sizes[2] : 1, out_h = two ? out->sizes[2] : 1;
    const int32_t in_w = in->sizes[2 + two], out_w = out->sizes[2 + two];
    const int32_t before_h = two ? s->before[0] : 0, before_w = s->before[two];
    const size_t sih = two ? (size_t)si[2] : 0u, soh = two ? (size_t)so[2] : 0u;
    const size_t siw = (size_t)si[2 + two], sow = (size_t)so[2 + two];
    for (int32_t n = 0; n < out->sizes[0]; ++n) {
        for (int32_t c = 0; c < out->sizes[1]; ++c) {
            const size_t base_in = (size_t)n * (size_t)si[0] + (size_t)c * (size_t)si[1];
            const size_t base_out = (size_t)n * (size_t)so[0] + (size_t)c * (size_t)so[1];
            for (int32_t oh = 0; oh < out_h; ++oh) {
                const int32_t ih = source_index(oh - before_h, in_h, s->reflect);
                for (int32_t ow = 0; ow < out_w; ++ow) {
                    const int32_t iw = source_index(ow - before_w, in_w, s->reflect);
                    const size_t from = base_in + (size_t)ih * sih + (size_t)iw * siw;
                    const size_t to = base_out + (size_t)oh * soh + (size_t)ow * sow;
                    memcpy(y + to * s->elem, x + from * s->elem, s->elem);
                }
            }
        }
    }
    return PTEC_OK;
}

static ptec_status prepare_reflect1d(ptec_op *op)
{
    return prepare_padded(op, 1, 1);
}

static ptec_status prepare_reflect2d(ptec_op *op)
{
    return prepare_padded(op, 2, 1);
}

static ptec_status prepare_replicate1d(ptec_op *op)
{
    return prepare_padded(op, 1, 0);
}

static ptec_status prepare_replicate2d(ptec_op *op)
{
    return prepare_padded(op, 2, 0);
}

const ptec_kernel ptec_kernel_aten_reflection_pad1d_out = {"aten::reflection_pad1d.out", sizeof(edge_pad_state),
                                                           prepare_reflect1d, run};
const ptec_kernel ptec_kernel_aten_reflection_pad2d_out = {"aten::reflection_pad2d.out", sizeof(edge_pad_state),
                                                           prepare_reflect2d, run};
const ptec_kernel ptec_kernel_aten_replication_pad1d_out = {"aten::replication_pad1d.out", sizeof(edge_pad_state),
                                                            prepare_replicate1d, run};
const ptec_kernel ptec_kernel_aten_replication_pad2d_out = {"aten::replication_pad2d.out", sizeof(edge_pad_state),
                                                            prepare_replicate2d, run};
