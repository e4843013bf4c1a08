/* LUT activations (spec §5.3): TABLE_n lives at the SHRAM LUT area + 256·n,
 * filled by a DMA to SHRAM (npu_dma.c); an int8-indexed table holds 256
 * entries of the OFM element size, ordered by input -128..127. */
#include "npu_internal.h"

int npu_lut_lookup(ptec_npu_model *m, const npu_op *op, int32_t index8, int32_t *out)
{
    uint32_t esize = op->ofm.elem_bytes;
    uint32_t offset = 256u * (op->activation - 16u) + (uint32_t)(index8 + 128) * esize;
    if (offset + esize > PTEC_NPU_LUT_BYTES) {
        return npu_fault_parse(m, "LUT entry beyond the SHRAM LUT area");
    }
    const uint8_t *p = m->lut + offset;
    uint32_t raw = 0;
    for (uint32_t i = 0; i < esize; i++) {
        raw |= (uint32_t)p[i] << (8u * i);
    }
    if (esize == 1u) {
        *out = op->ofm.is_signed ? (int32_t)(int8_t)raw : (int32_t)raw;
    } else {
        *out = (int32_t)raw;
    }
    return 0;
}
