/* ptec::nms.out(Tensor boxes, Tensor order, float iou_threshold, *, Tensor(a!) out)
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
 * O(K^2) time, no state beyond the threshold and K. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ptec/kernel.h"

enum { ARG_BOXES, ARG_ORDER, ARG_THRESHOLD, ARG_OUT, ARG_COUNT };

typedef struct nms_state {
    double threshold;
    int32_t k;
} nms_state;

static bool row_major(const ptec_tensor *t)
{
    for (uint8_t d = 0; d < t->rank; ++d) {
        if (t->dim_order[d] != d) {
            return false;
        }
    }
    return true;
}

static bool static_vector(const ptec_tensor *t, int32_t k)
{
    return t->rank == 1u && t->sizes[0] == k && !(t->flags & PTEC_TENSOR_DYNAMIC);
}

static ptec_status prepare(ptec_op *op)
{
    nms_state *s = op->state;
    ptec_tensor *boxes, *order, *out;
    double threshold;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, ARG_COUNT + 1u)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, ARG_BOXES, &boxes)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, ARG_ORDER, &order)) != PTEC_OK ||
        (st = ptec_op_get_double(op, ARG_THRESHOLD, &threshold)) != PTEC_OK ||
        (st = ptec_op_get_out(op, &out)) != PTEC_OK) {
        return st;
    }
    if (boxes->dtype != PTEC_DTYPE_FLOAT || boxes->rank != 2u || boxes->sizes[1] != 4 ||
        (boxes->flags & PTEC_TENSOR_DYNAMIC) || !row_major(boxes)) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_BOXES,
                            PTEC_MSG("boxes must be float32 [K, 4], row-major, static sizes"));
    }
    int32_t k = boxes->sizes[0];
    /* K float32 areas of scratch must fit in uint32 bytes */
    if (k < 0 || (uint32_t)k > UINT32_MAX / (uint32_t)sizeof(float)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_BOXES, PTEC_MSG("too many boxes"));
    }
    if (order->dtype != PTEC_DTYPE_LONG || !static_vector(order, k)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_ORDER, PTEC_MSG("order must be int64 [K], static sizes"));
    }
    if (out->dtype != PTEC_DTYPE_FLOAT || !static_vector(out, k) || (out->flags & PTEC_TENSOR_CONSTANT)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_OUT, PTEC_MSG("out must be float32 [K], static sizes"));
    }
    s->threshold = threshold;
    s->k = k;
    op->scratch_bytes = (uint32_t)k * (uint32_t)sizeof(float);
    return PTEC_OK;
}

/* std::max(a, b) and std::min(a, b): the first operand unless the other
 * compares past it (NaN operands then pick as torchvision's kernel does) */
static float pick_max(float a, float b)
{
    return a < b ? b : a;
}

static float pick_min(float a, float b)
{
    return b < a ? b : a;
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
    if (area == NULL || op->scratch_bytes < k * (uint32_t)sizeof(float)) {
        return ptec_op_fail(op, PTEC_INVALID_STATE, -1, PTEC_MSG("no scratch for the box areas"));
    }
    /* order is data: every index checked before any is read */
    for (uint32_t p = 0; p < k; ++p) {
        if (order[p] < 0 || order[p] >= (int64_t)k) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_ORDER, PTEC_MSG("order holds an index outside [0, K)"));
        }
    }
    for (uint32_t i = 0; i < k; ++i) {
        const float *r = b + (size_t)i * 4u;
        area[i] = (r[2] - r[0]) * (r[3] - r[1]);
    }
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
        const float *bi = b + i * 4u;
        float ix1 = bi[0], iy1 = bi[1], ix2 = bi[2], iy2 = bi[3], iarea = area[i];
        for (uint32_t q = p + 1u; q < k; ++q) {
            if (keep[q] == 0.0f) {
                continue;
            }
            size_t j = (size_t)order[q];
            if (j >= k) {
                return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_ORDER,
                                    PTEC_MSG("order holds an index outside [0, K)"));
            }
            const float *bj = b + j * 4u;
            float w = pick_min(ix2, bj[2]) - pick_max(ix1, bj[0]);
            float h = pick_min(iy2, bj[3]) - pick_max(iy1, bj[1]);
            w = pick_max(0.0f, w);
            h = pick_max(0.0f, h);
            float inter = w * h;
            float iou = inter / (iarea + area[j] - inter);
            if ((double)iou > s->threshold) {
                keep[q] = 0.0f;
            }
        }
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_ptec_nms_out = {"ptec::nms.out", sizeof(nms_state), prepare, run};
