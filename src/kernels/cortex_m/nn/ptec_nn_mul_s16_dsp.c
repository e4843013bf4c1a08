/* DSP int16 multiplication (Cortex-M33, M7, M4): two elements per step.
 * One word load brings a pair of each operand; SMULBB and SMULTT multiply
 * the bottom and the top halves into int32 (at most 2^30 in magnitude, the
 * reference's exact product), which are requantized and clamped with the
 * reference's own scalar functions and stored as one word. An odd element
 * at the end of a broadcast period is done alone. Every activation range
 * is handled the reference's way (clamp in int32, then to int16). */
#include "ptec_nn_variants.h"

#if defined(PTEC_NN_DSP)
#include "ptec_nn_dsp.h"
#include "ptec_nn_math.h"

static inline uint32_t load2_s16(const int16_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* GCC 12's arm_acle.h has SMLABB / SMLATT but not the plain multiplies. */
static inline int32_t smulbb(uint32_t a, uint32_t b)
{
    int32_t r;
    __asm__("smulbb %0, %1, %2" : "=r"(r) : "r"(a), "r"(b));
    return r;
}

static inline int32_t smultt(uint32_t a, uint32_t b)
{
    int32_t r;
    __asm__("smultt %0, %1, %2" : "=r"(r) : "r"(a), "r"(b));
    return r;
}

/* Out of line (the code fits the i.MX93 M33 TCM). */
static __attribute__((noinline)) int16_t out_s16(int32_t product, const ptec_nn_mul_s16_params *p)
{
    return (int16_t)ptec_nn_clamp(ptec_nn_requantize(product, p->output_quant.multiplier, p->output_quant.shift),
                                  p->activation.min, p->activation.max);
}

ptec_status ptec_nn_mul_s16_dsp(const int16_t *large, const int16_t *small, uint32_t count, uint32_t small_count,
                                int16_t *output, const ptec_nn_mul_s16_params *params)
{
    const ptec_nn_mul_s16_params p = *params;
    /* Element-wise (one period) or broadcast: the periods one after another. */
    for (uint32_t base = 0; base < count; base += small_count) {
        const int16_t *a = large + base;
        const int16_t *b = small;
        int16_t *y = output + base;
        for (uint32_t q = small_count >> 1; q > 0; --q) {
            const uint32_t va = load2_s16(a), vb = load2_s16(b);
            const int16_t lo = out_s16(smulbb(va, vb), &p);
            const int16_t hi = out_s16(smultt(va, vb), &p);
            const uint32_t packed = (uint32_t)(uint16_t)lo | ((uint32_t)(uint16_t)hi << 16);
            memcpy(y, &packed, sizeof packed);
            a += 2;
            b += 2;
            y += 2;
        }
        if (small_count & 1u) {
            *y = out_s16((int32_t)*a * (int32_t)*b, &p);
        }
    }
    return PTEC_OK;
}

#else
typedef int ptec_nn_mul_s16_dsp_unused; /* a translation unit must not be empty */
#endif
