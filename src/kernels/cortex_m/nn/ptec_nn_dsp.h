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

#endif
