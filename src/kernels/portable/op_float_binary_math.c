/* PyTorch's float32 functions of two tensors, broadcast (float_binary.c):
 *   aten::pow.Tensor_Tensor_out(Tensor self, Tensor exponent, *, Tensor(a!) out)
 *   aten::atan2.out(Tensor self, Tensor other, *, Tensor(a!) out)
 *   aten::hypot.out(Tensor self, Tensor other, *, Tensor(a!) out)
 *   aten::fmod.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out)
 *   aten::remainder.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out)
 *   aten::copysign.out(Tensor self, Tensor other, *, Tensor(a!) out)
 *
 * pow, atan2 and hypot are computed in double from the float operands
 * (exact) and rounded once to float: the C libraries of the host and of the
 * boards agree on that rounding where their float functions (powf, atan2f)
 * may differ in the last bit, so every target writes the same bytes.
 * Special values are C99's, which are PyTorch's (std::pow, std::atan2,
 * std::hypot): a negative base with a whole exponent keeps the sign of an
 * odd power, with a fractional one gives NaN; x**0 is 1 and 1**y is 1 even
 * for NaN. fmod, remainder and copysign are exact in float.
 *
 * fmod and remainder also take int32 / int64 tensors (int_binary.c, chosen
 * by self's dtype at prepare): C's truncating % for fmod, moved to the
 * divisor's sign for remainder, as PyTorch's integer kernels; a zero
 * divisor fails the execute (PyTorch raises ZeroDivisionError). */
#include <float.h>
#include <math.h>
#include <string.h>

#include "kernels/portable/float_binary.h"
#include "kernels/portable/int_binary.h"

/* d rounded to float, to nearest even: explicit beyond FLT_MAX (a result
 * above it by half a step or more is infinite), where C leaves the
 * conversion of an out-of-range double undefined. */
static float narrow(double d)
{
    const double top = (double)FLT_MAX + 0x1p103; /* halfway to 2^128 */
    if (d >= top) {
        return INFINITY;
    }
    if (d <= -top) {
        return -INFINITY;
    }
    return (float)d;
}

static float pow_fn(float a, float b)
{
    return narrow(pow((double)a, (double)b));
}

static float atan2_fn(float a, float b)
{
    return (float)atan2((double)a, (double)b);
}

static float hypot_fn(float a, float b)
{
    return narrow(hypot((double)a, (double)b));
}

static float fmod_fn(float a, float b)
{
    return fmodf(a, b);
}

/* PyTorch's: fmod, moved by one divisor when its sign is not the divisor's
 * (a result with the divisor's sign, as Python's %). */
static float remainder_fn(float a, float b)
{
    float m = fmodf(a, b);
    if (m != 0.0f && ((b < 0.0f) != (m < 0.0f))) {
        m += b;
    }
    return m;
}

static float copysign_fn(float a, float b)
{
    return copysignf(a, b);
}

static ptec_status run_pow(ptec_op *op) { return ptec_float_binary_run(op, pow_fn); }
static ptec_status run_atan2(ptec_op *op) { return ptec_float_binary_run(op, atan2_fn); }
static ptec_status run_hypot(ptec_op *op) { return ptec_float_binary_run(op, hypot_fn); }
/* float32 (float_binary.c) or int32 / int64 (int_binary.c); the state is
 * an int_binary_state either way, its dtype 0 for float. */
static ptec_status prepare_real(ptec_op *op)
{
    if (ptec_int_binary_applies(op)) {
        return ptec_int_binary_prepare(op);
    }
    memset(op->state, 0, sizeof(int_binary_state));
    return ptec_float_binary_prepare(op);
}

static ptec_status run_fmod(ptec_op *op)
{
    const int_binary_state *s = op->state;
    return s->dtype != 0 ? ptec_int_binary_run(op, INT_FMOD) : ptec_float_binary_run(op, fmod_fn);
}

static ptec_status run_remainder(ptec_op *op)
{
    const int_binary_state *s = op->state;
    return s->dtype != 0 ? ptec_int_binary_run(op, INT_REMAINDER) : ptec_float_binary_run(op, remainder_fn);
}
static ptec_status run_copysign(ptec_op *op) { return ptec_float_binary_run(op, copysign_fn); }

const ptec_kernel ptec_kernel_aten_pow_tensor_tensor_out = {"aten::pow.Tensor_Tensor_out", sizeof(float_binary_state),
                                                            ptec_float_binary_prepare, run_pow};
const ptec_kernel ptec_kernel_aten_atan2_out = {"aten::atan2.out", sizeof(float_binary_state),
                                                ptec_float_binary_prepare, run_atan2};
const ptec_kernel ptec_kernel_aten_hypot_out = {"aten::hypot.out", sizeof(float_binary_state),
                                                ptec_float_binary_prepare, run_hypot};
const ptec_kernel ptec_kernel_aten_fmod_tensor_out = {"aten::fmod.Tensor_out", sizeof(int_binary_state),
                                                      prepare_real, run_fmod};
const ptec_kernel ptec_kernel_aten_remainder_tensor_out = {"aten::remainder.Tensor_out", sizeof(int_binary_state),
                                                           prepare_real, run_remainder};
const ptec_kernel ptec_kernel_aten_copysign_out = {"aten::copysign.out", sizeof(float_binary_state),
                                                   ptec_float_binary_prepare, run_copysign};
