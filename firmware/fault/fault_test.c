/* Takes a fault on purpose, to show that the board reports it and exits
 * non-zero instead of hanging. PTEC_FAULT_KIND picks the fault:
 *   1  load from unmapped memory (BusFault, precise, BFAR valid)
 *   2  undefined instruction (UsageFault UNDEFINSTR)
 *   3  runaway recursion (UsageFault STKOF from the stack limit)
 *   4  integer division by zero (UsageFault DIVBYZERO)
 *   5  no fault: spins forever (for the runner's timeout) */
#include <stdint.h>
#include <stdio.h>

#ifndef PTEC_FAULT_KIND
#define PTEC_FAULT_KIND 1
#endif

#if PTEC_FAULT_KIND == 3
__attribute__((noinline)) static uint32_t recurse(volatile uint32_t *depth)
{
    volatile uint32_t frame[16];
    frame[0] = ++*depth;
    if (frame[0] == 0u) { /* never: keeps the compiler from calling it infinite */
        return 0u;
    }
    return recurse(depth) + frame[0];
}
#endif

int main(void)
{
    printf("fault test %d: about to fault\n", PTEC_FAULT_KIND);
#if PTEC_FAULT_KIND == 1
    volatile uint32_t value = *(volatile uint32_t *)0xF0000000u;
    printf("read %lu: no fault\n", (unsigned long)value);
#elif PTEC_FAULT_KIND == 2
    __asm__ volatile("udf #0");
#elif PTEC_FAULT_KIND == 3
    volatile uint32_t depth = 0;
    printf("no fault: %lu\n", (unsigned long)recurse(&depth));
#elif PTEC_FAULT_KIND == 4
    volatile uint32_t zero = 0;
    volatile uint32_t quotient = 7u / zero;
    printf("7/0 = %lu: no fault\n", (unsigned long)quotient);
#elif PTEC_FAULT_KIND == 5
    for (;;) {
        __asm__ volatile("nop");
    }
#endif
    printf("fault test: still running, which is wrong\n");
    return 0;
}
