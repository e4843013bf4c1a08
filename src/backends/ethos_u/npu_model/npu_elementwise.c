/* ELEMENTWISE (spec §5.2): MUL, ADD, SUB, MIN, MAX, ABS, CLZ, SHR, SHL over the
 * OFM, with IFM2 a feature map, a broadcast map or the IFM2_SCALAR.
 *
 * Operands: a = IFM, b = IFM2, each minus its zero point when 8/16-bit (a
 * 32-bit input takes no zero point, like a 32-bit OFM: I). IFM2_BROADCAST[6]
 * swaps them. 8/16-bit ADD/SUB in IFM scale mode 0 weigh a by OPA[15:0] and b
 * by OPB[15:0]; then (M, s) of the output stage. With 32-bit inputs, ADD, SUB
 * and MUL apply the shift only, not M (D). LRELU is refused: no public rule.
 *
 * IFM scale modes 1 (OPA_32) and 2 (OPB_32), Vela's "advanced" add/sub for
 * inputs of different scales (I, unverified, no oracle): the operand the mode
 * names becomes R(x · OPA_SCALE, OPA_SHIFT) under the IFM round mode, and
 * the other one x · 2^19 (8-bit) or x · 2^14 (16-bit). Vela's scales
 * (scaling.py: the scaled operand's rescale s_min·2^20/(2·s_max), the OFM's
 * 2·s_max/(s_out·2^20), with 2^15 for 16-bit) only give the TFLite sum if the
 * unscaled operand carries that factor. */
#include "npu_internal.h"

static int operand(ptec_npu_model *m, const ptec_npu_fmap *f, uint32_t y, uint32_t x, uint32_t c, int64_t *out)
{
    int32_t raw;
    if (npu_fmap_read(m, f, y, x, c, &raw) != 0) {
        return -1;
    }
    *out = f->elem_bytes == 4u ? raw : (int64_t)raw - f->zero_point;
    return 0;
}

static int64_t shift_amount(int64_t b)
{
    return b < 0 ? 0 : b > 63 ? 63 : b;
}

static uint32_t count_leading_zeros(uint32_t v)
{
    uint32_t n = 0;
    for (uint32_t bit = 1u << 31; bit != 0u && (v & bit) == 0u; bit >>= 1) {
        n++;
    }
    return n;
}

/* The value the output stage gets for one element (before zero point/clamp). */
static int element(ptec_npu_model *m, const npu_op *op, int64_t a, int64_t b, uint32_t c, int64_t *rounded)
{
    int wide = op->ifm.elem_bytes == 4u;
    if (!wide && (op->subkind == NPU_EW_ADD || op->subkind == NPU_EW_SUB)) {
        uint32_t ifm_round = (op->ifm.precision >> 14) & 3u;
        int64_t unscaled = (int64_t)1 << (op->ifm.elem_bytes == 1u ? 19 : 14);
        if (op->ifm_scale_mode == 1u) {
            a = npu_round_scale(a, op->opa_scale, op->opa_shift, ifm_round);
            b *= unscaled;
        } else if (op->ifm_scale_mode == 2u) {
            a *= unscaled;
            b = npu_round_scale(b, op->opa_scale, op->opa_shift, ifm_round);
        } else {
            a *= (int64_t)(op->opa_scale & 0xFFFFu);
            b *= (int64_t)(op->opb_scale & 0xFFFFu);
        }
    }
    if (op->ifm2_broadcast & 0x40u) {
        int64_t t = a;
        a = b;
        b = t;
    }
    int64_t v;
    switch (op->subkind) {
    case NPU_EW_ADD:
        v = a + b;
        break;
    case NPU_EW_SUB:
        v = a - b;
        break;
    case NPU_EW_MUL:
        v = a * b; /* at most 32 x 32 bits: exact in 64 */
        break;
    case NPU_EW_ABS:
        v = a < 0 ? -a : a;
        break;
    case NPU_EW_MIN:
        *rounded = a < b ? a : b;
        return 0;
    case NPU_EW_MAX:
        *rounded = a > b ? a : b;
        return 0;
    case NPU_EW_CLZ:
        *rounded = count_leading_zeros((uint32_t)a);
        return 0;
    case NPU_EW_SHR:
        *rounded = npu_round_scale(a, 1u, (uint32_t)shift_amount(b), op->round_mode);
        return 0;
    case NPU_EW_SHL: {
        int64_t s = shift_amount(b);
        /* saturate instead of overflowing int64; the store saturates to the OFM */
        if (s >= 32) {
            *rounded = a == 0 ? 0 : a < 0 ? INT64_MIN : INT64_MAX;
        } else {
            *rounded = a * ((int64_t)1 << s);
        }
        return 0;
    }
    default:
        return npu_fault_parse(m, "ELEMENTWISE LRELU is not modelled (no public rule, no oracle)");
    }
    npu_scale scale;
    if (npu_output_scale(m, op, c, &scale) != 0) {
        return -1;
    }
    /* 32-bit operations take the shift only (D) */
    *rounded = npu_round_scale(v + scale.bias, wide ? 1u : scale.scale, scale.shift, op->round_mode);
    return 0;
}

int npu_op_elementwise(ptec_npu_model *m, const npu_op *op)
{
    const ptec_npu_fmap *ofm = &op->ofm;
    int unary = op->subkind == NPU_EW_ABS || op->subkind == NPU_EW_CLZ || op->subkind == NPU_EW_LRELU;
    int scalar = (op->ifm2_broadcast & 0x80u) != 0u;
    if (op->ifm_scale_mode == 3u && (op->subkind == NPU_EW_ADD || op->subkind == NPU_EW_SUB)) {
        return npu_fault_parse(m, "IFM scale mode 3 is reserved");
    }
    if (((op->ifm.precision >> 14) & 3u) == 3u) {
        return npu_fault_parse(m, "IFM_PRECISION round mode 3 is reserved");
    }
    if (op->ifm_upscale != 0u) {
        return npu_fault_parse(m, "IFM_UPSCALE is not modelled (no oracle)");
    }
    if (!unary && !scalar && op->ifm2.elem_bytes != op->ifm.elem_bytes) {
        return npu_fault_parse(m, "IFM2 element size differs from the IFM's");
    }
    if (op->subkind > NPU_EW_SHL) {
        return npu_fault_parse(m, "reserved ELEMENTWISE mode");
    }
    if (npu_spend(m, (uint64_t)ofm->width * ofm->height * ofm->depth) != 0) {
        return -1;
    }
    int64_t b_scalar = op->ifm2_scalar;
    if (op->ifm2.elem_bytes != 4u) {
        b_scalar -= op->ifm2.zero_point;
    }
    for (uint32_t y = 0; y < ofm->height; y++) {
        for (uint32_t x = 0; x < ofm->width; x++) {
            for (uint32_t c = 0; c < ofm->depth; c++) {
                int64_t a, b, rounded = 0;
                if (operand(m, &op->ifm, y, x, c, &a) != 0) {
                    return -1;
                }
                if (unary) {
                    b = 0;
                } else if (scalar) {
                    b = b_scalar;
                } else if (operand(m, &op->ifm2, (op->ifm2_broadcast & 1u) ? 0u : y,
                                   (op->ifm2_broadcast & 2u) ? 0u : x, (op->ifm2_broadcast & 4u) ? 0u : c,
                                   &b) != 0) {
                    return -1;
                }
                if (element(m, op, a, b, c, &rounded) != 0 || npu_output_store(m, op, y, x, c, rounded) != 0) {
                    return -1;
                }
            }
        }
    }
    return 0;
}
