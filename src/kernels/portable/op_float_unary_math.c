/* Float32 math of one tensor, each its own kernel with upstream's schema
 * aten::X.out(Tensor self, *, Tensor(a!) out): exp, expm1, log, log1p,
 * log2, log10, sqrt, rsqrt, sin, cos, tan, asin, acos, atan, sinh, cosh,
 * asinh, acosh, atanh, erf, abs, neg, floor, ceil, round (half to even),
 * trunc, reciprocal, sign. float32 in and out, as torch's float32 results;
 * the math is unary_elementwise.c's (libm's single-precision functions,
 * torch 1.13's special values, every NaN the quiet NaN 0x7FC00000). */
#include "kernels/portable/unary_elementwise.h"

#define FLOAT_UNARY_KERNEL(name, KIND)                                                                    \
    static ptec_status prepare_##name(ptec_op *op)                                                        \
    {                                                                                                     \
        return ptec_unary_prepare(op, KIND, 3);                                                           \
    }                                                                                                     \
    const ptec_kernel ptec_kernel_aten_##name##_out = {"aten::" #name ".out", sizeof(unary_state),        \
                                                       prepare_##name, ptec_unary_run};

FLOAT_UNARY_KERNEL(exp, UNARY_EXP)
FLOAT_UNARY_KERNEL(expm1, UNARY_EXPM1)
FLOAT_UNARY_KERNEL(log, UNARY_LOG)
FLOAT_UNARY_KERNEL(log1p, UNARY_LOG1P)
FLOAT_UNARY_KERNEL(log2, UNARY_LOG2)
FLOAT_UNARY_KERNEL(log10, UNARY_LOG10)
FLOAT_UNARY_KERNEL(sqrt, UNARY_SQRT)
FLOAT_UNARY_KERNEL(rsqrt, UNARY_RSQRT)
FLOAT_UNARY_KERNEL(sin, UNARY_SIN)
FLOAT_UNARY_KERNEL(cos, UNARY_COS)
FLOAT_UNARY_KERNEL(tan, UNARY_TAN)
FLOAT_UNARY_KERNEL(asin, UNARY_ASIN)
FLOAT_UNARY_KERNEL(acos, UNARY_ACOS)
FLOAT_UNARY_KERNEL(atan, UNARY_ATAN)
FLOAT_UNARY_KERNEL(sinh, UNARY_SINH)
FLOAT_UNARY_KERNEL(cosh, UNARY_COSH)
FLOAT_UNARY_KERNEL(asinh, UNARY_ASINH)
FLOAT_UNARY_KERNEL(acosh, UNARY_ACOSH)
FLOAT_UNARY_KERNEL(atanh, UNARY_ATANH)
FLOAT_UNARY_KERNEL(erf, UNARY_ERF)
FLOAT_UNARY_KERNEL(abs, UNARY_ABS)
FLOAT_UNARY_KERNEL(neg, UNARY_NEG)
FLOAT_UNARY_KERNEL(floor, UNARY_FLOOR)
FLOAT_UNARY_KERNEL(ceil, UNARY_CEIL)
FLOAT_UNARY_KERNEL(round, UNARY_ROUND)
FLOAT_UNARY_KERNEL(trunc, UNARY_TRUNC)
FLOAT_UNARY_KERNEL(reciprocal, UNARY_RECIPROCAL)
FLOAT_UNARY_KERNEL(sign, UNARY_SIGN)
