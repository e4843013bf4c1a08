/* The steps of the int8 softmax (CMSIS-NN arm_softmax_s8, scalar path:
 * cortex-m-ops.md §3.15) that ptec_nn_softmax_s8 and
 * ptec_nn_softmax_masked_s8 both take: exp() in Q5.26 -> Q0.31, the terms
 * summed in Q12.19, a Newton-Raphson reciprocal of the sum, and the int8
 * output at scale 1/256, zero point -128. */
#ifndef PTEC_NN_SOFTMAX_H
#define PTEC_NN_SOFTMAX_H

#include "ptec_nn.h"
#include "ptec_nn_math.h"

enum { PTEC_NN_SOFTMAX_SUM_BITS = 12 }; /* exp terms are summed in Q12.19 */

/* exp(diff * input scale) in Q0.31, for diff = x - row maximum <= 0. */
static inline int32_t ptec_nn_softmax_exp(int32_t diff, const ptec_nn_softmax_params *params)
{
    const int32_t scaled =
        ptec_nn_doubling_high_mult(ptec_nn_wrap_shl(diff, params->input_left_shift), params->input_multiplier);
    return ptec_nn_exp_on_negative(scaled);
}

/* The Q12.19 sum with one more exp term (wrapping, as CMSIS-NN). */
static inline int32_t ptec_nn_softmax_add(int32_t sum, int32_t term)
{
    return ptec_nn_wrap_add(sum, ptec_nn_round_shift(term, PTEC_NN_SOFTMAX_SUM_BITS));
}

/* 1/sum as a Q0.31 reciprocal and the shift that scales a term by it. */
typedef struct ptec_nn_softmax_scale {
    int32_t reciprocal, bits;
} ptec_nn_softmax_scale;

/* The sum normalised to [1, 2), 1/sum taken from its fraction. */
static inline ptec_nn_softmax_scale ptec_nn_softmax_scale_of(int32_t sum)
{
    const int32_t headroom = ptec_nn_leading_zeros((uint32_t)sum);
    const int32_t fraction = (int32_t)(((uint32_t)sum << (headroom & 31)) - 0x80000000u);
    const ptec_nn_softmax_scale s = {ptec_nn_one_over_one_plus_x(fraction),
                                     PTEC_NN_SOFTMAX_SUM_BITS - headroom + 23};
    return s;
}

/* The int8 probability of an exp term: term / sum at scale 1/256, -128. */
static inline int8_t ptec_nn_softmax_out(int32_t term, ptec_nn_softmax_scale s)
{
    const int32_t p = ptec_nn_round_shift(ptec_nn_doubling_high_mult(s.reciprocal, term), s.bits);
    return (int8_t)ptec_nn_clamp(p - 128, -128, 127);
}

#endif
