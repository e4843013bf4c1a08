/* aten::embedding.out(Tensor weight, Tensor indices, SymInt padding_idx=-1,
 *     bool scale_grad_by_freq=False, bool sparse=False, *, Tensor(a!) out)
 *
 * out[..., :] = weight[indices[...], :]: a copy of one table row per index
 * (nn.Embedding's lookup; padding_idx, scale_grad_by_freq and sparse only
 * change training). The table is 2-D of any dtype (int8 in quantized
 * graphs, whose rows are already on the output's grid); indices are int64
 * or int32 of any rank, usually a program input. Every index is checked
 * against the table at run time, before anything is written: an id
 * outside [0, rows) fails the call with PTEC_INVALID_ARGUMENT, never reads
 * outside the table. Contiguous tensors, as upstream's portable kernel. */
#include <string.h>

#include "kernels/portable/portable_args.h"

typedef struct embedding_state {
    uint32_t row_bytes; /* bytes of one table row (and of one out row) */
    uint32_t rows;      /* table rows: the valid ids are [0, rows) */
    uint8_t wide;       /* indices are int64 (else int32) */
} embedding_state;

static ptec_status prepare(ptec_op *op)
{
    embedding_state *s = op->state;
    ptec_tensor *weight, *indices, *out;
    int64_t padding_idx;
    bool scale_grad_by_freq, sparse;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, 7)) != PTEC_OK || (st = ptec_op_get_tensor(op, 0, &weight)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, 1, &indices)) != PTEC_OK ||
        (st = ptec_op_get_int(op, 2, &padding_idx)) != PTEC_OK ||
        (st = ptec_op_get_bool(op, 3, &scale_grad_by_freq)) != PTEC_OK ||
        (st = ptec_op_get_bool(op, 4, &sparse)) != PTEC_OK || (st = ptec_op_get_out(op, &out)) != PTEC_OK) {
        return st;
    }
    (void)padding_idx; /* a training detail: the lookup is the same */
    if (scale_grad_by_freq || sparse) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, scale_grad_by_freq ? 3 : 4,
                            PTEC_MSG("scale_grad_by_freq and sparse must be false"));
    }
    if (weight->rank != 2) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 0, PTEC_MSG("weight must be 2-D [rows, dim]"));
    }
    if (indices->dtype != PTEC_DTYPE_LONG && indices->dtype != PTEC_DTYPE_INT) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 1, PTEC_MSG("indices must be int64 or int32"));
    }
    if (out->dtype != weight->dtype) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 5, PTEC_MSG("out must have weight's dtype"));
    }
    if (out->flags & PTEC_TENSOR_CONSTANT) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, 5, PTEC_MSG("out must not be a constant tensor"));
    }
    if (!ptec_tensor_is_contiguous(weight) || !ptec_tensor_is_contiguous(indices) || !ptec_tensor_is_contiguous(out)) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, -1, PTEC_MSG("weight, indices and out must be contiguous"));
    }
    if (indices->rank + 1 > PTEC_MAX_RANK) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, 1, PTEC_MSG("indices of the largest rank leave no room for dim"));
    }
    int32_t want[PTEC_MAX_RANK];
    for (int d = 0; d < (int)indices->rank; ++d) {
        want[d] = indices->sizes[d];
    }
    want[indices->rank] = weight->sizes[1];
    if ((st = ptec_portable_expect_sizes(op, 5, out, want, indices->rank + 1,
                                         PTEC_MSG("out must be indices' sizes + [dim]"))) != PTEC_OK) {
        return st;
    }
    /* weight's nbytes is the loader's checked product, so a row's bytes fit */
    s->row_bytes = (uint32_t)((size_t)weight->sizes[1] * ptec_dtype_size(weight->dtype));
    s->rows = (uint32_t)weight->sizes[0];
    s->wide = indices->dtype == PTEC_DTYPE_LONG;
    return PTEC_OK;
}

static int64_t index_at(const embedding_state *s, const void *ids, uint32_t i)
{
    return s->wide ? ((const int64_t *)ids)[i] : (int64_t)((const int32_t *)ids)[i];
}

static bool in_table(const embedding_state *s, int64_t id)
{
    return id >= 0 && id < (int64_t)s->rows;
}

static ptec_status run(ptec_op *op)
{
    const embedding_state *s = op->state;
    const ptec_tensor *t_w = ptec_op_tensor(op, 0), *t_i = ptec_op_tensor(op, 1), *t_out = ptec_op_tensor(op, 5);
    /* The ids are data (a program input): all checked first, so a bad one
     * leaves out untouched rather than half written. */
    for (uint32_t i = 0; i < t_i->numel; ++i) {
        int64_t id = index_at(s, t_i->data, i);
        if (!in_table(s, id)) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 1, PTEC_MSG("an index is outside the table"));
        }
    }
    const uint8_t *table = t_w->data;
    uint8_t *y = t_out->data;
    for (uint32_t i = 0; i < t_i->numel; ++i) {
        /* read again, and checked again: a program whose out shares memory
         * with the indices (a hostile plan) overwrites ids already checked */
        int64_t id = index_at(s, t_i->data, i);
        if (!in_table(s, id)) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 1, PTEC_MSG("an index is outside the table"));
        }
        memcpy(y + (size_t)i * s->row_bytes, table + (size_t)id * s->row_bytes, s->row_bytes);
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_aten_embedding_out = {"aten::embedding.out", sizeof(embedding_state), prepare, run};
