/* Regions and feature maps (spec §4.1, §4.2): every byte the model touches
 * goes through npu_region_span, which bounds it by base_size[region]; feature
 * map elements are found through their four tiles in NHWC or NHCWB16. */
#include "npu_internal.h"

int npu_region_span(ptec_npu_model *m, uint32_t region, uint64_t offset, uint64_t length,
                    uint32_t channel, int write, uint8_t **out)
{
    if ((int64_t)region >= (int64_t)m->base_count || m->base == NULL || m->base_size == NULL) {
        return npu_fault_bus(m, region, channel, "access through a region with no base address");
    }
    if (write && region == 0u) {
        /* Region 0 holds the constants (weights, scales, LUTs) inside the
         * program; the model never writes it (U55 maps it to the read-only AXI1). */
        return npu_fault_bus(m, region, channel, "write to region 0 (read-only constants)");
    }
    uint64_t size = m->base_size[region];
    if (offset > size || length > size - offset) {
        return npu_fault_bus(m, region, channel,
                             channel == PTEC_NPU_CHANNEL_OFM ? "OFM write outside its region"
                             : channel == PTEC_NPU_CHANNEL_IFM ? "IFM read outside its region"
                             : channel == PTEC_NPU_CHANNEL_WEIGHTS ? "weight read outside its region"
                             : channel == PTEC_NPU_CHANNEL_SCALES ? "scale read outside its region"
                             : channel == PTEC_NPU_CHANNEL_MEM2MEM_READ ? "DMA read outside its region"
                             : "DMA write outside its region");
    }
    uint64_t address = m->base[region] + offset;
    if (address < offset || address > (uint64_t)UINTPTR_MAX) {
        return npu_fault_bus(m, region, channel, "region address does not fit a pointer");
    }
    *out = (uint8_t *)(uintptr_t)address;
    return 0;
}

/* Byte offset of element (y, x, c) in its region. Coordinates are < 2^16 and
 * strides < 2^40, so no sum below can wrap 64 bits. */
static uint64_t element_offset(const ptec_npu_fmap *f, uint32_t y, uint32_t x, uint32_t c)
{
    uint32_t tile = 0;
    if (x >= f->width0) {
        x -= f->width0;
        if (y >= f->height1) {
            y -= f->height1;
            tile = 3;
        } else {
            tile = 1;
        }
    } else if (y >= f->height0) {
        y -= f->height0;
        tile = 2;
    }
    uint64_t e = f->elem_bytes;
    uint64_t offset = f->base[tile] + (uint64_t)y * f->stride_y;
    if (f->format == 0u) {
        offset += (uint64_t)x * f->stride_x + (uint64_t)c * e;
    } else {
        offset += (uint64_t)(c / 16u) * f->stride_c + (uint64_t)x * 16u * e + (uint64_t)(c % 16u) * e;
    }
    return offset;
}

int npu_fmap_read(ptec_npu_model *m, const ptec_npu_fmap *f, uint32_t y, uint32_t x, uint32_t c,
                  int32_t *value)
{
    uint8_t *p = NULL;
    if (npu_region_span(m, f->region, element_offset(f, y, x, c), f->elem_bytes, PTEC_NPU_CHANNEL_IFM, 0,
                        &p) != 0) {
        return -1;
    }
    uint32_t raw = p[0];
    if (f->elem_bytes == 1u) {
        *value = f->is_signed ? (int32_t)(int8_t)raw : (int32_t)raw;
    } else if (f->elem_bytes == 2u) {
        raw |= (uint32_t)p[1] << 8;
        *value = f->is_signed ? (int32_t)(int16_t)raw : (int32_t)raw;
    } else {
        raw |= (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
        *value = (int32_t)raw;
    }
    return 0;
}

int npu_fmap_write(ptec_npu_model *m, const ptec_npu_fmap *f, uint32_t y, uint32_t x, uint32_t c,
                   int32_t value)
{
    uint8_t *p = NULL;
    if (npu_region_span(m, f->region, element_offset(f, y, x, c), f->elem_bytes, PTEC_NPU_CHANNEL_OFM, 1,
                        &p) != 0) {
        return -1;
    }
    uint32_t raw = (uint32_t)value;
    for (uint32_t i = 0; i < f->elem_bytes; i++) {
        p[i] = (uint8_t)(raw >> (8u * i));
    }
    return 0;
}
