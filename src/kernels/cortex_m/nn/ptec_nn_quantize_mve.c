/* float32 -> int8/int16 quantization with Helium's floating point
 * (Cortex-M55), four elements per vector, bit-exact to the reference in
 * ptec_nn_quantize.c: x * (1/scale) per lane, VCVTN to int32 (round to
 * nearest, ties to even, saturating, NaN to 0), the zero point added with
 * saturation, the clamp, and a narrowing store; the last vector is
 * predicated. The caller (ptec_nn_quantize.c) sends only what this path
 * computes exactly: |zero_point| < 2^24 (see ptec_nn_quantize_fpu.c) and
 * 1/scale <= 2^100, so that no input whose product could round away from 0
 * is subnormal (vector floating point may flush subnormals to zero). */
#include "ptec_nn_variants.h"

#if defined(PTEC_NN_QUANTIZE_MVE)
#include <arm_mve.h>

static inline int32x4_t quantize4(const float *input, uint32_t left, float inverse_scale, int32_t zp,
                                  int32x4_t lo, int32x4_t hi, mve_pred16_t *valid)
{
    *valid = vctp32q(left);
    const float32x4_t x = vldrwq_z_f32(input, *valid);
    int32x4_t q = vcvtnq_s32_f32(vmulq_n_f32(x, inverse_scale));
    q = vqaddq_n_s32(q, zp);
    return vminq_s32(vmaxq_s32(q, lo), hi);
}

void ptec_nn_quantize_f32_s8_mve(const float *input, int8_t *output, uint32_t count, const ptec_nn_quantize_params *p)
{
    const float inverse_scale = 1.0f / p->scale;
    const int32x4_t lo = vdupq_n_s32(p->quant_min);
    const int32x4_t hi = vdupq_n_s32(p->quant_max);
    for (uint32_t i = 0; i < count; i += 4) {
        mve_pred16_t valid;
        const int32x4_t q = quantize4(input + i, count - i, inverse_scale, p->zero_point, lo, hi, &valid);
        vstrbq_p_s32(output + i, q, valid);
    }
}

void ptec_nn_quantize_f32_s16_mve(const float *input, int16_t *output, uint32_t count,
                                  const ptec_nn_quantize_params *p)
{
    const float inverse_scale = 1.0f / p->scale;
    const int32x4_t lo = vdupq_n_s32(p->quant_min);
    const int32x4_t hi = vdupq_n_s32(p->quant_max);
    for (uint32_t i = 0; i < count; i += 4) {
        mve_pred16_t valid;
        const int32x4_t q = quantize4(input + i, count - i, inverse_scale, p->zero_point, lo, hi, &valid);
        vstrhq_p_s32(output + i, q, valid);
    }
}

#else
typedef int ptec_nn_quantize_mve_unused; /* a translation unit must not be empty */
#endif
