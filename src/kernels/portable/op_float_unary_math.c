/* Float32 math of one tensor, each its own kernel with upstream's schema
 * aten::X.out(Tensor self, *, Tensor(a!) out): exp, expm1, log, log1p,
 * log2, log10, sqrt, rsqrt, sin, cos, tan, asin, acos, atan, sinh, cosh,
 * asinh, acosh, atanh, erf, abs, neg, floor, ceil, round (half to even),
 * trunc, reciprocal, sign. float32 in and out, as torch's float32 results;
 * the math is unary_elementwise.c's (libm's single-precision functions,
 * torch 1.13's special values, every NaN the quiet NaN 0x7FC00000). */
#include "kernels/portable/unary_elementwise.h"

/* Each kernel's prepare: unary_elementwise.c's checks (float32, out of
 * self's sizes) with its kind. */
#define PREPARE(name, KIND)                                                                               \
    static ptec_status prepare_##name(ptec_op *op)                                                        \
    {                                                                                                     \
        return ptec_unary_prepare(op, KIND, 3);                                                           \
    }

PREPARE(exp, UNARY_EXP)
PREPARE(expm1, UNARY_EXPM1)
PREPARE(log, UNARY_LOG)
PREPARE(log1p, UNARY_LOG1P)
PREPARE(log2, UNARY_LOG2)
PREPARE(log10, UNARY_LOG10)
PREPARE(sqrt, UNARY_SQRT)
PREPARE(rsqrt, UNARY_RSQRT)
PREPARE(sin, UNARY_SIN)
PREPARE(cos, UNARY_COS)
PREPARE(tan, UNARY_TAN)
PREPARE(asin, UNARY_ASIN)
PREPARE(acos, UNARY_ACOS)
PREPARE(atan, UNARY_ATAN)
PREPARE(sinh, UNARY_SINH)
PREPARE(cosh, UNARY_COSH)
PREPARE(asinh, UNARY_ASINH)
PREPARE(acosh, UNARY_ACOSH)
PREPARE(atanh, UNARY_ATANH)
PREPARE(erf, UNARY_ERF)
PREPARE(abs, UNARY_ABS)
PREPARE(neg, UNARY_NEG)
PREPARE(floor, UNARY_FLOOR)
PREPARE(ceil, UNARY_CEIL)
PREPARE(round, UNARY_ROUND)
PREPARE(trunc, UNARY_TRUNC)
PREPARE(reciprocal, UNARY_RECIPROCAL)
PREPARE(sign, UNARY_SIGN)

const ptec_kernel ptec_kernel_aten_exp_out = {"aten::exp.out", sizeof(unary_state), prepare_exp, ptec_unary_run};
const ptec_kernel ptec_kernel_aten_expm1_out = {"aten::expm1.out", sizeof(unary_state), prepare_expm1, ptec_unary_run};
const ptec_kernel ptec_kernel_aten_log_out = {"aten::log.out", sizeof(unary_state), prepare_log, ptec_unary_run};
const ptec_kernel ptec_kernel_aten_log1p_out = {"aten::log1p.out", sizeof(unary_state), prepare_log1p, ptec_unary_run};
const ptec_kernel ptec_kernel_aten_log2_out = {"aten::log2.out", sizeof(unary_state), prepare_log2, ptec_unary_run};
const ptec_kernel ptec_kernel_aten_log10_out = {"aten::log10.out", sizeof(unary_state), prepare_log10, ptec_unary_run};
const ptec_kernel ptec_kernel_aten_sqrt_out = {"aten::sqrt.out", sizeof(unary_state), prepare_sqrt, ptec_unary_run};
const ptec_kernel ptec_kernel_aten_rsqrt_out = {"aten::rsqrt.out", sizeof(unary_state), prepare_rsqrt, ptec_unary_run};
const ptec_kernel ptec_kernel_aten_sin_out = {"aten::sin.out", sizeof(unary_state), prepare_sin, ptec_unary_run};
const ptec_kernel ptec_kernel_aten_cos_out = {"aten::cos.out", sizeof(unary_state), prepare_cos, ptec_unary_run};
const ptec_kernel ptec_kernel_aten_tan_out = {"aten::tan.out", sizeof(unary_state), prepare_tan, ptec_unary_run};
const ptec_kernel ptec_kernel_aten_asin_out = {"aten::asin.out", sizeof(unary_state), prepare_asin, ptec_unary_run};
const ptec_kernel ptec_kernel_aten_acos_out = {"aten::acos.out", sizeof(unary_state), prepare_acos, ptec_unary_run};
const ptec_kernel ptec_kernel_aten_atan_out = {"aten::atan.out", sizeof(unary_state), prepare_atan, ptec_unary_run};
const ptec_kernel ptec_kernel_aten_sinh_out = {"aten::sinh.out", sizeof(unary_state), prepare_sinh, ptec_unary_run};
const ptec_kernel ptec_kernel_aten_cosh_out = {"aten::cosh.out", sizeof(unary_state), prepare_cosh, ptec_unary_run};
const ptec_kernel ptec_kernel_aten_asinh_out = {"aten::asinh.out", sizeof(unary_state), prepare_asinh, ptec_unary_run};
const ptec_kernel ptec_kernel_aten_acosh_out = {"aten::acosh.out", sizeof(unary_state), prepare_acosh, ptec_unary_run};
const ptec_kernel ptec_kernel_aten_atanh_out = {"aten::atanh.out", sizeof(unary_state), prepare_atanh, ptec_unary_run};
const ptec_kernel ptec_kernel_aten_erf_out = {"aten::erf.out", sizeof(unary_state), prepare_erf, ptec_unary_run};
const ptec_kernel ptec_kernel_aten_abs_out = {"aten::abs.out", sizeof(unary_state), prepare_abs, ptec_unary_run};
const ptec_kernel ptec_kernel_aten_neg_out = {"aten::neg.out", sizeof(unary_state), prepare_neg, ptec_unary_run};
const ptec_kernel ptec_kernel_aten_floor_out = {"aten::floor.out", sizeof(unary_state), prepare_floor, ptec_unary_run};
const ptec_kernel ptec_kernel_aten_ceil_out = {"aten::ceil.out", sizeof(unary_state), prepare_ceil, ptec_unary_run};
const ptec_kernel ptec_kernel_aten_round_out = {"aten::round.out", sizeof(unary_state), prepare_round, ptec_unary_run};
const ptec_kernel ptec_kernel_aten_trunc_out = {"aten::trunc.out", sizeof(unary_state), prepare_trunc, ptec_unary_run};
const ptec_kernel ptec_kernel_aten_reciprocal_out = {"aten::reciprocal.out", sizeof(unary_state), prepare_reciprocal,
                                                     ptec_unary_run};
const ptec_kernel ptec_kernel_aten_sign_out = {"aten::sign.out", sizeof(unary_state), prepare_sign, ptec_unary_run};
