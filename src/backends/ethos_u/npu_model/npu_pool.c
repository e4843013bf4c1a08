/* POOL (spec §5.2): MAX, AVERAGE and REDUCE_SUM over the kernel window.
 *
 * A tap at iy = oy·sy − PAD_TOP + ky·dil_y is padding iff it leaves the IFM
 * extent the registers imply (spec §4.2); padding taps are skipped. MAX takes
 * the largest in-bounds (ifm − IFM_ZP) and no scale; AVERAGE sums the
 * in-bounds window and scales it by (M, s) (OFM_SCALE in global mode, the
 * channel's record otherwise); REDUCE_SUM sums the window over all IFM
 * channels into OFM channel 0, scaled likewise. Zero points apply to 8/16-bit
 * IFMs only (I, as for 32-bit OFMs). */
#include "npu_internal.h"

static int window_value(ptec_npu_model *m, const npu_op *op, uint32_t oy, uint32_t ox, uint32_t c,
                        int64_t *out)
{
    const ptec_npu_fmap *ifm = &op->ifm;
    int64_t zp = ifm->elem_bytes == 4u ? 0 : ifm->zero_point;
    int64_t acc = 0;
    int any = 0;
    uint32_t c_first = op->subkind == NPU_POOL_REDUCE_SUM ? 0u : c;
    uint32_t c_end = op->subkind == NPU_POOL_REDUCE_SUM ? ifm->depth : c + 1u;
    for (uint32_t ky = 0; ky < op->kernel_height; ky++) {
        int64_t iy = (int64_t)oy * op->stride_y - (int64_t)op->pad_top + (int64_t)ky * op->dilation_y;
        if (iy < 0 || iy >= (int64_t)ifm->height) {
            continue;
        }
        for (uint32_t kx = 0; kx < op->kernel_width; kx++) {
            int64_t ix = (int64_t)ox * op->stride_x - (int64_t)op->pad_left + (int64_t)kx * op->dilation_x;
            if (ix < 0 || ix >= (int64_t)ifm->width) {
                continue;
            }
            for (uint32_t ic = c_first; ic < c_end; ic++) {
                int32_t raw;
                if (npu_fmap_read(m, ifm, (uint32_t)iy, (uint32_t)ix, ic, &raw) != 0) {
                    return -1;
                }
                int64_t v = (int64_t)raw - zp;
                if (op->subkind == NPU_POOL_MAX) {
                    acc = (!any || v > acc) ? v : acc;
                } else {
                    acc += v;
                }
                any = 1;
            }
        }
    }
    *out = acc;
    return 0;
}

int npu_op_pool(ptec_npu_model *m, const npu_op *op)
{
    const ptec_npu_fmap *ofm = &op->ofm;
    if (op->subkind > NPU_POOL_REDUCE_SUM) {
        return npu_fault_parse(m, "reserved POOL mode");
    }
    if (op->ifm_upscale != 0u) {
        return npu_fault_parse(m, "IFM_UPSCALE is not modelled (no oracle)");
    }
    uint32_t depth = op->subkind == NPU_POOL_REDUCE_SUM ? 1u : ofm->depth;
    uint64_t per_element = npu_steps_mul((uint64_t)op->kernel_width * op->kernel_height,
                                         op->subkind == NPU_POOL_REDUCE_SUM ? op->ifm.depth : 1u);
    if (npu_spend(m, npu_steps_mul((uint64_t)ofm->width * ofm->height * depth, per_element)) != 0) {
        return -1;
    }
    for (uint32_t y = 0; y < ofm->height; y++) {
        for (uint32_t x = 0; x < ofm->width; x++) {
            for (uint32_t c = 0; c < depth; c++) {
                int64_t v, rounded;
                if (window_value(m, op, y, x, c, &v) != 0) {
                    return -1;
                }
                if (op->subkind == NPU_POOL_MAX) {
                    rounded = v;
                } else {
                    npu_scale scale;
                    if (npu_output_scale(m, op, c, &scale) != 0) {
                        return -1;
                    }
                    rounded = npu_round_scale(v + scale.bias, scale.scale, scale.shift, op->round_mode);
                }
                if (npu_output_store(m, op, y, x, c, rounded) != 0) {
                    return -1;
                }
            }
        }
    }
    return 0;
}
