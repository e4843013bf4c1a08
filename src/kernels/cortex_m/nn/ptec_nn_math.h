/* Fixed-point primitives shared by the int8 kernels, bit-exact with
 * CMSIS-NN's default (scalar) build: cortex-m-ops.md §1.6 and §3.15.
 *
 * Where CMSIS-NN relies on int32 wrap-around (accumulators, shifted
 * values), these helpers wrap explicitly through uint32_t so that the same
 * bits come out without undefined behaviour. Casting an out-of-range
 * uint32_t/int64_t to int32_t is implementation-defined in C11; GCC and
 * Clang define it as reduction modulo 2^32, which is what we want. */
#ifndef PTEC_NN_MATH_H
#define PTEC_NN_MATH_H

#include <stdint.h>

static inline int32_t ptec_nn_wrap_add(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a + (uint32_t)b);
}

/* a * 2^shift modulo 2^32, shift in [0, 31]. */
static inline int32_t ptec_nn_wrap_shl(int32_t a, int32_t shift)
{
    return (int32_t)((uint32_t)a << shift);
}

static inline int32_t ptec_nn_clamp(int32_t v, int32_t lo, int32_t hi)
{
    return v < lo ? lo : (v > hi ? hi : v);
}

/* Leading zero bits of v (32 for 0). */
static inline int32_t ptec_nn_leading_zeros(uint32_t v)
{
    int32_t n = 0;
    for (uint32_t bit = 0x80000000u; bit != 0 && (v & bit) == 0; bit >>= 1) {
        ++n;
    }
    return n;
}

/* sum / count, ties away from zero (the average pool's quotient), count > 0. */
static inline int32_t ptec_nn_div_round(int32_t sum, int32_t count)
{
    return (sum > 0 ? sum + count / 2 : sum - count / 2) / count;
}

/* The same quotient for the int16 average pool, whose sums (at most 2^16
 * positions of int16) fit in int32 but whose nudge by count / 2 may not:
 * that step is done in 64 bits. count > 0. */
static inline int32_t ptec_nn_div_round_wide(int32_t sum, int32_t count)
{
    const int64_t nudged = sum > 0 ? (int64_t)sum + count / 2 : (int64_t)sum - count / 2;
    return (int32_t)(nudged / count);
}

/* x / 2^exponent, ties away from zero. exponent in [0, 63]; CMSIS-NN only
 * ever uses [0, 31], larger values come from softmax on long rows. */
static inline int32_t ptec_nn_round_shift(int32_t x, int32_t exponent)
{
    if (exponent <= 0) {
        return x;
    }
    if (exponent > 31) {
        /* |x| <= 2^31 <= 2^(exponent-1): only x == INT32_MIN at exactly
         * exponent 32 is a tie, which rounds away from zero. */
        return (x == INT32_MIN && exponent == 32) ? -1 : 0;
    }
    const int32_t mask = (int32_t)((1u << exponent) - 1u);
    const int32_t remainder = x & mask;
    const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

/* (a*b + 2^30) >> 31 without saturation: ties towards +infinity. Only
 * INT32_MIN * INT32_MIN leaves int32, and wraps as on the target. */
static inline int32_t ptec_nn_doubling_high_mult_no_sat(int32_t a, int32_t b)
{
    const int64_t product = (int64_t)a * (int64_t)b + ((int64_t)1 << 30);
    return (int32_t)(product >> 31);
}

/* v * multiplier * 2^(shift-31), shift in [-31, 31] (§1.6). The final
 * round_shift by `right` is written without branches, in 32 bits (cheap on
 * Cortex-M): with right == 0 the mask is 0 and nothing is added. */
static inline int32_t ptec_nn_requantize(int32_t v, int32_t multiplier, int32_t shift)
{
    const int32_t left = shift > 0 ? shift : 0;
    const int32_t right = shift > 0 ? 0 : -shift;
    const int32_t high = ptec_nn_doubling_high_mult_no_sat(ptec_nn_wrap_shl(v, left), multiplier);
    const int32_t mask = (int32_t)((1u << right) - 1u);
    const int32_t threshold = (mask >> 1) + (high < 0 ? 1 : 0);
    return (high >> right) + ((high & mask) > threshold ? 1 : 0);
}

/* clamp(v + offset, lo, hi) for a requantized v of any size: the clamp is
 * done before the addition so that it cannot overflow (offset, lo and hi
 * are small by the wrappers' checks). */
static inline int32_t ptec_nn_output_stage(int32_t v, int32_t offset, int32_t lo, int32_t hi)
{
    if (v > hi - offset) {
        return hi;
    }
    if (v < lo - offset) {
        return lo;
    }
    return v + offset;
}

/* The int8 output of an accumulator: requantized, then offset and clamped
 * (the last step of every conv-family and element-wise kernel). */
static inline int8_t ptec_nn_requantize_s8(int32_t v, int32_t multiplier, int32_t shift, int32_t offset, int32_t lo,
                                           int32_t hi)
{
    return (int8_t)ptec_nn_output_stage(ptec_nn_requantize(v, multiplier, shift), offset, lo, hi);
}

/* Saturating doubling high multiply, ties away from zero (gemmlowp's
 * SaturatingRoundingDoublingHighMul, used by softmax). */
static inline int32_t ptec_nn_doubling_high_mult(int32_t a, int32_t b)
{
    if (a == INT32_MIN && b == INT32_MIN) {
        return INT32_MAX;
    }
    const int64_t product = (int64_t)a * (int64_t)b;
    const int64_t nudge = product >= 0 ? ((int64_t)1 << 30) : (1 - ((int64_t)1 << 30));
    return (int32_t)((product + nudge) / ((int64_t)1 << 31));
}

/* v * 2^exponent saturated to int32, exponent in [0, 30]. */
static inline int32_t ptec_nn_saturating_shl(int32_t v, int32_t exponent)
{
    const int32_t limit = (int32_t)((1u << (31 - exponent)) - 1u);
    if (v > limit) {
        return INT32_MAX;
    }
    if (v < -limit) {
        return INT32_MIN;
    }
    return ptec_nn_wrap_shl(v, exponent);
}

/* exp(v / 2^26) in Q0.31 for v <= 0 (Q5.26 input). */
static inline int32_t ptec_nn_exp_on_negative(int32_t v)
{
    if (v == 0) {
        return INT32_MAX;
    }
    static const int32_t exp_of_power[7] = {1672461947, 1302514674, 790015084, 290630308,
                                            39332535,   720401,     242};
    /* Split v = f - rem with f in [-1/4, 0) and rem a multiple of 1/4. */
    const int32_t f = (v & ((1 << 24) - 1)) - (1 << 24);
    const int32_t rem = f - v;
    /* exp(f) = e^(-1/8) * exp(x) with x = f + 1/8, by a Taylor series. */
    const int32_t x = f * 32 + (1 << 28);
    const int32_t x2 = ptec_nn_doubling_high_mult(x, x);
    const int32_t x3 = ptec_nn_doubling_high_mult(x2, x);
    const int32_t x4 = ptec_nn_doubling_high_mult(x2, x2);
    const int32_t x4_over_4 = ptec_nn_round_shift(x4, 2);
    const int32_t poly = ptec_nn_wrap_add(
        x, ptec_nn_round_shift(
               ptec_nn_wrap_add(ptec_nn_doubling_high_mult(ptec_nn_wrap_add(x4_over_4, x3), 715827883),
                                x2),
               1));
    int32_t result = ptec_nn_wrap_add(1895147668, ptec_nn_doubling_high_mult(1895147668, poly));
    for (int k = 0; k < 7; ++k) {
        if (rem & (1 << (24 + k))) {
            result = ptec_nn_doubling_high_mult(result, exp_of_power[k]);
        }
    }
    return result;
}

/* 1 / (1 + x) in Q0.31 for x = v / 2^31 in [0, 1): three Newton-Raphson
 * steps in Q2.29 from the usual 48/17 - 32/17 * d first guess. */
static inline int32_t ptec_nn_one_over_one_plus_x(int32_t v)
{
    const int64_t sum = (int64_t)v + INT32_MAX;
    const int32_t half_denominator = (int32_t)((sum + 1) / 2);
    int32_t y = ptec_nn_wrap_add(1515870810, ptec_nn_doubling_high_mult(half_denominator, -1010580540));
    for (int i = 0; i < 3; ++i) {
        const int32_t error = (int32_t)((uint32_t)(1 << 29) -
                                        (uint32_t)ptec_nn_doubling_high_mult(half_denominator, y));
        y = ptec_nn_wrap_add(y, ptec_nn_saturating_shl(ptec_nn_doubling_high_mult(y, error), 2));
    }
    return ptec_nn_saturating_shl(y, 1);
}

/* ---- 16-bit activations (docs/kernels.md, "16-bit activations") ---- */

/* CMSIS-NN's REDUCE_MULTIPLIER: the Q31 multiplier rounded to Q15, the
 * largest ones (>= 0x7FFF0000, which would round to 2^15) held at 0x7FFF.
 * Computed in 64 bits so that m + 2^15 cannot overflow. */
static inline int32_t ptec_nn_reduce_multiplier(int32_t multiplier)
{
    return multiplier < 0x7FFF0000 ? (int32_t)(((int64_t)multiplier + (1 << 15)) >> 16) : 0x7FFF;
}

/* The largest |value| the 64-bit requantization takes: beyond 2^48 the
 * product with a reduced multiplier (|r| <= 2^15) would leave int64. */
#define PTEC_NN_S64_LIMIT (((int64_t)1 << 48) - 1)

/* acc + bias, exact, saturated to +-PTEC_NN_S64_LIMIT. |acc| < 2^53 for any
 * int32 tap count (|x * w| <= 2^22), so clamping the bias to +-2^60 first
 * keeps the sum inside int64 without changing the saturated result. */
static inline int64_t ptec_nn_add_bias_s64(int64_t acc, const int64_t *bias, int32_t channel)
{
    const int64_t far = (int64_t)1 << 60;
    int64_t b = bias != NULL ? bias[channel] : 0;
    b = b > far ? far : (b < -far ? -far : b);
    const int64_t v = acc + b;
    return v > PTEC_NN_S64_LIMIT ? PTEC_NN_S64_LIMIT : (v < -PTEC_NN_S64_LIMIT ? -PTEC_NN_S64_LIMIT : v);
}

/* CMSIS-NN's arm_nn_requantize_s64: (v * reduced) >> (14 - shift), then one
 * more halving with +1, i.e. v * reduced / 2^(15 - shift) rounded half up.
 * Kept in int64 where CMSIS-NN narrows the first shift to int32: the two
 * agree whenever that int32 holds the value, and beyond it the int16 clamp
 * that follows gives the saturated value instead of a wrapped one.
 * |v| <= PTEC_NN_S64_LIMIT, shift in [-31, 7]. */
static inline int64_t ptec_nn_requantize_s64(int64_t v, int32_t reduced_multiplier, int32_t shift)
{
    const int64_t scaled = (v * reduced_multiplier) >> (14 - shift);
    return (scaled + 1) >> 1;
}

/* The int16 output of a 64-bit value: clamped to the activation range. */
static inline int16_t ptec_nn_clamp_s16(int64_t v, int32_t lo, int32_t hi)
{
    return (int16_t)(v < lo ? lo : (v > hi ? hi : v));
}

/* An int16-activation output channel: its exact sum plus the bias,
 * requantized in 64 bits and clamped to [lo, hi]. */
static inline int16_t ptec_nn_output_s16(int64_t acc, const int64_t *bias, int32_t channel,
                                         int32_t reduced_multiplier, int32_t shift, int32_t lo, int32_t hi)
{
    return ptec_nn_clamp_s16(ptec_nn_requantize_s64(ptec_nn_add_bias_s64(acc, bias, channel), reduced_multiplier, shift),
                             lo, hi);
}

/* Whether every shift lies in the 64-bit requantization's [-31, 7]. */
static inline int ptec_nn_shifts_s64_ok(const int32_t *shifts, int32_t count)
{
    for (int32_t i = 0; i < count; ++i) {
        if (shifts[i] < -31 || shifts[i] > 7) {
            return 0;
        }
    }
    return 1;
}

#endif
