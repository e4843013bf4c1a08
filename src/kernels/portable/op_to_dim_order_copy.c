/* dim_order_ops::_to_dim_order_copy.out(Tensor self, *, bool non_blocking=False,
 *                                       int[]? dim_order=None, Tensor(a!) out)
 *
 * A dtype conversion, ExecuTorch's form of `x.to(dtype)` / `x.float()` /
 * `x.long()`, element by element in one dim order:
 *  - an integer tensor (int64 indices of argmax, int8/16/32, uint8) or
 *    float32 into float32: every integer converts with a defined result (C
 *    rounds an int64 beyond 2^24 to the nearest float);
 *  - float32 into int64 or int32 (ids computed in the program): truncation
 *    toward zero, as PyTorch's. A NaN, an infinity or a value whose
 *    truncation is outside the integer type has no defined conversion in C
 *    (PyTorch's result there is whatever the CPU gives): it fails the
 *    execute with InvalidArgument, checked for every element before any is
 *    written;
 *  - float32 into float16 (a Half program output, `x.half()`): IEEE
 *    round to nearest even, subnormals kept, beyond the largest half by
 *    half a step or more infinite, NaN a quiet NaN of its sign;
 *  - float32 into bfloat16 (a BFloat16 program output, `x.bfloat16()`):
 *    the top 16 bits of the float32, rounded to nearest even on the 16
 *    dropped ones (subnormals kept, overflow to infinity), NaN a quiet NaN
 *    of its sign (PyTorch's scalar path writes 0x7FC0, its vectorized one
 *    0xFFFF: both NaN);
 *  - float16 or bfloat16 into float32 (a Half / BFloat16 program input,
 *    `model(x.half())`, converted first thing): exact, every 16-bit float
 *    is a float32 (subnormal halves become normal floats, infinities stay),
 *    made from the bits by integer operations; as torch's `.float()`, a
 *    bfloat16 NaN keeps its bits (shifted up by 16) and a half NaN its
 *    payload (shifted up by 13) with the quiet bit set;
 *  - a bool (a comparison's result: `mask.float()`, `.int()`, `.long()`)
 *    into float32, int32 or int64 as 0 or 1 (any nonzero byte is true);
 *  - between the integer types int64, int32, int16, int8 and uint8 (`i.int()`,
 *    `k.long()`, `i.short()`, `i.byte()`, `i.char()`, torch's promotion of an
 *    int32 value beside an int64 one): the value itself when the out type
 *    holds it, else its low bits (two's complement; uint8 the value modulo
 *    256), as PyTorch's conversion wraps;
 *  - an integer (int64, int32, int16, int8, uint8) into float64 (`i.double()`,
 *    a Double program output): exact up to 2^53 in magnitude, beyond it C's
 *    conversion (the nearest double, as PyTorch's static_cast);
 *  - float32 into float64 (a Double program output of float math,
 *    `x.double().exp()` computed in float32): exact, every float is a double
 *    (NaN stays NaN, infinities and subnormals kept);
 *  - float64 into float32 (`i.double().float()`): C's conversion, the nearest
 *    float; a double beyond float's range (a hostile program's input, no
 *    integer's double) gives infinity on IEEE targets (C's Annex F), as
 *    PyTorch's static_cast does. */
#include <string.h>

#include "kernels/portable/portable_args.h"

typedef struct to_copy_state {
    uint8_t dtype;     /* self's */
    uint8_t out_dtype; /* float32, int64/int32/half/bfloat16/float64 from float32, an integer type or float64 from one */
                       /* (float32 also from half / bfloat16) */
} to_copy_state;

static bool convertible(uint8_t dtype)
{
    return dtype == PTEC_DTYPE_BOOL || dtype == PTEC_DTYPE_LONG || dtype == PTEC_DTYPE_INT || dtype == PTEC_DTYPE_SHORT ||
           dtype == PTEC_DTYPE_CHAR || dtype == PTEC_DTYPE_BYTE || dtype == PTEC_DTYPE_FLOAT;
}

/* The integer types converted into one another (wrapping) and into float64. */
static bool integer(uint8_t dtype)
{
    return dtype == PTEC_DTYPE_LONG || dtype == PTEC_DTYPE_INT || dtype == PTEC_DTYPE_SHORT ||
           dtype == PTEC_DTYPE_CHAR || dtype == PTEC_DTYPE_BYTE;
}

static ptec_status prepare(ptec_op *op)
{
    to_copy_state *s = op->state;
    ptec_tensor *self, *out;
    ptec_status st = ptec_portable_dim_order_copy_args(op, &self, &out);
    if (st != PTEC_OK) {
        return st;
    }
    bool to_float = convertible(self->dtype) && out->dtype == PTEC_DTYPE_FLOAT;
    bool from_float = self->dtype == PTEC_DTYPE_FLOAT;
    bool to_index = from_float && (out->dtype == PTEC_DTYPE_LONG || out->dtype == PTEC_DTYPE_INT);
    bool to_16_bit_float = from_float && (out->dtype == PTEC_DTYPE_HALF || out->dtype == PTEC_DTYPE_BFLOAT16);
    bool bool_to_int = self->dtype == PTEC_DTYPE_BOOL && (out->dtype == PTEC_DTYPE_LONG || out->dtype == PTEC_DTYPE_INT);
    bool int_to_int = integer(self->dtype) && integer(out->dtype) && self->dtype != out->dtype;
    bool to_double = (integer(self->dtype) || from_float) && out->dtype == PTEC_DTYPE_DOUBLE;
    bool double_to_float = self->dtype == PTEC_DTYPE_DOUBLE && out->dtype == PTEC_DTYPE_FLOAT;
    bool from_16_bit_float = (self->dtype == PTEC_DTYPE_HALF || self->dtype == PTEC_DTYPE_BFLOAT16) &&
                             out->dtype == PTEC_DTYPE_FLOAT;
    if (!to_float && !to_index && !to_16_bit_float && !bool_to_int && !int_to_int && !to_double && !double_to_float &&
        !from_16_bit_float) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, -1,
                            PTEC_MSG("converts integers, bools and float32 into float32, float32 into int64/int32/half/bfloat16/"
                                     "float64, bools into int64/int32, integers into other integer types and float64, "
                                     "float64, half and bfloat16 into float32"));
    }
    if (out->flags & PTEC_TENSOR_CONSTANT) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, 3, PTEC_MSG("out must not be a constant tensor"));
    }
    if (!ptec_tensor_same_shape(self, out) || memcmp(self->dim_order, out->dim_order, out->rank) != 0) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, -1, PTEC_MSG("out must have self's sizes and dim order"));
    }
    s->dtype = self->dtype;
    s->out_dtype = out->dtype;
    return PTEC_OK;
}

/* Whether float v truncates to an integer in [-2^(bits-1), 2^(bits-1)):
 * the bounds are powers of two, exact in float, and no float lies between
 * -2^(bits-1) - 1 and -2^(bits-1); NaN fails both tests. */
static bool truncates_into(float v, int bits)
{
    const float bound = bits == 64 ? 0x1p63f : 0x1p31f;
    return v >= -bound && v < bound;
}

static ptec_status run_to_index(ptec_op *op, const to_copy_state *s)
{
    const ptec_tensor *t_in = ptec_op_tensor(op, 0), *t_out = ptec_op_tensor(op, 3);
    const float *x = t_in->data;
    uint32_t n = t_out->numel;
    int bits = s->out_dtype == PTEC_DTYPE_LONG ? 64 : 32;
    for (uint32_t i = 0; i < n; ++i) {
        if (!truncates_into(x[i], bits)) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 0,
                                PTEC_MSG("a value is NaN, infinite or outside the integer type"));
        }
    }
    for (uint32_t i = 0; i < n; ++i) {
        if (bits == 64) {
            ((int64_t *)t_out->data)[i] = (int64_t)x[i];
        } else {
            ((int32_t *)t_out->data)[i] = (int32_t)x[i];
        }
    }
    return PTEC_OK;
}

/* IEEE binary16 of f, rounded to nearest even. */
static uint16_t half_bits(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t a = x & 0x7FFFFFFFu;
    if (a > 0x7F800000u) {
        return (uint16_t)(sign | 0x7E00u); /* NaN */
    }
    if (a >= 0x477FF000u) {
        return (uint16_t)(sign | 0x7C00u); /* 65520 and up: the tie above 65504 goes to even, infinity */
    }
    uint32_t e = a >> 23;
    if (e < 113u) { /* below 2^-14: a subnormal half (units of 2^-24) or zero */
        if (e < 102u) {
            return sign; /* below 2^-25, half the smallest subnormal */
        }
        uint32_t m = (a & 0x7FFFFFu) | 0x800000u; /* the value is m * 2^(e - 150) */
        uint32_t shift = 126u - e;                /* 14 .. 24 */
        uint32_t q = m >> shift, rem = m & ((1u << shift) - 1u), mid = 1u << (shift - 1u);
        q += rem > mid || (rem == mid && (q & 1u));
        return (uint16_t)(sign | q); /* 0x400 when it rounds up to 2^-14: the right encoding */
    }
    uint32_t r = a - 0x38000000u; /* exponent rebiased from 127 to 15 */
    uint32_t q = r >> 13, rem = r & 0x1FFFu;
    q += rem > 0x1000u || (rem == 0x1000u && (q & 1u)); /* a carry moves into the exponent, as it should */
    return (uint16_t)(sign | q);
}

/* bfloat16 of the float32 bits x: the carry of the rounding bias moves
 * into the exponent (up to infinity) as it should; x is not a NaN, whose
 * payload the bias could carry into the sign. */
static uint16_t bfloat16_bits(uint32_t x)
{
    if ((x & 0x7FFFFFFFu) > 0x7F800000u) {
        return (uint16_t)(((x >> 16) & 0x8000u) | 0x7FC0u); /* NaN: quiet, of its sign */
    }
    const uint32_t ties_to_even = 0x7FFFu + ((x >> 16) & 1u);
    return (uint16_t)((x + ties_to_even) >> 16);
}

/* float32 into a 16-bit float: the bits read as an integer (no float
 * operation, so neither a signalling NaN nor a subnormal is touched by
 * the FPU on the way). */
static ptec_status run_to_16_bit_float(ptec_op *op, const to_copy_state *s)
{
    const uint8_t *x = ptec_op_tensor(op, 0)->data;
    const ptec_tensor *t_out = ptec_op_tensor(op, 3);
    uint16_t *h = t_out->data;
    for (uint32_t i = 0; i < t_out->numel; ++i) {
        uint32_t bits;
        memcpy(&bits, x + (size_t)i * sizeof bits, sizeof bits);
        if (s->out_dtype == PTEC_DTYPE_BFLOAT16) {
            h[i] = bfloat16_bits(bits);
        } else {
            float f;
            memcpy(&f, &bits, sizeof f);
            h[i] = half_bits(f);
        }
    }
    return PTEC_OK;
}

/* float32 bits of the IEEE binary16 h, exactly (torch's conversion). */
static uint32_t float_bits_of_half(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
    if (e == 0x1Fu) { /* infinity, or a NaN: its payload kept, quiet */
        return sign | 0x7F800000u | (m != 0u ? 0x400000u | (m << 13) : 0u);
    }
    if (e != 0u) {
        return sign | ((e + 112u) << 23) | (m << 13); /* exponent rebiased from 15 to 127 */
    }
    if (m == 0u) {
        return sign; /* a signed zero */
    }
    /* A subnormal, m * 2^-24 with its top bit at p (0 .. 9): the normal
     * float 1.f * 2^(p - 24), its leading bit dropped. */
    uint32_t p = 9u;
    while ((m >> p) == 0u) {
        --p;
    }
    return sign | ((p + 103u) << 23) | ((m << (23u - p)) & 0x7FFFFFu);
}

/* A 16-bit float into float32: bits to bits, no float operation (which
 * could quiet a signalling NaN or flush a subnormal on the way). */
static ptec_status run_from_16_bit_float(ptec_op *op, const to_copy_state *s)
{
    const uint16_t *h = ptec_op_tensor(op, 0)->data;
    const ptec_tensor *t_out = ptec_op_tensor(op, 3);
    uint8_t *y = t_out->data;
    for (uint32_t i = 0; i < t_out->numel; ++i) {
        uint32_t bits = s->dtype == PTEC_DTYPE_BFLOAT16 ? (uint32_t)h[i] << 16 : float_bits_of_half(h[i]);
        memcpy(y + (size_t)i * sizeof bits, &bits, sizeof bits);
    }
    return PTEC_OK;
}

/* 0 or 1 per bool; one loop per out dtype, each choosing between two
 * constants (no conversion inside a branch, which GCC emits for Cortex-M55
 * as a predicated vcvt its assembler rejects). */
static ptec_status run_from_bool(ptec_op *op, const to_copy_state *s)
{
    const ptec_tensor *t_in = ptec_op_tensor(op, 0), *t_out = ptec_op_tensor(op, 3);
    const uint8_t *b = t_in->data;
    uint32_t n = t_out->numel;
    if (s->out_dtype == PTEC_DTYPE_LONG) {
        for (uint32_t i = 0; i < n; ++i) {
            ((int64_t *)t_out->data)[i] = b[i] != 0u ? 1 : 0;
        }
    } else if (s->out_dtype == PTEC_DTYPE_INT) {
        for (uint32_t i = 0; i < n; ++i) {
            ((int32_t *)t_out->data)[i] = b[i] != 0u ? 1 : 0;
        }
    } else {
        for (uint32_t i = 0; i < n; ++i) {
            ((float *)t_out->data)[i] = b[i] != 0u ? 1.0f : 0.0f;
        }
    }
    return PTEC_OK;
}

/* Element i of an integer tensor, widened exactly to int64. */
static int64_t int_element(uint8_t dtype, const void *data, uint32_t i)
{
    switch (dtype) {
    case PTEC_DTYPE_LONG: return ((const int64_t *)data)[i];
    case PTEC_DTYPE_INT: return ((const int32_t *)data)[i];
    case PTEC_DTYPE_SHORT: return ((const int16_t *)data)[i];
    case PTEC_DTYPE_CHAR: return ((const int8_t *)data)[i];
    default: return ((const uint8_t *)data)[i];
    }
}

/* Between integer types: the low bits of the two's complement value (no
 * implementation-defined narrowing: through unsigned types and memcpy). */
static ptec_status run_int_to_int(ptec_op *op, const to_copy_state *s)
{
    const ptec_tensor *t_in = ptec_op_tensor(op, 0), *t_out = ptec_op_tensor(op, 3);
    uint8_t *y = t_out->data;
    for (uint32_t i = 0; i < t_out->numel; ++i) {
        uint64_t bits = (uint64_t)int_element(s->dtype, t_in->data, i);
        switch (s->out_dtype) {
        case PTEC_DTYPE_LONG: memcpy(y + (size_t)i * 8u, &bits, 8u); break;
        case PTEC_DTYPE_INT: {
            uint32_t low = (uint32_t)bits;
            memcpy(y + (size_t)i * 4u, &low, 4u);
            break;
        }
        case PTEC_DTYPE_SHORT: {
            uint16_t low = (uint16_t)bits;
            memcpy(y + (size_t)i * 2u, &low, 2u);
            break;
        }
        default: y[i] = (uint8_t)bits; break; /* int8 and uint8: one byte */
        }
    }
    return PTEC_OK;
}

/* An integer or float32 into float64, or float64 into float32: C's conversions. */
static ptec_status run_double(ptec_op *op, const to_copy_state *s)
{
    const ptec_tensor *t_in = ptec_op_tensor(op, 0), *t_out = ptec_op_tensor(op, 3);
    uint32_t n = t_out->numel;
    if (s->dtype == PTEC_DTYPE_FLOAT) {
        const float *x = t_in->data;
        double *y = t_out->data;
        for (uint32_t i = 0; i < n; ++i) {
            y[i] = (double)x[i];
        }
        return PTEC_OK;
    }
    if (s->dtype == PTEC_DTYPE_DOUBLE) {
        const double *x = t_in->data;
        float *y = t_out->data;
        for (uint32_t i = 0; i < n; ++i) {
            y[i] = (float)x[i];
        }
        return PTEC_OK;
    }
    double *y = t_out->data;
    for (uint32_t i = 0; i < n; ++i) {
        y[i] = (double)int_element(s->dtype, t_in->data, i);
    }
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const to_copy_state *s = op->state;
    if (integer(s->dtype) && integer(s->out_dtype) && s->dtype != s->out_dtype) {
        return run_int_to_int(op, s);
    }
    if (s->dtype == PTEC_DTYPE_DOUBLE || s->out_dtype == PTEC_DTYPE_DOUBLE) {
        return run_double(op, s);
    }
    if (s->dtype == PTEC_DTYPE_BOOL) {
        return run_from_bool(op, s);
    }
    if (s->out_dtype == PTEC_DTYPE_HALF || s->out_dtype == PTEC_DTYPE_BFLOAT16) {
        return run_to_16_bit_float(op, s);
    }
    if (s->dtype == PTEC_DTYPE_HALF || s->dtype == PTEC_DTYPE_BFLOAT16) {
        return run_from_16_bit_float(op, s);
    }
    if (s->out_dtype != PTEC_DTYPE_FLOAT) {
        return run_to_index(op, s);
    }
    const ptec_tensor *t_in = ptec_op_tensor(op, 0), *t_out = ptec_op_tensor(op, 3);
    float *y = t_out->data;
    uint32_t n = t_out->numel;
    /* Same sizes and dim order: element i of one is element i of the other. */
    for (uint32_t i = 0; i < n; ++i) {
        switch (s->dtype) {
        case PTEC_DTYPE_LONG: y[i] = (float)((const int64_t *)t_in->data)[i]; break;
        case PTEC_DTYPE_INT: y[i] = (float)((const int32_t *)t_in->data)[i]; break;
        case PTEC_DTYPE_SHORT: y[i] = (float)((const int16_t *)t_in->data)[i]; break;
        case PTEC_DTYPE_CHAR: y[i] = (float)((const int8_t *)t_in->data)[i]; break;
        case PTEC_DTYPE_BYTE: y[i] = (float)((const uint8_t *)t_in->data)[i]; break;
        default: y[i] = ((const float *)t_in->data)[i]; break;
        }
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_dim_order_to_copy_out = {"dim_order_ops::_to_dim_order_copy.out",
                                                       sizeof(to_copy_state), prepare, run};
