/* Helium (MVE) forms of the fixed-point primitives of ptec_nn_math.h, four
 * int32 lanes at a time, bit-exact with the scalar ones, and the four-row
 * dot product of the fully connected layer and the matrix-multiply
 * convolution. Only included by
 * the *_mve.c variants, which are compiled when PTEC_NN_MVE is set. */
#ifndef PTEC_NN_MVE_H
#define PTEC_NN_MVE_H

#include <arm_mve.h>
#include <stddef.h>
#include <stdint.h>

/* ptec_nn_requantize on four lanes, each with its own multiplier and shift.
 *
 * VQRDMULH computes (2ab + 2^31) >> 32 = (ab + 2^30) >> 31, the scalar
 * high multiply, except that it saturates the one product that leaves
 * int32, (-2^31)^2, where the reference wraps to -2^31. Callers that may
 * meet a multiplier of -2^31 (never produced by quantize_multiplier, but
 * legal) use ptec_nn_requantize_any_mve, which puts that lane back.
 *
 * VRSHL by a negative amount shifts right rounding ties towards +infinity;
 * the reference rounds them away from zero, so negative values are first
 * moved down by one (saturating: -2^31 is never a tie), in the lanes that
 * shift right only (shift >> 31 is all ones there). No predicates: GCC 12
 * spends three instructions on each one it materializes. */
static inline int32x4_t ptec_nn_requantize_mve(int32x4_t acc, int32x4_t multiplier, int32x4_t shift)
{
    const int32x4_t zero = vdupq_n_s32(0);
    const int32x4_t shifted = vshlq_s32(acc, vmaxq_s32(shift, zero)); /* wraps, as the reference */
    int32x4_t high = vqrdmulhq_s32(shifted, multiplier);
    high = vqaddq_s32(high, vandq_s32(vshrq_n_s32(high, 31), vshrq_n_s32(shift, 31)));
    return vrshlq_s32(high, vminq_s32(shift, zero));
}

static inline int32x4_t ptec_nn_requantize_any_mve(int32x4_t acc, int32x4_t multiplier, int32x4_t shift)
{
    const int32x4_t zero = vdupq_n_s32(0);
    const int32x4_t shifted = vshlq_s32(acc, vmaxq_s32(shift, zero));
    int32x4_t high = vqrdmulhq_s32(shifted, multiplier);
    /* Both -2^31. (Written with a select: GCC 12 crashes on the shorter
     * chain of two compares that fold to the same test.) */
    const int32x4_t min = vdupq_n_s32(INT32_MIN);
    const mve_pred16_t wrapped = vcmpeqq_s32(vpselq_s32(shifted, zero, vcmpeqq_s32(multiplier, min)), min);
    high = vpselq_s32(min, high, wrapped);
    high = vqaddq_s32(high, vandq_s32(vshrq_n_s32(high, 31), vshrq_n_s32(shift, 31)));
    return vrshlq_s32(high, vminq_s32(shift, zero));
}

/* The exact form where a multiplier may be -2^31 (exact_min), the short
 * one otherwise: exact_min is loop-invariant in the elementwise kernels. */
static inline int32x4_t ptec_nn_requantize_pick_mve(int32x4_t acc, int32x4_t multiplier, int32x4_t shift,
                                                    int exact_min)
{
    return exact_min ? ptec_nn_requantize_any_mve(acc, multiplier, shift)
                     : ptec_nn_requantize_mve(acc, multiplier, shift);
}

/* ptec_nn_requantize on four lanes whose shifts are all <= -1 (a right
 * shift r >= 1) and whose multipliers are not -2^31, in four
 * instructions; ptec_nn_requant_short_ok_mve checks a layer's pairs.
 * With no left shift and no saturating product (only -2^31 * -2^31
 * saturates), VQRDMULH is the reference's high product h exactly, and
 * |h| < 2^31 (h >= -2^31 + 1). VRSHL by -r gives floor((h' + 2^(r-1)) /
 * 2^r), which is h / 2^r rounded half away from zero for h' = h >= 0 and,
 * for h < 0, for h' = h - 1: floor((h + 2^(r-1) - 1) / 2^r) =
 * ceil((h - 2^(r-1)) / 2^r). h + (h >> 31) is that h' and cannot wrap.
 * The result has |q| <= 2^30, so adding the output offset cannot wrap
 * either. */
static inline int32x4_t ptec_nn_requantize_short_mve(int32x4_t acc, int32x4_t multiplier, int32x4_t shift)
{
    int32x4_t high = vqrdmulhq_s32(acc, multiplier);
    high = vaddq_s32(high, vshrq_n_s32(high, 31));
    return vrshlq_s32(high, shift);
}

static inline int ptec_nn_requant_short_ok_mve(const int32_t *multipliers, const int32_t *shifts, int32_t count)
{
    for (int32_t i = 0; i < count; ++i) {
        if (shifts[i] > -1 || multipliers[i] == INT32_MIN) {
            return 0;
        }
    }
    return 1;
}

/* ptec_nn_output_stage on four lanes: the saturating add cannot wrap past
 * the clamp, which is what the reference's clamp-before-add achieves. */
static inline int32x4_t ptec_nn_output_stage_mve(int32x4_t v, int32_t offset, int32_t lo, int32_t hi)
{
    v = vqaddq_n_s32(v, offset);
    return vminq_s32(vmaxq_s32(v, vdupq_n_s32(lo)), vdupq_n_s32(hi));
}

/* Packed 4-bit elements e .. e + count - 1 (ptec_nn_s4.h, count 1 to 16)
 * as int8 lanes 0 .. count - 1; the other lanes are 0 and their bytes are
 * not read. Even lanes (elements e, e+2, ...) are one nibble of bytes
 * p[0..7], odd lanes the other nibble of p[phase .. phase+7], where p is
 * the byte of element e and phase says whether e is a high nibble. Each
 * half is loaded as sign-extended int16 lanes, its nibble moved to the top
 * (left by 12 for a low nibble, by 8 for a high one) and shifted back down
 * arithmetically; VMOVNB and VMOVNT then interleave them as bytes. */
static inline int8x16_t ptec_nn_load_s4x16_mve(const int8_t *packed, size_t e, uint32_t count)
{
    const int8_t *p = packed + (e >> 1);
    const int32_t phase = (int32_t)(e & 1u);
    const int16x8_t even_bytes = vldrbq_z_s16(p, vctp16q((count + 1u) >> 1));
    const int16x8_t odd_bytes = vldrbq_z_s16(p + phase, vctp16q(count >> 1));
    const int16x8_t even = vshrq_n_s16(vshlq_r_s16(even_bytes, phase ? 8 : 12), 12);
    const int16x8_t odd = vshrq_n_s16(vshlq_r_s16(odd_bytes, phase ? 12 : 8), 12);
    return vmovntq_s16(vmovnbq_s16(vdupq_n_s8(0), even), odd);
}

/* sums[r] += the dot product (wrapping) of the n bytes at x with row wr:
 * each block of 16 bytes of x is loaded once for four VMLADAVA, and n % 16
 * ends with one predicated block (inactive lanes load 0, nothing is read
 * past n). */
static inline void ptec_nn_dot4_rows_mve(const int8_t *x, const int8_t *w0, const int8_t *w1, const int8_t *w2,
                                         const int8_t *w3, size_t n, uint32_t sums[4])
{
    int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (size_t b = n >> 4; b > 0; --b) {
        const int8x16_t xv = vld1q_s8(x);
        s0 = vmladavaq_s8(s0, xv, vld1q_s8(w0));
        s1 = vmladavaq_s8(s1, xv, vld1q_s8(w1));
        s2 = vmladavaq_s8(s2, xv, vld1q_s8(w2));
        s3 = vmladavaq_s8(s3, xv, vld1q_s8(w3));
        x += 16;
        w0 += 16;
        w1 += 16;
        w2 += 16;
        w3 += 16;
    }
    if ((n & 15) != 0) {
        const mve_pred16_t tail = vctp8q((uint32_t)(n & 15));
        const int8x16_t xv = vldrbq_z_s8(x, tail);
        s0 = vmladavaq_s8(s0, xv, vldrbq_z_s8(w0, tail));
        s1 = vmladavaq_s8(s1, xv, vldrbq_z_s8(w1, tail));
        s2 = vmladavaq_s8(s2, xv, vldrbq_z_s8(w2, tail));
        s3 = vmladavaq_s8(s3, xv, vldrbq_z_s8(w3, tail));
    }
    sums[0] += (uint32_t)s0;
    sums[1] += (uint32_t)s1;
    sums[2] += (uint32_t)s2;
    sums[3] += (uint32_t)s3;
}

#endif
