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
    if (a != 0 && b > limit / a) {
        return false;
    }
    if (a * b > limit) {
        return false;
    }
    *out = a * b;
    return true;
}

/* a + b, or UINT64_MAX when that does not fit (for costs, where a ceiling is
 * the safe answer). */
static inline uint64_t ptec_add_sat_u64(uint64_t a, uint64_t b)
{
    return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

#endif
