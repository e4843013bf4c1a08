/* float32 -> int8/int16 quantization with Helium's floating point
 * (Cortex-M55), four elements per vector, bit-exact to the reference in
 * ptec_nn_quantize.c: x * (1/scale) per lane, VCVTN to int32 (round to
 * nearest, ties to even, saturating, NaN to 0), the zero point added with
 * saturation, the clamp, and a narrowing store; only a last partial
 * vector is predicated. The caller (ptec_nn_quantize.c) sends only what this path
 * computes exactly: |zero_point| < 2^24 (see ptec_nn_quantize_fpu.c) and
 * 1/scale <= 2^100, so that no input whose product could round away from 0
 * is subnormal (vector floating point may flush subnormals to zero). */
#include "ptec_nn_variants.h"

#if defined(PTEC_NN_QUANTIZE_MVE)
#include <arm_mve.h>

static inline int32x4_t quantize4(float32x4_t x, float inverse_scale, int32_t zp, int32x4_t lo, int32x4_t hi)
{
    int32x4_t q = vcvtnq_s32_f32(vmulq_n_f32(x, inverse_scale));
    q = vqaddq_n_s32(q, zp);
    return vminq_s32(vmaxq_s32(q, lo), hi);
}

/* Whole vectors unpredicated (the loop the core runs with LE), then one
 * predicated vector for the count % 4 rest. */
#define PTEC_NN_DEFINE_QUANTIZE_MVE(name, output_type, store, store_p)                                  \
    void name(const float *input, output_type *output, uint32_t count, const ptec_nn_quantize_params *p) \
    {                                                                                                   \
        const float inverse_scale = 1.0f / p->scale;                                                    \
        const int32_t zp = p->zero_point;                                                               \
        const int32x4_t lo = vdupq_n_s32(p->quant_min);                                                 \
        const int32x4_t hi = vdupq_n_s32(p->quant_max);                                                 \
        for (uint32_t b = count >> 2; b > 0; --b) {                                                     \
            store(output, quantize4(vld1q_f32(input), inverse_scale, zp, lo, hi));                      \
            input += 4;                                                                                 \
            output += 4;                                                                                \
        }                                                                                               \
        if ((count & 3u) != 0u) {                                                                       \
            const mve_pred16_t valid = vctp32q(count & 3u);                                             \
            store_p(output, quantize4(vldrwq_z_f32(input, valid), inverse_scale, zp, lo, hi), valid);   \
        }                                                                                               \
    }

PTEC_NN_DEFINE_QUANTIZE_MVE(ptec_nn_quantize_f32_s8_mve, int8_t, vstrbq_s32, vstrbq_p_s32)
PTEC_NN_DEFINE_QUANTIZE_MVE(ptec_nn_quantize_f32_s16_mve, int16_t, vstrhq_s32, vstrhq_p_s32)

#else
typedef int ptec_nn_quantize_mve_unused; /* a translation unit must not be empty */
#endif
