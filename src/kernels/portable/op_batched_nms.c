/* ptec::batched_nms.out(Tensor boxes, Tensor scores, Tensor order, Tensor idxs, float iou_threshold, *,
 *     Tensor(a!) out)
 * ptec::batched_nms.Tensor_out(Tensor boxes, Tensor scores, Tensor order, Tensor idxs, Tensor iou_threshold, *,
 *     Tensor(a!) out)
 *
 * torchvision 0.14's CPU batched_nms past 1,000 boxes (_batched_nms_vanilla):
 * nms run on each class's boxes alone, the kept boxes marked, then their
 * indices (ascending) reordered by torch.sort(scores[kept], descending=True),
 * torch's unstable CPU sort, libstdc++'s std::sort on (value, index) pairs
 * compared by value alone (ptec_std_sort, std_sort.c):
 *
 *   boxes   float32 [K, 4] (x1, y1, x2, y2), row-major;
 *   scores  float32 [K];
 *   order   int64 [K]: the stable descending sort of the scores (each in
 *           [0, K), checked at run: it is data);
 *   idxs    int64, int32 or float32 [K]: each box's class;
 *   out     int64 [K]: torchvision's kept indices in its order, then -1
 *           for each box not kept (the program selects out >= 0).
 *
 * A class's own nms sorts its scores stably, so its order is the program's
 * order restricted to the class: one walk over that order where a kept box
 * suppresses only later boxes of its class is every class's nms (the same
 * overlap steps as op_nms.c: areas precomputed, std::min / max picks, iou
 * in float32, iou > t compared in double). A box whose class is NaN (float
 * idxs) equals no class torchvision loops over, so is never kept.
 *
 * Scratch: K float32 areas, then K uint32 kept box indices (the array the
 * sort reorders; the comparison reads the scores, so it reorders them as
 * torch reorders its pairs). out holds each box's "not suppressed" flag
 * during the walk. O(K^2) time for the walk, O(m log m) for the sort.
 *
 * Tensor_out: the threshold the program computed, a float32 tensor of one
 * element read at each run and compared as op_nms.c's Tensor_out does. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "kernels/portable/nms_overlap.h"
#include "kernels/portable/std_sort.h"
#include "ptec/kernel.h"

enum { ARG_BOXES, ARG_SCORES, ARG_ORDER, ARG_IDXS, ARG_THRESHOLD, ARG_OUT, ARG_COUNT };

typedef struct batched_nms_state {
    double threshold;
    int32_t k;
    bool threshold_tensor; /* Tensor_out: read the threshold from its tensor at run */
} batched_nms_state;

static ptec_status prepare_common(ptec_op *op, bool threshold_tensor)
{
    batched_nms_state *s = op->state;
    ptec_tensor *boxes, *scores, *order, *idxs, *out;
    ptec_tensor *threshold_t = NULL;
    double threshold = 0.0;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, ARG_COUNT + 1u)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, ARG_BOXES, &boxes)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, ARG_SCORES, &scores)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, ARG_ORDER, &order)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, ARG_IDXS, &idxs)) != PTEC_OK ||
        (st = threshold_tensor ? ptec_op_get_tensor(op, ARG_THRESHOLD, &threshold_t)
                               : ptec_op_get_double(op, ARG_THRESHOLD, &threshold)) != PTEC_OK ||
        (st = ptec_op_get_out(op, &out)) != PTEC_OK) {
        return st;
    }
    if (threshold_t != NULL && !ptec_nms_threshold_tensor_ok(threshold_t)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_THRESHOLD,
                            PTEC_MSG("iou_threshold must be float32 of one element, static sizes"));
    }
    if (boxes->dtype != PTEC_DTYPE_FLOAT || boxes->rank != 2u || boxes->sizes[1] != 4 ||
        (boxes->flags & PTEC_TENSOR_DYNAMIC) || !ptec_nms_row_major(boxes)) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_BOXES,
                            PTEC_MSG("boxes must be float32 [K, 4], row-major, static sizes"));
    }
    int32_t k = boxes->sizes[0];
    /* K float32 areas and K uint32 box indices of scratch must fit in uint32 bytes */
    if (k < 0 || (uint32_t)k > UINT32_MAX / (2u * (uint32_t)sizeof(float))) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_BOXES, PTEC_MSG("too many boxes"));
    }
    if (scores->dtype != PTEC_DTYPE_FLOAT || !ptec_nms_static_vector(scores, k)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_SCORES, PTEC_MSG("scores must be float32 [K], static sizes"));
    }
    if (order->dtype != PTEC_DTYPE_LONG || !ptec_nms_static_vector(order, k)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_ORDER, PTEC_MSG("order must be int64 [K], static sizes"));
    }
    if ((idxs->dtype != PTEC_DTYPE_LONG && idxs->dtype != PTEC_DTYPE_INT && idxs->dtype != PTEC_DTYPE_FLOAT) ||
        !ptec_nms_static_vector(idxs, k)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_IDXS,
                            PTEC_MSG("idxs must be int64, int32 or float32 [K], static sizes"));
    }
    if (out->dtype != PTEC_DTYPE_LONG || !ptec_nms_static_vector(out, k) || (out->flags & PTEC_TENSOR_CONSTANT)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_OUT, PTEC_MSG("out must be int64 [K], static sizes"));
    }
    s->threshold = threshold;
    s->k = k;
    s->threshold_tensor = threshold_tensor;
    op->scratch_bytes = (uint32_t)k * 2u * (uint32_t)sizeof(float);
    return PTEC_OK;
}

static ptec_status prepare(ptec_op *op)
{
    return prepare_common(op, false);
}

static ptec_status prepare_tensor(ptec_op *op)
{
    return prepare_common(op, true);
}

/* `idxs == class_id` of torchvision's loop for boxes i and j (float: NaN equal to none, -0.0 to 0.0) */
static bool same_class(const ptec_tensor *idxs, size_t i, size_t j)
{
    if (idxs->dtype == PTEC_DTYPE_LONG) {
        const int64_t *c = idxs->data;
        return c[i] == c[j];
    }
    if (idxs->dtype == PTEC_DTYPE_INT) {
        const int32_t *c = idxs->data;
        return c[i] == c[j];
    }
    const float *c = idxs->data;
    return c[i] == c[j];
}

/* torch's CPU comparison for a descending sort (KeyValueCompDesc): a NaN
 * before every number, else the larger first; by value alone */
static bool descending_less(const void *ctx, uint32_t a, uint32_t b)
{
    const float *v = ctx;
    float x = v[a], y = v[b];
    return (isnan(x) && !isnan(y)) || x > y;
}

static ptec_status run(ptec_op *op)
{
    const batched_nms_state *s = op->state;
    const float *b = ptec_op_tensor(op, ARG_BOXES)->data;
    const float *scores = ptec_op_tensor(op, ARG_SCORES)->data;
    const int64_t *order = ptec_op_tensor(op, ARG_ORDER)->data;
    const ptec_tensor *idxs = ptec_op_tensor(op, ARG_IDXS);
    int64_t *out = ptec_op_tensor(op, ARG_OUT)->data;
    uint32_t k = (uint32_t)s->k;
    if (k == 0u) {
        return PTEC_OK;
    }
    double threshold = s->threshold_tensor ? ptec_nms_threshold_value(ptec_op_tensor(op, ARG_THRESHOLD))
                                           : s->threshold;
    if (op->scratch == NULL || op->scratch_bytes < k * 2u * (uint32_t)sizeof(float)) {
        return ptec_op_fail(op, PTEC_INVALID_STATE, -1, PTEC_MSG("no scratch for the box areas and kept boxes"));
    }
    float *area = op->scratch;
    uint32_t *kept = (uint32_t *)(area + k);     /* 4-byte entries after 4-byte ones: aligned */
    /* order is data: every index checked before any is read */
    for (uint32_t p = 0; p < k; ++p) {
        if (order[p] < 0 || order[p] >= (int64_t)k) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_ORDER, PTEC_MSG("order holds an index outside [0, K)"));
        }
    }
    ptec_nms_areas(b, k, area);
    /* out[i]: box i not suppressed (yet). A hostile out overlapping the
     * inputs reads junk, never out of bounds (every index is checked) */
    for (uint32_t i = 0; i < k; ++i) {
        out[i] = same_class(idxs, i, i) ? 1 : 0;
    }
    for (uint32_t p = 0; p < k; ++p) {
        int64_t oi = order[p];
        if (oi < 0 || oi >= (int64_t)k) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_ORDER, PTEC_MSG("order holds an index outside [0, K)"));
        }
        size_t i = (size_t)oi;
        if (out[i] == 0) {
            continue;
        }
        float bi[4], iarea = area[i];
        memcpy(bi, b + i * 4u, sizeof bi);       /* box i as read once, before any out[j] is written */
        for (uint32_t q = p + 1u; q < k; ++q) {
            int64_t oj = order[q];
            if (oj < 0 || oj >= (int64_t)k) {
                return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_ORDER,
                                    PTEC_MSG("order holds an index outside [0, K)"));
            }
            size_t j = (size_t)oj;
            if (out[j] == 0 || !same_class(idxs, i, j)) {
                continue;
            }
            float iou = ptec_nms_iou(bi, iarea, b + j * 4u, area[j]);
            if ((double)iou > threshold) {
                out[j] = 0;
            }
        }
    }
    /* torch.where(keep_mask): the kept boxes in index order, then the
     * unstable descending sort of their scores reorders them */
    uint32_t m = 0;
    for (uint32_t i = 0; i < k; ++i) {
        if (out[i] != 0) {
            kept[m++] = i;
        }
    }
    ptec_std_sort(kept, m, descending_less, scores);
    for (uint32_t x = 0; x < k; ++x) {
        out[x] = x < m ? (int64_t)kept[x] : -1;
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_ptec_batched_nms_out = {"ptec::batched_nms.out", sizeof(batched_nms_state), prepare,
                                                      run};
const ptec_kernel ptec_kernel_ptec_batched_nms_tensor_out = {"ptec::batched_nms.Tensor_out", sizeof(batched_nms_state),
                                                             prepare_tensor, run};
