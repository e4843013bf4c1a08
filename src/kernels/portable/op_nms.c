/* ptec::nms.out(Tensor boxes, Tensor order, float iou_threshold, *, Tensor(a!) out)
 * ptec::nms.Tensor_out(Tensor boxes, Tensor order, Tensor iou_threshold, *, Tensor(a!) out)
 *
 * torchvision.ops.nms's keep/suppress recurrence (its CPU kernel), in the
 * sorted order the program computed (order: the stable descending sort of
 * the scores, aten::sort's int64 indices), so the kernel never sorts and the
 * selection that follows (aten::masked_select of order by out > 0.5) gives
 * torchvision's indices in its order:
 *
 *   boxes   float32 [K, 4] (x1, y1, x2, y2), row-major;
 *   order   int64 [K], each in [0, K) (checked at run: it is data);
 *   out     float32 [K]: 1 where the box at sorted position p is kept, else 0.
 *
 * Scratch: K float32 areas, (x2 - x1) * (y2 - y1) per box index, computed
 * once as torchvision does. For the kept box i and each later unsuppressed
 * j: the overlap's sides are max(0, min(x2) - max(x1)) (std::min / max's
 * picks, NaN falling to 0 as there), inter = w * h, iou = inter / (area_i +
 * area_j - inter) in float32, and j is suppressed when iou > t compared in
 * double (torchvision's threshold is a double). K = 0 is valid (empty out).
 * O(K^2) time, no state beyond the threshold and K.
 *
 * Tensor_out: the threshold the program computed (torchvision.ops.nms given
 * a tensor reads its one value as a double), a float32 tensor of one
 * element, static sizes, read at each run; the comparison is the same, iou
 * > (double)t, so a NaN threshold suppresses nothing as there. The steps
 * shared with op_batched_nms.c are in nms_overlap.h. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "kernels/portable/nms_overlap.h"
#include "ptec/kernel.h"

enum { ARG_BOXES, ARG_ORDER, ARG_THRESHOLD, ARG_OUT, ARG_COUNT };

typedef struct nms_state {
    double threshold;
    int32_t k;
    bool threshold_tensor; /* Tensor_out: read the threshold from its tensor at run */
} nms_state;

static ptec_status prepare_common(ptec_op *op, bool threshold_tensor)
{
    nms_state *s = op->state;
    ptec_tensor *boxes, *order, *out;
    ptec_tensor *threshold_t = NULL;
    double threshold = 0.0;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, ARG_COUNT + 1u)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, ARG_BOXES, &boxes)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, ARG_ORDER, &order)) != PTEC_OK ||
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
    /* K float32 areas of scratch must fit in uint32 bytes */
    if (k < 0 || (uint32_t)k > UINT32_MAX / (uint32_t)sizeof(float)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_BOXES, PTEC_MSG("too many boxes"));
    }
    if (order->dtype != PTEC_DTYPE_LONG || !ptec_nms_static_vector(order, k)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_ORDER, PTEC_MSG("order must be int64 [K], static sizes"));
    }
    if (out->dtype != PTEC_DTYPE_FLOAT || !ptec_nms_static_vector(out, k) || (out->flags & PTEC_TENSOR_CONSTANT)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_OUT, PTEC_MSG("out must be float32 [K], static sizes"));
    }
    s->threshold = threshold;
    s->k = k;
    s->threshold_tensor = threshold_tensor;
    op->scratch_bytes = (uint32_t)k * (uint32_t)sizeof(float);
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

static ptec_status run(ptec_op *op)
{
    const nms_state *s = op->state;
    const float *b = ptec_op_tensor(op, ARG_BOXES)->data;
    const int64_t *order = ptec_op_tensor(op, ARG_ORDER)->data;
    float *keep = ptec_op_tensor(op, ARG_OUT)->data;
    float *area = op->scratch;
    uint32_t k = (uint32_t)s->k;
    if (k == 0u) {
        return PTEC_OK;
    }
    double threshold = s->threshold_tensor ? ptec_nms_threshold_value(ptec_op_tensor(op, ARG_THRESHOLD))
                                           : s->threshold;
    if (area == NULL || op->scratch_bytes < k * (uint32_t)sizeof(float)) {
        return ptec_op_fail(op, PTEC_INVALID_STATE, -1, PTEC_MSG("no scratch for the box areas"));
    }
    /* order is data: every index checked before any is read */
    for (uint32_t p = 0; p < k; ++p) {
        if (order[p] < 0 || order[p] >= (int64_t)k) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_ORDER, PTEC_MSG("order holds an index outside [0, K)"));
        }
    }
    ptec_nms_areas(b, k, area);
    /* keep[p] doubles as "not suppressed yet": a hostile out overlapping
     * boxes or order reads junk, never out of bounds (both were checked) */
    for (uint32_t p = 0; p < k; ++p) {
        keep[p] = 1.0f;
    }
    for (uint32_t p = 0; p < k; ++p) {
        if (keep[p] == 0.0f) {
            continue;
        }
        size_t i = (size_t)order[p];
        if (i >= k) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_ORDER, PTEC_MSG("order holds an index outside [0, K)"));
        }
        float bi[4], iarea = area[i];
        memcpy(bi, b + i * 4u, sizeof bi);       /* box i as read once, before any keep[q] is written */
        for (uint32_t q = p + 1u; q < k; ++q) {
            if (keep[q] == 0.0f) {
                continue;
            }
            size_t j = (size_t)order[q];
            if (j >= k) {
                return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_ORDER,
                                    PTEC_MSG("order holds an index outside [0, K)"));
            }
            float iou = ptec_nms_iou(bi, iarea, b + j * 4u, area[j]);
            if ((double)iou > threshold) {
                keep[q] = 0.0f;
            }
        }
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_ptec_nms_out = {"ptec::nms.out", sizeof(nms_state), prepare, run};
const ptec_kernel ptec_kernel_ptec_nms_tensor_out = {"ptec::nms.Tensor_out", sizeof(nms_state), prepare_tensor, run};
