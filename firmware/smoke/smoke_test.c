/* Board smoke test: console output, exact instruction counting through
 * ptec_platform_ticks, and the exit status reaching the host.
 * Exits PTEC_SMOKE_EXIT_CODE when every check passes, 1 otherwise. */
#include <stdint.h>
#include <stdio.h>

#include "ptec/platform.h"
#include "ptec_board.h"
#include "ptec_runner_lib.h"

#if defined(__ARM_FEATURE_MVE)
#include <arm_mve.h>
#endif

#ifndef PTEC_SMOKE_EXIT_CODE
#define PTEC_SMOKE_EXIT_CODE 42
#endif

/* Exactly two instructions per iteration. */
__attribute__((noinline)) static void spin(uint32_t iterations)
{
    __asm__ volatile("1: subs %0, %0, #1\n\tbne 1b" : "+r"(iterations) : : "cc");
}

__attribute__((noinline)) static uint64_t measure(uint32_t iterations)
{
    const uint64_t start = ptec_platform_ticks();
    spin(iterations);
    return ptec_platform_ticks() - start;
}

int main(void)
{
    char text[2][21];
    int failures = 0;
    printf("ptec smoke test on %s\n", ptec_board_name());

    const uint64_t base = measure(1000u);
    /* The region holds the loop plus a fixed call overhead, so
     * count(n) - count(1000) must be exactly 2 * (n - 1000). */
    static const uint32_t lengths[] = {1000u, 1001u, 2000u, 100000u, 1000000u};
    for (unsigned i = 0; i < sizeof(lengths) / sizeof(lengths[0]); ++i) {
        const uint64_t count = measure(lengths[i]);
        const uint64_t expected = base + 2u * ((uint64_t)lengths[i] - 1000u);
        const int ok = count == expected;
        failures += !ok;
        printf("icount loop %lu: %s instructions (expected %s) %s\n", (unsigned long)lengths[i],
               ptec_runner_u64_text(count, text[0]), ptec_runner_u64_text(expected, text[1]), ok ? "ok" : "MISMATCH");
    }
    printf("icount overhead per region: %s instructions\n",
           ptec_runner_u64_text(base - 2u * 1000u, text[0]));

#if defined(PTEC_SMOKE_WRAP_TEST)
    /* The 32-bit counter wraps every 2^32 ticks (~209.7 M instructions). A
     * 150 M-instruction region, then a 300 M one that holds a whole wrap:
     * both must stay exact. */
    static const uint32_t long_loops[] = {75000000u, 150000000u};
    for (int i = 0; i < 2; ++i) {
        const uint64_t count = measure(long_loops[i]);
        const uint64_t expected = base + 2u * ((uint64_t)long_loops[i] - 1000u);
        const int ok = count == expected;
        failures += !ok;
        printf("icount across wrap %d: %s instructions %s\n", i, ptec_runner_u64_text(count, text[0]),
               ok ? "ok" : "MISMATCH");
    }
#endif

    /* The FPU (and MVE) work only if reset granted CP10/CP11. */
    volatile float half = 0.5f;
    const int fpu_ok = (int)(half * 9.0f * 100.0f) == 450;
    failures += !fpu_ok;
    printf("fpu: %s\n", fpu_ok ? "ok" : "WRONG");
#if defined(__ARM_FEATURE_MVE)
    volatile int32_t three = 3;
    const int mve_ok = vaddvq_s32(vdupq_n_s32(three)) == 12;
    failures += !mve_ok;
    printf("mve: %s\n", mve_ok ? "ok" : "WRONG");
#endif

    ptec_platform_log(PTEC_LOG_INFO, "platform log reaches the console");
    printf("smoke %s, exiting with %d\n", failures ? "FAILED" : "passed",
           failures ? 1 : PTEC_SMOKE_EXIT_CODE);
    return failures ? 1 : PTEC_SMOKE_EXIT_CODE;
}
