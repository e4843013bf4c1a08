/* float32 -> int8/int16 quantization on a core with a single-precision FPU
 * and the DSP extension (Cortex-M33, M7, M4), bit-exact to the reference
 * in ptec_nn_quantize.c. VCVTR rounds x * (1/scale) to an integer in the
 * FPSCR's mode (round to nearest, ties to even: nearbyintf) in one
 * instruction, saturating at the int32 range and giving 0 for NaN, which
 * is what the reference's explicit checks compute. The zero point is then
 * added with saturation: with |zero_point| < 2^24, an input at or beyond
 * +-2^30 still lands beyond every int16 bound, as in the reference. When
 * quant_min and quant_max are the type's own range a single SSAT clamps. */
#include "ptec_nn_variants.h"

#if defined(PTEC_NN_QUANTIZE_FPU)
#include <arm_acle.h>

static inline int32_t round_saturate(float x, float inverse_scale)
{
    float v = x * inverse_scale;
    int32_t q;
    __asm__("vcvtr.s32.f32 %1, %1\n\tvmov %0, %1" : "=r"(q), "+t"(v));
    return q;
}

#define PTEC_NN_DEFINE_QUANTIZE_FPU(name, output_type, bits, type_min, type_max)                     \
    void name(const float *input, output_type *output, uint32_t count, const ptec_nn_quantize_params *p) \
    {                                                                                                \
        const float inverse_scale = 1.0f / p->scale;                                                 \
        const int32_t zp = p->zero_point;                                                            \
        if (p->quant_min == (type_min) && p->quant_max == (type_max)) {                              \
            for (uint32_t i = 0; i < count; ++i) {                                                   \
                output[i] = (output_type)__ssat(__qadd(round_saturate(input[i], inverse_scale), zp), bits); \
            }                                                                                        \
            return;                                                                                  \
        }                                                                                            \
        const int32_t lo = p->quant_min;                                                             \
        const int32_t hi = p->quant_max;                                                             \
        for (uint32_t i = 0; i < count; ++i) {                                                       \
            int32_t q = __qadd(round_saturate(input[i], inverse_scale), zp);                         \
            q = q < lo ? lo : q;                                                                     \
            output[i] = (output_type)(q > hi ? hi : q);                                              \
        }                                                                                            \
    }

PTEC_NN_DEFINE_QUANTIZE_FPU(ptec_nn_quantize_f32_s8_fpu, int8_t, 8, INT8_MIN, INT8_MAX)
PTEC_NN_DEFINE_QUANTIZE_FPU(ptec_nn_quantize_f32_s16_fpu, int16_t, 16, INT16_MIN, INT16_MAX)

#else
typedef int ptec_nn_quantize_fpu_unused; /* a translation unit must not be empty */
#endif
