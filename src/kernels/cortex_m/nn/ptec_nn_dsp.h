/* Helpers of the DSP-extension variants (Cortex-M33 and other Armv8-M
 * Mainline cores with __ARM_FEATURE_DSP): ACLE intrinsics plus the one
 * form GCC's arm_acle.h lacks. Only included by the *_dsp.c files. */
#ifndef PTEC_NN_DSP_H
#define PTEC_NN_DSP_H

#include <arm_acle.h>
#include <stdint.h>
#include <string.h>

/* Four int8 values as one word; int8 data has no alignment, and these
 * cores load unaligned words in one LDR (memcpy compiles to it). */
static inline uint32_t ptec_nn_load4(const int8_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* Bytes 1 and 3 sign-extended into the two halves (SXTB16 ... ROR #8);
 * __sxtb16 gives bytes 0 and 2. */
static inline uint32_t ptec_nn_sxtb16_odd(uint32_t v)
{
    uint32_t r;
    __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(v));
    return r;
}

static inline uint32_t ptec_nn_sxtb16_even(uint32_t v)
{
    return (uint32_t)__sxtb16((int32_t)v);
}

/* acc's halves plus bytes 1 and 3 of v, sign-extended (SXTAB16 ... ROR
 * #8); __sxtab16 adds bytes 0 and 2. */
static inline uint32_t ptec_nn_sxtab16_odd(uint32_t acc, uint32_t v)
{
    uint32_t r;
    __asm__("sxtab16 %0, %1, %2, ror #8" : "=r"(r) : "r"(acc), "r"(v));
    return r;
}

static inline uint32_t ptec_nn_sxtab16_even(uint32_t acc, uint32_t v)
{
    return (uint32_t)__sxtab16((int32_t)acc, (int32_t)v);
}

/* The low halves of a and b as one word, (a.lo, b.lo) (PKHBT ... LSL
 * #16), and their high halves, (a.hi, b.hi) (PKHTB b, a, ASR #16): two
 * words of int16 pairs (x0, x1), (x2, x3) regrouped as (x0, x2), (x1, x3),
 * the order SXTB16 and SXTB16 ROR #8 widen int8 weights in. GCC 12 spends
 * two instructions on each when written in C. */
static inline uint32_t ptec_nn_pack_low16(uint32_t a, uint32_t b)
{
    uint32_t r;
    __asm__("pkhbt %0, %1, %2, lsl #16" : "=r"(r) : "r"(a), "r"(b));
    return r;
}

static inline uint32_t ptec_nn_pack_high16(uint32_t a, uint32_t b)
{
    uint32_t r;
    __asm__("pkhtb %0, %1, %2, asr #16" : "=r"(r) : "r"(b), "r"(a));
    return r;
}

/* Packed 4-bit elements e .. e+3 (ptec_nn_s4.h) as the int16 pairs that
 * SXTB16 and SXTB16 ROR #8 make of four int8 weights: *even = (w0, w2),
 * *odd = (w1, w3), each sign-extended. The four nibbles are first brought
 * to bits 0-15 in element order (a start in the middle of a byte reads a
 * third byte and shifts by 4), then bytes 0 and 1 are moved to bytes 0
 * and 2. A byte holding (hi, lo) sign-extends to a halfword whose bits
 * 4-11 are hi as an int8; shifted left by 4 first, its bits 4-11 are lo.
 * Rotating by 4 brings those bits to bytes 0 and 2 for SXTB16 (there is no
 * SXTB16 ROR #4). Reads only the bytes that hold the four elements. */
static inline void ptec_nn_load_s4x4_dsp(const int8_t *packed, size_t e, uint32_t *even, uint32_t *odd)
{
    const uint8_t *p = (const uint8_t *)packed + (e >> 1);
    const uint32_t phase = (uint32_t)(e & 1u);
    /* With phase 0 the "third byte" is p[0] again, and lands above bit 15. */
    const uint32_t bits = ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2u * phase] << 16) >> (4u * phase);
    const uint32_t spread = (bits & 0xFFu) | (bits & 0xFF00u) << 8;
    const uint32_t lo = ptec_nn_sxtb16_even(spread << 4);
    const uint32_t hi = ptec_nn_sxtb16_even(spread);
    *even = ptec_nn_sxtb16_even(lo >> 4 | lo << 28);
    *odd = ptec_nn_sxtb16_even(hi >> 4 | hi << 28);
}

/* One channel's requantization, split so that a kernel computes it once
 * and applies it to every pixel (ptec_nn_requantize_dsp). */
typedef struct ptec_nn_requant_dsp {
    int32_t multiplier;
    uint32_t left;      /* max(shift, 0) */
    uint32_t right;     /* max(-shift, 0) */
    uint32_t mask;      /* 2^right - 1 */
    int32_t threshold;  /* mask / 2 */
} ptec_nn_requant_dsp;

static inline ptec_nn_requant_dsp ptec_nn_requant_dsp_make(int32_t multiplier, int32_t shift)
{
    ptec_nn_requant_dsp r;
    r.multiplier = multiplier;
    r.left = shift > 0 ? (uint32_t)shift : 0u;
    r.right = shift > 0 ? 0u : (uint32_t)-shift;
    r.mask = (1u << r.right) - 1u;
    r.threshold = (int32_t)(r.mask >> 1);
    return r;
}

/* ptec_nn_requantize, without branches: SMLAL with 2^30 preloaded gives
 * the rounded 64-bit product, and the round half away from zero of the
 * final shift compares the dropped bits with mask/2 (+1 for negative
 * values), the reference's own formula. */
static inline int32_t ptec_nn_requantize_dsp(int32_t v, const ptec_nn_requant_dsp *r)
{
    const int32_t shifted = (int32_t)((uint32_t)v << r->left);
    const int64_t product = (int64_t)shifted * r->multiplier + ((int64_t)1 << 30);
    const int32_t high = (int32_t)(product >> 31);
    const int32_t threshold = r->threshold + (int32_t)((uint32_t)high >> 31);
    return (high >> r->right) + (((int32_t)((uint32_t)high & r->mask)) > threshold ? 1 : 0);
}

/* ptec_nn_output_stage with a saturating add (QADD) in place of the
 * clamp-before-add: the same result for every v. */
static inline int8_t ptec_nn_output_stage_dsp(int32_t v, int32_t offset, int32_t lo, int32_t hi)
{
    v = __qadd(v, offset);
    v = v < lo ? lo : v;
    return (int8_t)(v > hi ? hi : v);
}

/* ptec_nn_requantize for a right shift r >= 2 (shift <= -2) and a
 * multiplier other than -2^31, in one SMLAL and four single-cycle
 * instructions. With P = v * multiplier (exact, 64 bits), the reference's
 * high = floor((P + 2^30) / 2^31) rounded by 2^r half away from zero is
 *   floor((high + 2^(r-1) - neg) / 2^r),  neg = high < 0,
 * and since floor(floor(a / 2^31) / 2^r) = floor(a / 2^(31+r)), that is
 *   floor((P + 2^30 + 2^31 * (2^(r-1) - neg)) / 2^(31+r)),
 * the high word of a 64-bit sum shifted right by r - 1. neg may be taken
 * as "v and the multiplier have opposite signs" (P < 0): where that
 * differs from high < 0, high is 0 and both give 0. So the SMLAL starts
 * from hi = 2^(r-2) - neg and lo = 2^30 + neg * 2^31, which is v ^ m with
 * its low 31 bits replaced (BFI). -2^31 * -2^31 is the one product the
 * reference wraps; r < 2 keeps the general form. */
typedef struct ptec_nn_requant_fast {
    int32_t multiplier;
    int32_t high;  /* 2^(r-2) */
    uint32_t shift; /* r - 1 */
} ptec_nn_requant_fast;

static inline int ptec_nn_requant_fast_ok(const int32_t *multipliers, const int32_t *shifts, int32_t count)
{
    for (int32_t i = 0; i < count; ++i) {
        if (shifts[i] > -2 || multipliers[i] == INT32_MIN) {
            return 0;
        }
    }
    return 1;
}

/* The fast form with the output offset folded in (the assembly of
 * ptec_nn_rows_dot2_q15_dsp.c): with s = r - 1, adding offset * 2^s to the
 * SMLAL's starting high word adds exactly offset to hi >> s (a multiple of
 * 2^s moves a floor by its quotient), and the starting high word is then
 * (2 * offset + 1) * 2^(s-1), one LSL and one ASR of 2 * offset + 1. That
 * needs the high word to stay in int32: |P| <= 2^31 * (2^31 - 1) puts its
 * share below 2^30, the low word's and neg's at most 1 each, and for an
 * offset in [-128, 127] the constant is at most 255 * 2^(s-1) in size,
 * below 2^30 - 2^22 for s <= 23 (r <= 24, shift >= -24). At s = 24 it
 * reaches 2^31 - 2^23, and a product of about 2^62 would wrap. */
static inline int ptec_nn_requant_fold_ok(const int32_t *shifts, int32_t count)
{
    for (int32_t i = 0; i < count; ++i) {
        if (shifts[i] < -24) {
            return 0;
        }
    }
    return 1;
}

static inline ptec_nn_requant_fast ptec_nn_requant_fast_make(int32_t multiplier, int32_t shift)
{
    ptec_nn_requant_fast r;
    r.multiplier = multiplier;
    r.high = (int32_t)(0x40000000u >> (uint32_t)(shift + 32)); /* 2^(-shift-2), one LSR */
    r.shift = (uint32_t)(-shift - 1);
    return r;
}

static inline int32_t ptec_nn_requantize_fast(int32_t v, int32_t multiplier, int32_t high, uint32_t shift)
{
    uint32_t lo = (uint32_t)v ^ (uint32_t)multiplier;
    int32_t hi = high + ((int32_t)lo >> 31);
    __asm__("bfi %0, %1, #0, #31" : "+r"(lo) : "r"(0x40000000u));
    __asm__("smlal %0, %1, %2, %3" : "+r"(lo), "+r"(hi) : "r"(v), "r"(multiplier));
    return hi >> shift;
}

/* The int8 output of a requantized value |q| < 2^30 (the fast form's
 * range): offset added without overflow, then clamped; SSAT alone when
 * the activation is the whole int8 range. */
static inline int8_t ptec_nn_output_small(int32_t q, int32_t offset, int32_t lo, int32_t hi, int full_range)
{
    q += offset;
    if (full_range) {
        return (int8_t)__ssat(q, 8);
    }
    q = q < lo ? lo : q;
    return (int8_t)(q > hi ? hi : q);
}

#endif
