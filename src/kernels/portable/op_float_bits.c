/* PyTorch's bit-level functions of float32 values; upstream ExecuTorch has
 * no kernel for them (ptec only):
 *   aten::nextafter.out(Tensor self, Tensor other, *, Tensor(a!) out)
 *     (broadcast, float_binary.c)
 *   aten::frexp.Tensor_out(Tensor self, *, Tensor(a!) mantissa, Tensor(b!) exponent)
 *     (mantissa float32, exponent int32, both of self's sizes)
 *
 * Both read and write the IEEE-754 binary32 encoding directly (memcpy
 * between float and uint32_t) and decide everything on integers, never on
 * float comparisons or arithmetic: a core that flushes subnormals to zero
 * (Cortex-M's FPSCR.FZ) would compare a subnormal equal to 0 and give the
 * wrong neighbour, and integer steps are exact by construction. No libm.
 *
 * nextafter(x, y) is C99's nextafterf, which PyTorch calls: NaN if either
 * is NaN, written as the one quiet NaN 0x7FC00000 (PyTorch 1.13's
 * vectorized loop writes that NaN whatever the operands' signs and
 * payloads; only its scalar tail keeps them); y itself when x == y (so
 * nextafter(0, -0) is -0);
 * the smallest subnormal with y's sign from a zero x; else the encoding one
 * step away from x towards y, where one step up in a magnitude's encoding
 * is the next larger magnitude (FLT_MAX + 1 step is infinity, infinity - 1
 * step FLT_MAX, the smallest normal - 1 step the largest subnormal).
 *
 * frexp(x) = (m, e) with x = m * 2^e and 0.5 <= |m| < 1, C99's frexpf as
 * PyTorch 1.13 gives it: for 0, -0, +-inf and NaN, m is x itself (a NaN
 * quieted, its sign and payload kept, as x + x does) and e is 0. A normal
 * x with biased exponent E has e = E - 126 and m its fraction bits under
 * the biased exponent 126; a subnormal's fraction is shifted up until its
 * leading bit becomes the implicit one (e = -148 for the smallest). */
#include <string.h>

#include "kernels/portable/broadcast.h"
#include "kernels/portable/float_binary.h"
#include "kernels/portable/portable_args.h"
#include "kernels/portable/strides.h"

#define SIGN_BIT 0x80000000u
#define MAGNITUDE 0x7FFFFFFFu
#define INF_BITS 0x7F800000u
#define QUIET_BIT 0x00400000u
#define QUIET_NAN 0x7FC00000u
#define FRACTION 0x007FFFFFu
#define IMPLICIT_ONE 0x00800000u
#define HALF_EXPONENT (126u << 23) /* the biased exponent of [0.5, 1) */

/* The encoding as a signed integer in the order of the values: -0 and +0
 * both 0, negatives below, each magnitude step one apart. (NaN excluded.) */
static int32_t ordered(uint32_t u)
{
    int32_t m = (int32_t)(u & MAGNITUDE);
    return (u & SIGN_BIT) ? -m : m;
}

static uint32_t nextafter_bits(uint32_t x, uint32_t y)
{
    if ((x & MAGNITUDE) > INF_BITS || (y & MAGNITUDE) > INF_BITS) {
        return QUIET_NAN;
    }
    int32_t kx = ordered(x), ky = ordered(y);
    if (kx == ky) {
        return y; /* equal values (0 and -0 too): y, as C99 */
    }
    if ((x & MAGNITUDE) == 0u) {
        return (y & SIGN_BIT) | 1u; /* the smallest subnormal towards y */
    }
    /* away from zero (up in magnitude) when y lies beyond x on x's side */
    bool up = (kx < ky) == (kx > 0);
    return up ? x + 1u : x - 1u;
}

static void nextafter_one(const uint8_t *a, const uint8_t *b, uint8_t *out)
{
    uint32_t x, y, r;
    memcpy(&x, a, sizeof x);
    memcpy(&y, b, sizeof y);
    r = nextafter_bits(x, y);
    memcpy(out, &r, sizeof r);
}

/* float_binary.c's prepare (shapes, broadcast, dtypes) and its walk, on the
 * encodings (no float value passes through a float register). */
static ptec_status run_nextafter(ptec_op *op)
{
    const float_binary_state *s = op->state;
    const ptec_tensor *t_a = ptec_op_tensor(op, 0), *t_b = ptec_op_tensor(op, 1), *t_out = ptec_op_tensor(op, 2);
    const uint8_t *a = t_a->data, *b = t_b->data;
    uint8_t *y = t_out->data;
    if (s->flat) {
        for (uint32_t i = 0; i < t_out->numel; ++i) {
            nextafter_one(a + 4u * (size_t)i, b + 4u * (size_t)i, y + 4u * (size_t)i);
        }
        return PTEC_OK;
    }
    static const int args[2] = {0, 1};
    ptec_broadcast w;
    ptec_broadcast_start(&w, op, args, 2, 2);
    for (uint32_t n = 0; n < t_out->numel; ++n, ptec_broadcast_next(&w)) {
        nextafter_one(a + 4u * w.off[0], b + 4u * w.off[1], y + 4u * w.off[2]);
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_aten_nextafter_out = {"aten::nextafter.out", sizeof(float_binary_state),
                                                    ptec_float_binary_prepare, run_nextafter};

/* frexp: one walk over self's logical indices; mantissa and exponent share
 * a layout (checked), self may have another. */
typedef struct frexp_state {
    uint8_t rank;
    uint8_t flat; /* self, mantissa and exponent share one layout */
} frexp_state;

static bool same_layout(const ptec_tensor *a, const ptec_tensor *b)
{
    return ptec_tensor_same_shape(a, b) && memcmp(a->dim_order, b->dim_order, a->rank) == 0;
}

/* self = arg 0, mantissa = 1, exponent = 2, the return list = 3. */
static ptec_status prepare_frexp(ptec_op *op)
{
    frexp_state *s = op->state;
    ptec_tensor *self, *mantissa, *exponent;
    size_t returns;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, 4u)) != PTEC_OK || (st = ptec_op_get_tensor(op, 0, &self)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, 1, &mantissa)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, 2, &exponent)) != PTEC_OK ||
        (st = ptec_op_get_tensor_list(op, 3, &returns)) != PTEC_OK ||
        (st = ptec_portable_expect_float(op, 0, self)) != PTEC_OK ||
        (st = ptec_portable_expect_float(op, 1, mantissa)) != PTEC_OK) {
        return st;
    }
    if (returns != 2u) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, 3, PTEC_MSG("return slot must list mantissa and exponent"));
    }
    if ((mantissa->flags | exponent->flags) & PTEC_TENSOR_CONSTANT) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, -1,
                            PTEC_MSG("mantissa and exponent must not be constant tensors"));
    }
    if (exponent->dtype != PTEC_DTYPE_INT) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 2, PTEC_MSG("exponent must be int32"));
    }
    if (!ptec_tensor_same_shape(self, mantissa)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 1, PTEC_MSG("mantissa must have self's sizes"));
    }
    if (!same_layout(mantissa, exponent)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 2,
                            PTEC_MSG("exponent must have mantissa's sizes and dim order"));
    }
    memset(s, 0, sizeof *s);
    s->rank = mantissa->rank;
    s->flat = same_layout(self, mantissa) || (ptec_tensor_is_contiguous(self) && ptec_tensor_is_contiguous(mantissa));
    return PTEC_OK;
}

/* m's encoding and e of one float32 encoding x. */
static uint32_t frexp_bits(uint32_t x, int32_t *e)
{
    uint32_t sign = x & SIGN_BIT, mag = x & MAGNITUDE;
    if (mag == 0u || mag >= INF_BITS) {
        *e = 0;
        return mag > INF_BITS ? x | QUIET_BIT : x; /* +-0, +-inf as they are; NaN quieted */
    }
    if (mag >= IMPLICIT_ONE) { /* normal: biased exponent 1 .. 254 */
        *e = (int32_t)(mag >> 23) - 126;
        return sign | HALF_EXPONENT | (mag & FRACTION);
    }
    /* subnormal mag * 2^-149: shift its leading bit (bit k) up to bit 23 */
    int32_t k = 22;
    while ((mag & (1u << k)) == 0u) {
        --k;
    }
    *e = k - 148;
    return sign | HALF_EXPONENT | ((mag << (23 - k)) & FRACTION);
}

static void frexp_one(const uint8_t *in, uint8_t *mantissa, uint8_t *exponent)
{
    uint32_t x, m;
    int32_t e;
    memcpy(&x, in, sizeof x);
    m = frexp_bits(x, &e);
    memcpy(mantissa, &m, sizeof m);
    memcpy(exponent, &e, sizeof e);
}

static ptec_status run_frexp(ptec_op *op)
{
    const frexp_state *s = op->state;
    const ptec_tensor *t_in = ptec_op_tensor(op, 0), *t_m = ptec_op_tensor(op, 1), *t_e = ptec_op_tensor(op, 2);
    const uint8_t *in = t_in->data;
    uint8_t *m = t_m->data, *e = t_e->data;
    if (s->flat) {
        for (uint32_t i = 0; i < t_m->numel; ++i) {
            frexp_one(in + 4u * (size_t)i, m + 4u * (size_t)i, e + 4u * (size_t)i);
        }
        return PTEC_OK;
    }
    /* mantissa and exponent share strides (same layout), self has its own */
    int32_t stride_in[PTEC_MAX_RANK], stride_out[PTEC_MAX_RANK], index[PTEC_MAX_RANK] = {0};
    ptec_physical_strides(t_in, stride_in);
    ptec_physical_strides(t_m, stride_out);
    size_t off_in = 0, off_out = 0;
    for (uint32_t n = 0; n < t_m->numel; ++n) {
        frexp_one(in + 4u * off_in, m + 4u * off_out, e + 4u * off_out);
        ptec_walk_step(s->rank, t_m->sizes, index, stride_in, &off_in, stride_out, &off_out);
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_aten_frexp_tensor_out = {"aten::frexp.Tensor_out", sizeof(frexp_state),
                                                       prepare_frexp, run_frexp};
