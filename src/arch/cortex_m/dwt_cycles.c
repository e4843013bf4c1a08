/* A tick counter any Armv7-M/Armv8-M core with a DWT has: core clock
 * cycles (DWT CYCCNT), for boards on silicon. QEMU does not model cycles
 * (CYCCNT reads 0 there), so the QEMU boards count instructions instead
 * (boards/common_mps/fpgaio_icount.c). A board names its counter in
 * board.cmake (PTEC_BOARD_COUNTER). */
#include <stdint.h>

#include "ptec/platform.h"

#define DEMCR (*(volatile uint32_t *)0xE000EDFCu)
#define DWT_CTRL (*(volatile uint32_t *)0xE0001000u)
#define DWT_CYCCNT (*(volatile const uint32_t *)0xE0001004u)
#define DEMCR_TRCENA (1u << 24)
#define DWT_CTRL_CYCCNTENA 1u

ptec_tick_unit ptec_platform_tick_unit(void)
{
    return PTEC_TICKS_CYCLES;
}

/* Cycles since the first call, extended to 64 bit: calls must be less than
 * 2^32 cycles apart (about 21 s at 200 MHz) for the wraps to be counted. */
uint64_t ptec_platform_ticks(void)
{
    static uint32_t last;
    static uint64_t cycles;
    static int started;
    if (!started) {
        DEMCR |= DEMCR_TRCENA;
        DWT_CTRL |= DWT_CTRL_CYCCNTENA;
        last = DWT_CYCCNT;
        started = 1;
    }
    const uint32_t now = DWT_CYCCNT;
    cycles += (uint32_t)(now - last); /* modulo 2^32 */
    last = now;
    return cycles;
}
