/* Overflow-checked size arithmetic. Every size, offset and count the runtime
 * derives from a file goes through these, so that a sum that would wrap on a
 * 32-bit size_t (two 2 GiB planned buffers) or a 64-bit one fails instead of
 * giving a small number. Each returns false, leaving *out alone, when the
 * exact result does not fit. */
#ifndef PTEC_RUNTIME_CHECKED_MATH_H
#define PTEC_RUNTIME_CHECKED_MATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

static inline bool ptec_add_size(size_t a, size_t b, size_t *out)
{
    if (b > SIZE_MAX - a) {
        return false;
    }
    *out = a + b;
    return true;
}

static inline bool ptec_mul_size(size_t a, size_t b, size_t *out)
{
    if (a != 0 && b > SIZE_MAX / a) {
        return false;
    }
    *out = a * b;
    return true;
}

/* n rounded up to a multiple of `align`, a power of two. */
static inline bool ptec_align_size(size_t n, size_t align, size_t *out)
{
    if (n > SIZE_MAX - (align - 1u)) {
        return false;
    }
    *out = (n + (align - 1u)) & ~(align - 1u);
    return true;
}

/* a * b when it is at most `limit`. */
static inline bool ptec_mul_u64(uint64_t a, uint64_t b, uint64_t limit, uint64_t *out)
{
    /* From 32-bit halves, without a division: on a 32-bit core a 64-bit
     * one is a library call (__aeabi_uldivmod). a * b = hi * 2^64 +
     * cross * 2^32 + lo, each term checked to stay below 2^64. */
    const uint64_t a_hi = a >> 32, b_hi = b >> 32, a_lo = a & 0xffffffffu, b_lo = b & 0xffffffffu;
    if (a_hi != 0 && b_hi != 0) {
        return false;
    }
    const uint64_t cross = a_hi * b_lo + b_hi * a_lo; /* one of the two is 0 */
    if (cross > 0xffffffffu) {
        return false;
    }
    const uint64_t lo = a_lo * b_lo;
    const uint64_t product = lo + (cross << 32);
    if (product < lo || product > limit) {
        return false;
    }
    *out = product;
    return true;
}

/* a + b, or UINT64_MAX when that does not fit (for costs, where a ceiling is
 * the safe answer). */
static inline uint64_t ptec_add_sat_u64(uint64_t a, uint64_t b)
{
    return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

#endif
