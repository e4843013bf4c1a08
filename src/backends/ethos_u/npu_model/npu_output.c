/* The output stage (spec §5.1): scale records, R(v * M, s) under the three
 * round modes, the OFM zero point, the clamps and the LUT activation. */
#include "npu_internal.h"

#define SCALE_RECORD_BYTES 10u

int npu_scale_record(ptec_npu_model *m, const npu_op *op, uint32_t channel, npu_scale *out)
{
    uint64_t offset = (uint64_t)channel * SCALE_RECORD_BYTES;
    if (offset + SCALE_RECORD_BYTES > op->scale_length) {
        return npu_fault_bus(m, op->scale_region, PTEC_NPU_CHANNEL_SCALES,
                             "scale record beyond SCALE_LENGTH");
    }
    uint8_t *p;
    if (npu_region_span(m, op->scale_region, op->scale_base + offset, SCALE_RECORD_BYTES,
                        PTEC_NPU_CHANNEL_SCALES, 0, &p) != 0) {
        return -1;
    }
    uint64_t bias = 0;
    for (uint32_t i = 0; i < 5u; i++) {
        bias |= (uint64_t)p[i] << (8u * i);
    }
    /* sign-extend 40 bits */
    out->bias = (bias & (1ull << 39)) ? (int64_t)(bias | ~((1ull << 40) - 1u)) : (int64_t)bias;
    out->scale = (uint32_t)p[5] | (uint32_t)p[6] << 8 | (uint32_t)p[7] << 16 | (uint32_t)p[8] << 24;
    out->shift = p[9] & 0x3Fu;
    return 0;
}

int npu_output_scale(ptec_npu_model *m, const npu_op *op, uint32_t channel, npu_scale *out)
{
    if (op->ofm_scale_mode == 1u) {
        out->bias = 0;
        out->scale = op->ofm_scale;
        out->shift = op->ofm_shift;
        return 0;
    }
    return npu_scale_record(m, op, channel, out);
}

/* A signed 128-bit value, two's complement, for the 72-bit product. */
typedef struct {
    uint64_t hi, lo;
} s128;

static s128 mul_s64_u32(int64_t v, uint32_t scale)
{
    uint64_t mag = v < 0 ? 0u - (uint64_t)v : (uint64_t)v;
    uint64_t p0 = (mag & 0xFFFFFFFFu) * scale;
    uint64_t p1 = (mag >> 32) * scale;
    s128 r;
    r.lo = p0 + (p1 << 32);
    r.hi = (p1 >> 32) + (r.lo < p0 ? 1u : 0u);
    if (v < 0) {
        r.lo = ~r.lo + 1u;
        r.hi = ~r.hi + (r.lo == 0u ? 1u : 0u);
    }
    return r;
}

static s128 add_s64(s128 a, int64_t b)
{
    uint64_t lo = a.lo + (uint64_t)b;
    uint64_t carry = lo < a.lo ? 1u : 0u;
    a.hi += (b < 0 ? UINT64_MAX : 0u) + carry;
    a.lo = lo;
    return a;
}

/* Arithmetic (floor) shift right by 0..63. */
static s128 shr(s128 a, uint32_t s)
{
    if (s == 0u) {
        return a;
    }
    uint64_t sign = a.hi >> 63;
    a.lo = (a.lo >> s) | (a.hi << (64u - s));
    a.hi = (a.hi >> s) | (sign ? ~(UINT64_MAX >> s) : 0u);
    return a;
}

static int64_t saturate_s64(s128 a)
{
    if (a.hi == 0u && a.lo <= (uint64_t)INT64_MAX) {
        return (int64_t)a.lo;
    }
    if (a.hi == UINT64_MAX && a.lo > (uint64_t)INT64_MAX) {
        return -(int64_t)(~a.lo) - 1;
    }
    return (a.hi >> 63) ? INT64_MIN : INT64_MAX;
}

int64_t npu_round_scale(int64_t v, uint32_t scale, uint32_t shift, uint32_t round_mode)
{
    s128 p = mul_s64_u32(v, scale);
    int negative = (p.hi >> 63) != 0u;
    int64_t nudge = 0;
    if (shift > 0u) {
        if (round_mode == NPU_ROUND_TRUNCATE) {
            nudge = negative ? (int64_t)((1ull << shift) - 1u) : 0;
        } else {
            nudge = (int64_t)(1ull << (shift - 1u));
            if (round_mode == NPU_ROUND_DBL && shift > 31u) {
                nudge += negative ? -(int64_t)(1 << 30) : (int64_t)(1 << 30);
            }
        }
    }
    return saturate_s64(shr(add_s64(p, nudge), shift));
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* The value range of a clip-range code (ACTIVATION [14:12]) or, for 0, of the
 * OFM type: 0 or -1 for a reserved code. */
static int clip_range(const npu_op *op, int64_t *lo, int64_t *hi)
{
    const ptec_npu_fmap *ofm = &op->ofm;
    switch (op->activation_clip) {
    case 0u:
        if (ofm->elem_bytes == 4u) {
            *lo = INT32_MIN;
            *hi = INT32_MAX;
        } else {
            uint32_t bits = 8u * ofm->elem_bytes;
            *lo = ofm->is_signed ? -(1ll << (bits - 1u)) : 0;
            *hi = ofm->is_signed ? (1ll << (bits - 1u)) - 1 : (1ll << bits) - 1;
        }
        return 0;
    case 2u:
        *lo = 0;
        *hi = 255;
        return 0;
    case 3u:
        *lo = -128;
        *hi = 127;
        return 0;
    case 5u:
        *lo = -32768;
        *hi = 32767;
        return 0;
    default:
        return -1;
    }
}

static int64_t add_sat(int64_t a, int64_t b)
{
    if (b > 0 && a > INT64_MAX - b) {
        return INT64_MAX;
    }
    if (b < 0 && a < INT64_MIN - b) {
        return INT64_MIN;
    }
    return a + b;
}

int npu_output_store(ptec_npu_model *m, const npu_op *op, uint32_t y, uint32_t x, uint32_t c, int64_t rounded)
{
    const ptec_npu_fmap *ofm = &op->ofm;
    int64_t lo, hi;
    if (clip_range(op, &lo, &hi) != 0) {
        return npu_fault_parse(m, "ACTIVATION clip range is reserved");
    }
    int32_t value;
    if (op->activation >= 16u && op->activation <= 23u) {
        /* LUT: the pre-LUT value is 8-bit (spec §5.3); the OFM zero point
         * applies even on an int32 OFM (the softmax exp table) */
        if (ofm->elem_bytes == 2u || (op->activation_clip != 3u && !(op->activation_clip == 0u && ofm->is_signed))) {
            return npu_fault_parse(m, "LUT activation other than int8-indexed is not modelled (no oracle)");
        }
        int64_t pre = add_sat(rounded, ofm->zero_point);
        if (ofm->elem_bytes != 4u) {
            pre = clamp64(pre, op->activation_min, op->activation_max);
        }
        pre = clamp64(pre, -128, 127);
        if (npu_lut_lookup(m, op, (int32_t)pre, &value) != 0) {
            return -1;
        }
    } else if (op->activation == 0u) {
        if (ofm->elem_bytes == 4u) {
            /* 32-bit OFM: no zero point, no clamp (spec §5.1, I); saturate */
            value = (int32_t)clamp64(rounded, INT32_MIN, INT32_MAX);
        } else {
            int64_t v = add_sat(rounded, ofm->zero_point);
            v = clamp64(v, op->activation_min, op->activation_max);
            v = clamp64(v, lo, hi);
            int64_t tlo, thi;
            uint32_t bits = 8u * ofm->elem_bytes;
            tlo = ofm->is_signed ? -(1ll << (bits - 1u)) : 0;
            thi = ofm->is_signed ? (1ll << (bits - 1u)) - 1 : (1ll << bits) - 1;
            value = (int32_t)clamp64(v, tlo, thi);
        }
    } else if (op->activation == 3u || op->activation == 4u) {
        return npu_fault_parse(m, "TANH/SIGMOID activation is not modelled (no oracle)");
    } else {
        return npu_fault_parse(m, "reserved ACTIVATION function");
    }
    return npu_fmap_write(m, ofm, y, x, c, value);
}
