/* Float32 math of one tensor, each its own kernel with upstream's schema
 * aten::X.out(Tensor self, *, Tensor(a!) out): exp, expm1, log, log1p,
 * log2, log10, sqrt, rsqrt, sin, cos, tan, asin, acos, atan, sinh, cosh,
 * asinh, acosh, atanh, erf, abs, neg, floor, ceil, round (half to even),
 * trunc, reciprocal, sign. float32 in and out, as torch's float32 results:
 * libm's single-precision functions give torch's special values (NaN in,
 * NaN out; out of the domain, NaN; a pole, a signed infinity), every NaN
 * written as the quiet NaN 0x7FC00000 (unary_elementwise.c). Each kernel
 * has its own run, which alone names its libm function: a build keeping
 * only some of these kernels links only their functions. */
#include <math.h>

#include "kernels/portable/unary_elementwise.h"

static ptec_status prepare(ptec_op *op)
{
    return ptec_unary_prepare(op, UNARY_MATH, 3);
}

/* Each kernel's function of one value and its run. */
#define FLOAT_MATH(name, expression)                                                                      \
    static float name##_of(float x)                                                                       \
    {                                                                                                     \
        return expression;                                                                                \
    }                                                                                                     \
    static ptec_status run_##name(ptec_op *op)                                                            \
    {                                                                                                     \
        return ptec_unary_run_float(op, name##_of);                                                       \
    }

FLOAT_MATH(exp, expf(x))
FLOAT_MATH(expm1, expm1f(x))
FLOAT_MATH(log, logf(x))
FLOAT_MATH(log1p, log1pf(x))
FLOAT_MATH(log2, log2f(x))
FLOAT_MATH(log10, log10f(x))
FLOAT_MATH(sqrt, sqrtf(x))
/* torch's: -0 gives -inf, +inf gives 0 */
FLOAT_MATH(rsqrt, 1.0f / sqrtf(x))
FLOAT_MATH(sin, sinf(x))
FLOAT_MATH(cos, cosf(x))
FLOAT_MATH(tan, tanf(x))
FLOAT_MATH(asin, asinf(x))
FLOAT_MATH(acos, acosf(x))
FLOAT_MATH(atan, atanf(x))
FLOAT_MATH(sinh, sinhf(x))
FLOAT_MATH(cosh, coshf(x))
FLOAT_MATH(asinh, asinhf(x))
FLOAT_MATH(acosh, acoshf(x))
FLOAT_MATH(atanh, atanhf(x))
FLOAT_MATH(erf, erff(x))
FLOAT_MATH(abs, fabsf(x))
FLOAT_MATH(neg, -x)
FLOAT_MATH(floor, floorf(x))
FLOAT_MATH(ceil, ceilf(x))
/* half to even in the default rounding mode, as torch */
FLOAT_MATH(round, nearbyintf(x))
FLOAT_MATH(trunc, truncf(x))
FLOAT_MATH(reciprocal, 1.0f / x)
/* torch 1.13's sign: (0 < x) - (x < 0), so NaN and -0 give +0 */
FLOAT_MATH(sign, (float)((0.0f < x) - (x < 0.0f)))

const ptec_kernel ptec_kernel_aten_exp_out = {"aten::exp.out", sizeof(unary_state), prepare, run_exp};
const ptec_kernel ptec_kernel_aten_expm1_out = {"aten::expm1.out", sizeof(unary_state), prepare, run_expm1};
const ptec_kernel ptec_kernel_aten_log_out = {"aten::log.out", sizeof(unary_state), prepare, run_log};
const ptec_kernel ptec_kernel_aten_log1p_out = {"aten::log1p.out", sizeof(unary_state), prepare, run_log1p};
const ptec_kernel ptec_kernel_aten_log2_out = {"aten::log2.out", sizeof(unary_state), prepare, run_log2};
const ptec_kernel ptec_kernel_aten_log10_out = {"aten::log10.out", sizeof(unary_state), prepare, run_log10};
const ptec_kernel ptec_kernel_aten_sqrt_out = {"aten::sqrt.out", sizeof(unary_state), prepare, run_sqrt};
const ptec_kernel ptec_kernel_aten_rsqrt_out = {"aten::rsqrt.out", sizeof(unary_state), prepare, run_rsqrt};
const ptec_kernel ptec_kernel_aten_sin_out = {"aten::sin.out", sizeof(unary_state), prepare, run_sin};
const ptec_kernel ptec_kernel_aten_cos_out = {"aten::cos.out", sizeof(unary_state), prepare, run_cos};
const ptec_kernel ptec_kernel_aten_tan_out = {"aten::tan.out", sizeof(unary_state), prepare, run_tan};
const ptec_kernel ptec_kernel_aten_asin_out = {"aten::asin.out", sizeof(unary_state), prepare, run_asin};
const ptec_kernel ptec_kernel_aten_acos_out = {"aten::acos.out", sizeof(unary_state), prepare, run_acos};
const ptec_kernel ptec_kernel_aten_atan_out = {"aten::atan.out", sizeof(unary_state), prepare, run_atan};
const ptec_kernel ptec_kernel_aten_sinh_out = {"aten::sinh.out", sizeof(unary_state), prepare, run_sinh};
const ptec_kernel ptec_kernel_aten_cosh_out = {"aten::cosh.out", sizeof(unary_state), prepare, run_cosh};
const ptec_kernel ptec_kernel_aten_asinh_out = {"aten::asinh.out", sizeof(unary_state), prepare, run_asinh};
const ptec_kernel ptec_kernel_aten_acosh_out = {"aten::acosh.out", sizeof(unary_state), prepare, run_acosh};
const ptec_kernel ptec_kernel_aten_atanh_out = {"aten::atanh.out", sizeof(unary_state), prepare, run_atanh};
const ptec_kernel ptec_kernel_aten_erf_out = {"aten::erf.out", sizeof(unary_state), prepare, run_erf};
const ptec_kernel ptec_kernel_aten_abs_out = {"aten::abs.out", sizeof(unary_state), prepare, run_abs};
const ptec_kernel ptec_kernel_aten_neg_out = {"aten::neg.out", sizeof(unary_state), prepare, run_neg};
const ptec_kernel ptec_kernel_aten_floor_out = {"aten::floor.out", sizeof(unary_state), prepare, run_floor};
const ptec_kernel ptec_kernel_aten_ceil_out = {"aten::ceil.out", sizeof(unary_state), prepare, run_ceil};
const ptec_kernel ptec_kernel_aten_round_out = {"aten::round.out", sizeof(unary_state), prepare, run_round};
const ptec_kernel ptec_kernel_aten_trunc_out = {"aten::trunc.out", sizeof(unary_state), prepare, run_trunc};
const ptec_kernel ptec_kernel_aten_reciprocal_out = {"aten::reciprocal.out", sizeof(unary_state), prepare,
                                                     run_reciprocal};
const ptec_kernel ptec_kernel_aten_sign_out = {"aten::sign.out", sizeof(unary_state), prepare, run_sign};
