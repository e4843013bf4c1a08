/* The runtime's 64-bit arithmetic without 64-bit division (a library call
 * on a 32-bit core, which firmware must not link: tests/target's
 * check_minimal_symbols.sh): ptec_mul_u64 (checked_math.h) against the
 * host's 128-bit product, and ptec_detail_u64 (detail.c) against printf,
 * at the edges of each half and on pseudo-random values of every width. */
#include <inttypes.h>

#include "runtime/runtime_internal.h"
#include "test_util.h"

static int checks;

static uint64_t state = 0x9e3779b97f4a7c15u;
static uint64_t next_random(void) /* xorshift64*, then a random width */
{
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    uint64_t v = state * 2685821657736338717u;
    return v >> (v & 63u);
}

static void check_mul(uint64_t a, uint64_t b, uint64_t limit)
{
    unsigned __int128 exact = (unsigned __int128)a * b;
    uint64_t got = 0x5a5a5a5a5a5a5a5au;
    bool fits = ptec_mul_u64(a, b, limit, &got);
    bool want = exact <= limit;
    ++checks;
    if (fits != want || (fits && got != (uint64_t)exact) || (!fits && got != 0x5a5a5a5a5a5a5a5au)) {
        fprintf(stderr, "ptec_mul_u64(%" PRIu64 ", %" PRIu64 ", %" PRIu64 "): %d %" PRIu64 "\n", a, b, limit, fits,
                got);
        ++test_failures;
    }
}

static void check_u64(uint64_t v)
{
    ptec_error_detail e;
    ptec_detail_fmt f = {&e, PTEC_OK, 0};
    e.message[0] = '\0';
    ptec_detail_u64(&f, v);
    char want[32];
    snprintf(want, sizeof want, "%" PRIu64, v);
    ++checks;
    if (strcmp(e.message, want) != 0) {
        fprintf(stderr, "ptec_detail_u64(%s) wrote %s\n", want, e.message);
        ++test_failures;
    }
}

int main(void)
{
    static const uint64_t edges[] = {0,
                                     1,
                                     2,
                                     9,
                                     10,
                                     11,
                                     0xffffffffu,
                                     0x100000000u,
                                     0x100000001u,
                                     0x1ffffffffu,
                                     10000000000000000000u,
                                     9999999999999999999u,
                                     0x7fffffffffffffffu,
                                     0x8000000000000000u,
                                     0xfffffffeffffffffu,
                                     0xffffffff00000000u,
                                     UINT64_MAX - 1u,
                                     UINT64_MAX};
    const size_t n = sizeof edges / sizeof edges[0];
    for (size_t i = 0; i < n; ++i) {
        check_u64(edges[i]);
        for (size_t j = 0; j < n; ++j) {
            check_mul(edges[i], edges[j], UINT64_MAX);
            check_mul(edges[i], edges[j], UINT32_MAX);
            check_mul(edges[i], edges[j], edges[(i + j) % n]);
        }
    }
    for (uint64_t p = 1; p <= 10000000000000000000u / 10u; p *= 10u) { /* powers of ten and their neighbours */
        check_u64(p * 10u - 1u);
        check_u64(p * 10u);
        check_u64(p * 10u + 1u);
    }
    for (int k = 0; k < 200000; ++k) {
        uint64_t a = next_random(), b = next_random();
        check_u64(a);
        check_mul(a, b, UINT64_MAX);
        check_mul(a, b, UINT32_MAX);
        check_mul(a, b, next_random());
    }
    return test_summary("wide arithmetic", checks);
}
