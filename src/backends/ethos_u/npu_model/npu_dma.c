/* DMA (spec §5.4): DMA0_LEN bytes from region DMA0_SRC_REGION + DMA0_SRC to
 * region DMA0_DST_REGION + DMA0_DST, or into the SHRAM LUT area when the
 * destination is internal. 1-D only (the only mode Vela emits). */
#include <string.h>

#include "npu_internal.h"

#define DMA_REGION_INTERNAL (1u << 8)

int npu_dma_start(ptec_npu_model *m, uint32_t param)
{
    uint32_t src_region = npu_reg0(m, NPU_SET_DMA0_SRC_REGION);
    uint32_t dst_region = npu_reg0(m, NPU_SET_DMA0_DST_REGION);
    uint64_t src = npu_reg_address(m, NPU_SET_DMA0_SRC);
    uint64_t dst = npu_reg_address(m, NPU_SET_DMA0_DST);
    uint64_t length = npu_reg_address(m, NPU_SET_DMA0_LEN);
    (void)param; /* channel and mode: Vela uses 0, and one channel behaves like any */
    if (((src_region >> 9) & 3u) != 0u || ((dst_region >> 9) & 3u) != 0u) {
        return npu_fault_parse(m, "2-D/3-D DMA is not modelled (no oracle)");
    }
    if (src_region & DMA_REGION_INTERNAL) {
        return npu_fault_parse(m, "DMA from SHRAM is not modelled");
    }
    if (npu_spend(m, length) != 0) {
        return -1;
    }
    uint8_t *from;
    if (npu_region_span(m, src_region & 7u, src, length, PTEC_NPU_CHANNEL_MEM2MEM_READ, 0, &from) != 0) {
        return -1;
    }
    if (dst_region & DMA_REGION_INTERNAL) {
        /* SHRAM: the model keeps only the LUT area, the last 2 KiB of one
         * core's SHRAM (spec §4.1). */
        uint64_t lut_start = (uint64_t)m->hw.shram_kib * 1024u - PTEC_NPU_LUT_BYTES;
        if (m->hw.shram_kib * 1024u < PTEC_NPU_LUT_BYTES || dst < lut_start ||
            dst - lut_start > PTEC_NPU_LUT_BYTES || length > PTEC_NPU_LUT_BYTES - (dst - lut_start)) {
            return npu_fault_bus(m, 8u, PTEC_NPU_CHANNEL_MEM2MEM_WRITE,
                                 "DMA to SHRAM outside the LUT area");
        }
        memmove(m->lut + (dst - lut_start), from, (size_t)length);
    } else {
        uint8_t *to;
        if (npu_region_span(m, dst_region & 7u, dst, length, PTEC_NPU_CHANNEL_MEM2MEM_WRITE, 1, &to) != 0) {
            return -1;
        }
        memmove(to, from, (size_t)length);
    }
    m->stats.dma_count++;
    m->stats.dma_bytes += length;
    return 0;
}
