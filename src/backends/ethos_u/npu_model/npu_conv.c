/* NPU_OP_CONV and NPU_OP_DEPTHWISE (spec §5.1, §5.2, §4.2):
 *   v = bias + sum over taps and IFM channels of (ifm - IFM_ZERO_POINT) * w
 * with w - weight_zp as Vela stores it, padding taps adding 0, the IFM extent
 * implied by the OFM, strides, kernel and pads (no register holds it), then
 * the output stage (per-channel records or OFM_SCALE, round mode, OFM zero
 * point, clamps, LUT). Depthwise reads IFM channel c for OFM channel c.
 *
 * Work memory, one op at a time: the dense weights (npu_weights.h), the
 * channels' scales, and the IFM patch under one OFM position with the zero
 * point already subtracted, so each OFM channel is one dot product. */
#include <string.h>

#include "npu_internal.h"
#include "npu_weights.h"
#include "runtime/checked_math.h"

typedef struct {
    npu_weight_layout layout;
    size_t weight_count;   /* int16 */
    size_t patch_count;    /* int32: taps x channels */
    size_t channels;       /* of the patch: IFM depth, or OFM depth for depthwise */
    size_t scales_offset;  /* bytes into the aligned work area */
    size_t patch_offset;
    size_t bytes;          /* including alignment slack */
} conv_plan;

#define WORK_ALIGN 8u

static int plan_conv(const ptec_npu_model *m, const npu_op *op, conv_plan *p, const char **detail)
{
    memset(p, 0, sizeof(*p));
    if (npu_weight_layout_of(&m->hw, op, &p->layout, detail) != 0) {
        return -1;
    }
    p->weight_count = npu_weight_count(&p->layout);
    p->channels = op->kind == NPU_OP_DEPTHWISE ? op->ofm.depth : op->ifm.depth;
    size_t taps = (size_t)op->kernel_height * op->kernel_width; /* each < 2^16 + 1 */
    size_t weights_bytes, scales_bytes, patch_bytes, end;
    if (p->weight_count == 0u || !ptec_mul_size(taps, p->channels, &p->patch_count) ||
        !ptec_mul_size(p->weight_count, sizeof(int16_t), &weights_bytes) ||
        !ptec_align_size(weights_bytes, WORK_ALIGN, &p->scales_offset) ||
        !ptec_mul_size(op->ofm.depth, sizeof(npu_scale), &scales_bytes) ||
        !ptec_add_size(p->scales_offset, scales_bytes, &end) || !ptec_align_size(end, WORK_ALIGN, &p->patch_offset) ||
        !ptec_mul_size(p->patch_count, sizeof(int32_t), &patch_bytes) ||
        !ptec_add_size(p->patch_offset, patch_bytes, &end) || !ptec_add_size(end, WORK_ALIGN, &p->bytes)) {
        *detail = "CONV/DEPTHWISE work size overflows";
        return -1;
    }
    return 0;
}

size_t npu_conv_work_bytes(const ptec_npu_model *m, const npu_op *op)
{
    conv_plan plan;
    const char *detail;
    return plan_conv(m, op, &plan, &detail) == 0 ? plan.bytes : 0u;
}

/* Refuses what the model does not compute (no oracle pins it). */
static int check_modelled(ptec_npu_model *m, const npu_op *op)
{
    if (op->ifm_upscale != 0u) {
        return npu_fault_parse(m, "IFM_UPSCALE on CONV/DEPTHWISE is not modelled (no oracle)");
    }
    if (op->acc_format == 2u) {
        return npu_fault_parse(m, "F16 accumulators are not modelled");
    }
    if (op->acc_format == 3u) {
        return npu_fault_parse(m, "ACC_FORMAT 3 is reserved");
    }
    if (op->parallel_mode > 1u) {
        return npu_fault_parse(m, "PARALLEL_MODE beyond two cores");
    }
    return 0;
}

/* Fills the patch under OFM position (oy, ox): (ifm - zero point) per tap
 * and channel, 0 for padding taps (outside the implied IFM extent). */
static int gather_patch(ptec_npu_model *m, const npu_op *op, const conv_plan *p, uint32_t oy, uint32_t ox,
                        int32_t *patch)
{
    const ptec_npu_fmap *ifm = &op->ifm;
    size_t t = 0;
    for (uint32_t ky = 0; ky < op->kernel_height; ky++) {
        int64_t iy = (int64_t)oy * op->stride_y + (int64_t)ky * op->dilation_y - (int64_t)op->pad_top;
        for (uint32_t kx = 0; kx < op->kernel_width; kx++, t++) {
            int64_t ix = (int64_t)ox * op->stride_x + (int64_t)kx * op->dilation_x - (int64_t)op->pad_left;
            int32_t *tap = patch + t * p->channels;
            if (iy < 0 || ix < 0 || iy >= (int64_t)ifm->height || ix >= (int64_t)ifm->width) {
                memset(tap, 0, p->channels * sizeof(*tap));
                continue;
            }
            for (size_t c = 0; c < p->channels; c++) {
                int32_t v;
                if (npu_fmap_read(m, ifm, (uint32_t)iy, (uint32_t)ix, (uint32_t)c, &v) != 0) {
                    return -1;
                }
                tap[c] = v - ifm->zero_point;
            }
        }
    }
    return 0;
}

/* The dense weights from the op's stream, or on a dual-core op (U65-512,
 * PARALLEL_MODE 1) from both cores' streams (WEIGHT_* and WEIGHT1_*), each
 * holding every second OFM channel (spec §4.3; inferred from Vela, no oracle). */
static int unpack_weights(ptec_npu_model *m, const npu_op *op, const npu_weight_layout *full, int16_t *weights,
                          size_t count)
{
    uint32_t cores = op->parallel_mode + 1u;
    for (uint32_t core = 0; core < cores; core++) {
        npu_weight_layout layout = *full;
        if (cores > 1u) {
            int status = npu_weight_layout_for_core(full, core, cores, &layout);
            if (status == 1) {
                continue;
            }
            if (status != 0) {
                return npu_fault_parse(m, "dual-core op whose block depth leaves a core no weights");
            }
        }
        uint64_t base = core == 0u ? op->weight_base : op->weight1_base;
        uint32_t length = core == 0u ? op->weight_length : op->weight1_length;
        uint8_t *stream;
        const char *detail = NULL;
        if (npu_region_span(m, op->weight_region, base, length, PTEC_NPU_CHANNEL_WEIGHTS, 0, &stream) != 0) {
            return -1;
        }
        if (npu_weights_unpack(&layout, stream, length, weights, count, &detail) != 0) {
            return npu_fault_parse(m, detail);
        }
    }
    return 0;
}

/* Each OFM channel's scale; on a dual-core op channel c's record is record
 * c / 2 of core c % 2's stream (SCALE_* or SCALE1_*). */
static int read_scales(ptec_npu_model *m, const npu_op *op, npu_scale *scales)
{
    uint32_t cores = op->parallel_mode + 1u;
    npu_op core1 = *op;
    core1.scale_base = op->scale1_base;
    core1.scale_length = op->scale1_length;
    for (uint32_t c = 0; c < op->ofm.depth; c++) {
        const npu_op *view = cores > 1u && c % cores == 1u ? &core1 : op;
        if (npu_output_scale(m, view, cores > 1u ? c / cores : c, &scales[c]) != 0) {
            return -1;
        }
    }
    return 0;
}

int npu_op_conv(ptec_npu_model *m, const npu_op *op)
{
    if (check_modelled(m, op) != 0) {
        return -1;
    }
    conv_plan p;
    const char *detail = NULL;
    if (plan_conv(m, op, &p, &detail) != 0) {
        return npu_fault_parse(m, detail);
    }
    uint8_t *raw = (uint8_t *)npu_work(m, p.bytes);
    if (raw == NULL) {
        return -1;
    }
    uint8_t *area = raw + (WORK_ALIGN - (uintptr_t)raw % WORK_ALIGN) % WORK_ALIGN;
    int16_t *weights = (int16_t *)(void *)area;
    npu_scale *scales = (npu_scale *)(void *)(area + p.scales_offset);
    int32_t *patch = (int32_t *)(void *)(area + p.patch_offset);

    /* The cost: every MAC, plus the weight values decoded. */
    const ptec_npu_fmap *ofm = &op->ofm;
    uint64_t macs = 0;
    if (!ptec_mul_u64((uint64_t)ofm->width * ofm->height, (uint64_t)ofm->depth * op->kernel_height * op->kernel_width,
                      UINT64_MAX, &macs) ||
        !ptec_mul_u64(macs, p.layout.ifm_depth, UINT64_MAX, &macs)) {
        return npu_fault_parse(m, "CONV/DEPTHWISE cost overflows");
    }
    if (npu_spend(m, ptec_add_sat_u64(macs, p.weight_count)) != 0) {
        return -1;
    }

    if (unpack_weights(m, op, &p.layout, weights, p.weight_count) != 0 ||
        read_scales(m, op, scales) != 0) {
        return -1;
    }
    m->stats.macs += macs;

    size_t taps = (size_t)op->kernel_height * op->kernel_width;
    int depthwise = op->kind == NPU_OP_DEPTHWISE;
    for (uint32_t oy = 0; oy < ofm->height; oy++) {
        for (uint32_t ox = 0; ox < ofm->width; ox++) {
            if (gather_patch(m, op, &p, oy, ox, patch) != 0) {
                return -1;
            }
            for (uint32_t oc = 0; oc < ofm->depth; oc++) {
                /* |term| < 2^17 * 2^9 and at most 2^48 terms: int64 holds the sum */
                int64_t acc = scales[oc].bias;
                if (depthwise) {
                    const int16_t *w = weights + (size_t)oc * taps;
                    for (size_t t = 0; t < taps; t++) {
                        acc += (int64_t)patch[t * p.channels + oc] * w[t];
                    }
                } else {
                    const int16_t *w = weights + (size_t)oc * p.patch_count;
                    for (size_t i = 0; i < p.patch_count; i++) {
                        acc += (int64_t)patch[i] * w[i];
                    }
                }
                int64_t rounded = npu_round_scale(acc, scales[oc].scale, scales[oc].shift, op->round_mode);
                if (npu_output_store(m, op, oy, ox, oc, rounded) != 0) {
                    return -1;
                }
            }
        }
    }
    return 0;
}
