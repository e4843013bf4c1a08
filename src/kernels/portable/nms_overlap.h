/* The box steps op_nms.c and op_batched_nms.c share: torchvision's CPU nms
 * areas and overlap (IoU), float32 throughout, in its order of operations:
 *
 *   area   (x2 - x1) * (y2 - y1), no + 1;
 *   sides  max(0, min(x2) - max(x1)), std::min / std::max's picks (the
 *          first operand unless the other compares past it, so a NaN side
 *          falls to 0 as there);
 *   iou    inter / (area_i + area_j - inter), inter = w * h.
 *
 * Also the argument shape checks both kernels make. Header-only, static
 * inline: each kernel keeps its own copy, no new symbol. */
#ifndef PTEC_KERNELS_PORTABLE_NMS_OVERLAP_H
#define PTEC_KERNELS_PORTABLE_NMS_OVERLAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ptec/kernel.h"

/* rows in dimension order (the boxes are read as [K, 4] row-major) */
static inline bool ptec_nms_row_major(const ptec_tensor *t)
{
    for (uint8_t d = 0; d < t->rank; ++d) {
        if (t->dim_order[d] != d) {
            return false;
        }
    }
    return true;
}

/* a [k] vector of static sizes */
static inline bool ptec_nms_static_vector(const ptec_tensor *t, int32_t k)
{
    return t->rank == 1u && t->sizes[0] == k && !(t->flags & PTEC_TENSOR_DYNAMIC);
}

/* Tensor_out's threshold: float32, one element, static sizes */
static inline bool ptec_nms_threshold_tensor_ok(const ptec_tensor *t)
{
    return t->dtype == PTEC_DTYPE_FLOAT && t->numel == 1u && t->nbytes >= (uint32_t)sizeof(float) &&
           !(t->flags & PTEC_TENSOR_DYNAMIC);
}

/* its value as torchvision compares it: the float32 read as a double */
static inline double ptec_nms_threshold_value(const ptec_tensor *t)
{
    return (double)*(const float *)t->data;
}

/* std::max(a, b) and std::min(a, b) */
static inline float ptec_nms_pick_max(float a, float b)
{
    return a < b ? b : a;
}

static inline float ptec_nms_pick_min(float a, float b)
{
    return b < a ? b : a;
}

/* area[i] of each of the k boxes b [k, 4] */
static inline void ptec_nms_areas(const float *b, uint32_t k, float *area)
{
    for (uint32_t i = 0; i < k; ++i) {
        const float *r = b + (size_t)i * 4u;
        area[i] = (r[2] - r[0]) * (r[3] - r[1]);
    }
}

/* the IoU of box bi (area iarea) and box bj (area jarea) */
static inline float ptec_nms_iou(const float *bi, float iarea, const float *bj, float jarea)
{
    float w = ptec_nms_pick_min(bi[2], bj[2]) - ptec_nms_pick_max(bi[0], bj[0]);
    float h = ptec_nms_pick_min(bi[3], bj[3]) - ptec_nms_pick_max(bi[1], bj[1]);
    w = ptec_nms_pick_max(0.0f, w);
    h = ptec_nms_pick_max(0.0f, h);
    float inter = w * h;
    return inter / (iarea + jarea - inter);
}

#endif /* PTEC_KERNELS_PORTABLE_NMS_OVERLAP_H */
