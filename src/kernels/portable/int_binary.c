#include "kernels/portable/int_binary.h"

#include <string.h>

#include "kernels/portable/binary_operands.h"
#include "kernels/portable/broadcast.h"

static bool integral(uint8_t dtype)
{
    return dtype == PTEC_DTYPE_INT || dtype == PTEC_DTYPE_LONG;
}

bool ptec_int_binary_applies(ptec_op *op)
{
    ptec_tensor *self;
    return ptec_op_get_tensor(op, 0, &self) == PTEC_OK && integral(self->dtype);
}

ptec_status ptec_int_binary_prepare(ptec_op *op)
{
    int_binary_state *s = op->state;
    ptec_tensor *self, *other, *out;
    ptec_status st;
    if ((st = ptec_binary_operands(op, &self, &other, &out)) != PTEC_OK) {
        return st;
    }
    if (!integral(self->dtype)) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, 0, PTEC_MSG("dtype must be int32 or int64"));
    }
    if ((st = ptec_binary_expect_same_dtype(op, self, other, out)) != PTEC_OK ||
        (st = ptec_binary_onto_out(op, self, other, out)) != PTEC_OK) {
        return st;
    }
    s->flat = ptec_binary_same_layout(self, out) && ptec_binary_same_layout(other, out);
    s->dtype = out->dtype;
    return PTEC_OK;
}

static int64_t load(const uint8_t *p, size_t i, bool wide)
{
    if (wide) {
        int64_t v;
        memcpy(&v, p + i * sizeof v, sizeof v);
        return v;
    }
    int32_t v;
    memcpy(&v, p + i * sizeof v, sizeof v);
    return v;
}

static void store(uint8_t *p, size_t i, bool wide, int64_t v)
{
    if (wide) {
        memcpy(p + i * sizeof v, &v, sizeof v);
    } else {
        int32_t t = (int32_t)v; /* every result of an int32 pair lies in int32 */
        memcpy(p + i * sizeof t, &t, sizeof t);
    }
}

/* b == 0 has no result; nor has least / -1 (one past the largest value),
 * whose remainder C leaves undefined too. */
static bool divisible(int64_t a, int64_t b, int64_t least, const char **why)
{
    if (b == 0) {
        *why = PTEC_MSG("integer division by zero");
        return false;
    }
    if (b == -1 && a == least) {
        *why = PTEC_MSG("the least integer divided by -1 (PyTorch's CPU traps)");
        return false;
    }
    return true;
}

static bool int_floor_divide(int64_t a, int64_t b, int64_t least, int64_t *r, const char **why)
{
    if (!divisible(a, b, least, why)) {
        return false;
    }
    int64_t q = a / b;
    if (a % b != 0 && ((a < 0) != (b < 0))) {
        --q; /* toward minus infinity */
    }
    *r = q;
    return true;
}

static bool int_fmod(int64_t a, int64_t b, int64_t least, int64_t *r, const char **why)
{
    if (!divisible(a, b, least, why)) {
        return false;
    }
    *r = a % b; /* the dividend's sign */
    return true;
}

static bool int_remainder(int64_t a, int64_t b, int64_t least, int64_t *r, const char **why)
{
    if (!divisible(a, b, least, why)) {
        return false;
    }
    int64_t m = a % b;
    if (m != 0 && ((m < 0) != (b < 0))) {
        m += b; /* the divisor's sign, as Python's % */
    }
    *r = m;
    return true;
}

static bool int_and(int64_t a, int64_t b, int64_t least, int64_t *r, const char **why)
{
    (void)least;
    (void)why;
    *r = a & b;
    return true;
}

static bool int_or(int64_t a, int64_t b, int64_t least, int64_t *r, const char **why)
{
    (void)least;
    (void)why;
    *r = a | b;
    return true;
}

static bool int_xor(int64_t a, int64_t b, int64_t least, int64_t *r, const char **why)
{
    (void)least;
    (void)why;
    *r = a ^ b;
    return true;
}

/* b in [0, width): the width is the dtype's (least is its least value) */
static bool shift_in_range(int64_t b, int64_t least, const char **why)
{
    int64_t width = least == INT64_MIN ? 64 : 32;
    if (b < 0 || b >= width) {
        *why = PTEC_MSG("shift amount negative or not below the width");
        return false;
    }
    return true;
}

static bool int_left_shift(int64_t a, int64_t b, int64_t least, int64_t *r, const char **why)
{
    if (!shift_in_range(b, least, why)) {
        return false;
    }
    uint64_t u = (uint64_t)a << b; /* unsigned: the bits shifted out drop, no undefined behaviour */
    memcpy(r, &u, sizeof u);       /* an int32 result keeps the low 32 bits (store) */
    return true;
}

static bool int_right_shift(int64_t a, int64_t b, int64_t least, int64_t *r, const char **why)
{
    if (!shift_in_range(b, least, why)) {
        return false;
    }
    *r = a < 0 ? ~(~a >> b) : a >> b; /* arithmetic, without C's implementation-defined >> of negatives */
    return true;
}

/* v in the dtype whose least value is `least`: an int32 result keeps its low 32 bits */
static int64_t in_width(uint64_t v, int64_t least)
{
    if (least == INT32_MIN) {
        uint32_t low = (uint32_t)v;
        int32_t t;
        memcpy(&t, &low, sizeof t);
        return t;
    }
    int64_t t;
    memcpy(&t, &v, sizeof t);
    return t;
}

/* |v| in the dtype: the least value's is itself (PyTorch's std::abs wraps) */
static int64_t wrapping_abs(int64_t v, int64_t least)
{
    return v < 0 && v != least ? -v : v;
}

/* PyTorch's calc_gcd: Euclid's on the magnitudes; with the least value
 * (whose magnitude stays negative) the result may be negative, as PyTorch's. */
static int64_t euclid(int64_t a, int64_t b, int64_t least)
{
    a = wrapping_abs(a, least);
    b = wrapping_abs(b, least);
    while (a != 0) {
        int64_t c = a;
        a = a == -1 ? 0 : b % a; /* x % -1 is 0; C leaves the least value's undefined */
        b = c;
    }
    return b;
}

static bool int_gcd(int64_t a, int64_t b, int64_t least, int64_t *r, const char **why)
{
    (void)why;
    *r = euclid(a, b, least);
    return true;
}

static bool int_lcm(int64_t a, int64_t b, int64_t least, int64_t *r, const char **why)
{
    int64_t g = euclid(a, b, least);
    if (g == 0) {
        *r = 0;
        return true;
    }
    if (!divisible(a, g, least, why)) {
        return false; /* a == least, g == -1: PyTorch's a / g traps */
    }
    /* a / g is exact; its product with b wraps in the dtype as PyTorch's */
    *r = wrapping_abs(in_width((uint64_t)(a / g) * (uint64_t)b, least), least);
    return true;
}

typedef bool (*int_binary_fn)(int64_t a, int64_t b, int64_t least, int64_t *r, const char **why);

static int_binary_fn function_of(int_binary_kind kind)
{
    switch (kind) {
    case INT_FLOOR_DIVIDE: return int_floor_divide;
    case INT_FMOD: return int_fmod;
    case INT_REMAINDER: return int_remainder;
    case INT_AND: return int_and;
    case INT_OR: return int_or;
    case INT_XOR: return int_xor;
    case INT_LEFT_SHIFT: return int_left_shift;
    case INT_GCD: return int_gcd;
    case INT_LCM: return int_lcm;
    default: return int_right_shift;
    }
}

ptec_status ptec_int_binary_run(ptec_op *op, int_binary_kind kind)
{
    const int_binary_state *s = op->state;
    const int_binary_fn fn = function_of(kind);
    const ptec_tensor *t_out = ptec_op_tensor(op, 2);
    const uint8_t *a = ptec_op_tensor(op, 0)->data, *b = ptec_op_tensor(op, 1)->data;
    uint8_t *y = t_out->data;
    const bool wide = s->dtype == PTEC_DTYPE_LONG;
    const int64_t least = wide ? INT64_MIN : INT32_MIN;
    const char *why = "";
    int64_t r;
    if (s->flat) {
        for (uint32_t i = 0; i < t_out->numel; ++i) {
            if (!fn(load(a, i, wide), load(b, i, wide), least, &r, &why)) {
                return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 1, why);
            }
            store(y, i, wide, r);
        }
        return PTEC_OK;
    }
    static const int args[2] = {0, 1};
    ptec_broadcast w;
    ptec_broadcast_start(&w, op, args, 2, 2);
    for (uint32_t n = 0; n < t_out->numel; ++n, ptec_broadcast_next(&w)) {
        if (!fn(load(a, w.off[0], wide), load(b, w.off[1], wide), least, &r, &why)) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 1, why);
        }
        store(y, w.off[2], wide, r);
    }
    return PTEC_OK;
}
