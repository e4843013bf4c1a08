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

#endif
