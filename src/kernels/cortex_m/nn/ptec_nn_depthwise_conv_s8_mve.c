/* Helium depthwise convolution, depth multiplier 1: four adjacent channels
 * per vector, sixteen per pass over the window while that many are left
 * (the loop overhead of a tap is then shared by four vectors). Per in-bounds tap, VLDRB.S32 widens four input and four
 * weight bytes, VADD adds the input offset, VMUL and VADD accumulate (MVE
 * has no lane-wise integer multiply-accumulate of two vectors); the four
 * sums are requantized as one vector. A channel count that is not a
 * multiple of 4 ends with a predicated vector (no bytes read or written
 * past the last channel). */
#include "ptec_nn_variants.h"

#if defined(PTEC_NN_MVE)
#include "ptec_nn_mve.h"
#include "ptec_nn_window.h"

/* Bias, requantization and output stage of channels c .. c + 3. */
static inline void finish(int32x4_t acc, const int32_t *bias, const ptec_nn_per_channel_quant *quant, int32_t c,
                          const ptec_nn_conv_params *p, int exact_min, int8_t *y)
{
    if (bias != NULL) {
        acc = vaddq_s32(acc, vld1q_s32(bias + c));
    }
    const int32x4_t multiplier = vld1q_s32(quant->multipliers + c);
    const int32x4_t shift = vld1q_s32(quant->shifts + c);
    acc = exact_min ? ptec_nn_requantize_any_mve(acc, multiplier, shift) : ptec_nn_requantize_mve(acc, multiplier, shift);
    vstrbq_s32(y + c, ptec_nn_output_stage_mve(acc, p->output_offset, p->activation.min, p->activation.max));
}

ptec_status ptec_nn_depthwise_conv_s8_mve(const ptec_nn_conv_params *params, const ptec_nn_per_channel_quant *quant,
                                          const ptec_nn_dims *input_dims, const int8_t *input,
                                          const ptec_nn_dims *filter_dims, const int8_t *filter,
                                          const int32_t *bias, const ptec_nn_dims *output_dims, int8_t *output)
{
    const ptec_nn_dims in = *input_dims;
    const ptec_nn_dims f = *filter_dims;
    const ptec_nn_dims out = *output_dims;
    const ptec_nn_conv_params p = *params;
    const int32_t channels = out.c;
    const size_t in_row = (size_t)in.w * (size_t)in.c;
    const size_t x_col = (size_t)p.dilation.w * (size_t)in.c;
    const size_t x_row = (size_t)p.dilation.h * in_row;
    const size_t w_row = (size_t)f.w * (size_t)channels;
    const int exact_min = ptec_nn_any_min_multiplier(quant->multipliers, channels);
    int8_t *y = output;
    for (int32_t n = 0; n < out.n; ++n) {
        const int8_t *image = input + (size_t)n * (size_t)in.h * in_row;
        for (int32_t oy = 0; oy < out.h; ++oy) {
            const int32_t y0 = oy * p.stride.h - p.padding.h;
            int32_t ky0, ky1;
            ptec_nn_tap_range(y0, p.dilation.h, f.h, in.h, &ky0, &ky1);
            for (int32_t ox = 0; ox < out.w; ++ox, y += channels) {
                const int32_t x0 = ox * p.stride.w - p.padding.w;
                int32_t kx0, kx1;
                ptec_nn_tap_range(x0, p.dilation.w, f.w, in.w, &kx0, &kx1);
                const int32_t rows = ky1 - ky0, cols = kx1 - kx0;
                const int8_t *x_tap = image + (size_t)(y0 + ky0 * p.dilation.h) * in_row +
                                      (size_t)(x0 + kx0 * p.dilation.w) * (size_t)in.c;
                const int8_t *w_tap = filter + ((size_t)ky0 * (size_t)f.w + (size_t)kx0) * (size_t)channels;
                int32_t c = 0;
                for (; c + 16 <= channels; c += 16) {
                    int32x4_t acc0 = vdupq_n_s32(0), acc1 = acc0, acc2 = acc0, acc3 = acc0;
                    for (int32_t r = 0; r < rows; ++r) {
                        const int8_t *xp = x_tap + (size_t)r * x_row + c;
                        const int8_t *wp = w_tap + (size_t)r * w_row + c;
                        for (int32_t t = 0; t < cols; ++t) {
                            int32x4_t x = vaddq_n_s32(vldrbq_s32(xp), p.input_offset);
                            acc0 = vaddq_s32(acc0, vmulq_s32(x, vldrbq_s32(wp)));
                            x = vaddq_n_s32(vldrbq_s32(xp + 4), p.input_offset);
                            acc1 = vaddq_s32(acc1, vmulq_s32(x, vldrbq_s32(wp + 4)));
                            x = vaddq_n_s32(vldrbq_s32(xp + 8), p.input_offset);
                            acc2 = vaddq_s32(acc2, vmulq_s32(x, vldrbq_s32(wp + 8)));
                            x = vaddq_n_s32(vldrbq_s32(xp + 12), p.input_offset);
                            acc3 = vaddq_s32(acc3, vmulq_s32(x, vldrbq_s32(wp + 12)));
                            xp += x_col;
                            wp += channels;
                        }
                    }
                    finish(acc0, bias, quant, c, &p, exact_min, y);
                    finish(acc1, bias, quant, c + 4, &p, exact_min, y);
                    finish(acc2, bias, quant, c + 8, &p, exact_min, y);
                    finish(acc3, bias, quant, c + 12, &p, exact_min, y);
                }
                for (; c < channels; c += 4) {
                    const mve_pred16_t valid = vctp32q((uint32_t)(channels - c));
                    int32x4_t acc = bias != NULL ? vldrwq_z_s32(bias + c, valid) : vdupq_n_s32(0);
                    for (int32_t r = 0; r < rows; ++r) {
                        const int8_t *xp = x_tap + (size_t)r * x_row + c;
                        const int8_t *wp = w_tap + (size_t)r * w_row + c;
                        for (int32_t t = 0; t < cols; ++t) {
                            const int32x4_t x = vaddq_n_s32(vldrbq_z_s32(xp, valid), p.input_offset);
                            acc = vaddq_s32(acc, vmulq_s32(x, vldrbq_z_s32(wp, valid)));
                            xp += x_col;
                            wp += channels;
                        }
                    }
                    const int32x4_t multiplier = vldrwq_z_s32(quant->multipliers + c, valid);
                    const int32x4_t shift = vldrwq_z_s32(quant->shifts + c, valid);
                    acc = exact_min ? ptec_nn_requantize_any_mve(acc, multiplier, shift)
                                    : ptec_nn_requantize_mve(acc, multiplier, shift);
                    acc = ptec_nn_output_stage_mve(acc, p.output_offset, p.activation.min, p.activation.max);
                    vstrbq_p_s32(y + c, acc, valid);
                }
            }
        }
    }
    return PTEC_OK;
}

#else
typedef int ptec_nn_depthwise_mve_unused; /* a translation unit must not be empty */
#endif
