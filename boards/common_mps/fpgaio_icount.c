/* The tick counter of the QEMU MPS2/MPS3 boards: executed instructions,
 * from the FPGAIO COUNTER under QEMU's -icount shift=10 (one instruction =
 * 1024 ns of virtual time; scripts/run_qemu.sh passes the shift). The
 * counter runs at the board's FPGAIO clock: 20 MHz (20.48 ticks per
 * instruction) on the AN505 and AN547, 25 MHz (25.6) on the Armv7-M MPS2
 * images. The FPGAIO address and clock come from the board's
 * board_config.h. */
#include <stdint.h>

#include "board_config.h"
#include "ptec/platform.h"

#define FPGAIO_CLK100HZ_OFFSET 0x14u
#define FPGAIO_COUNTER_OFFSET 0x18u
#define COUNTER_TICKS_PER_CENTISECOND (PTEC_BOARD_FPGAIO_COUNTER_HZ / 100u)
/* instructions = ticks / (Hz * 1024 ns) = ticks * (5e8 / Hz) / 512: an
 * integer multiplier for the boards' 20 MHz (25) and 25 MHz (20). */
#define INSTRUCTIONS_PER_TICK_X512 (500000000u / PTEC_BOARD_FPGAIO_COUNTER_HZ)
_Static_assert(500000000u % PTEC_BOARD_FPGAIO_COUNTER_HZ == 0u,
               "the FPGAIO clock must divide 5e8 for the exact multiply-shift conversion");

static uint32_t fpgaio_counter(void)
{
    return *(volatile const uint32_t *)(PTEC_BOARD_FPGAIO_BASE + FPGAIO_COUNTER_OFFSET);
}

static uint32_t fpgaio_centiseconds(void)
{
    return *(volatile const uint32_t *)(PTEC_BOARD_FPGAIO_BASE + FPGAIO_CLK100HZ_OFFSET);
}

ptec_tick_unit ptec_platform_tick_unit(void)
{
    return PTEC_TICKS_INSTRUCTIONS;
}

/* Instructions executed since reset: the counter extended to 64 bit (its
 * wraps are counted with the FPGAIO 100 Hz clock, so calls may be any
 * distance apart). Costs the same instructions on every call. */
uint64_t ptec_platform_ticks(void)
{
    static uint32_t last_counter;
    static uint32_t last_centiseconds;
    static uint64_t instructions;
    const uint32_t now = fpgaio_counter();
    const uint32_t centiseconds = fpgaio_centiseconds();
    const uint32_t delta = now - last_counter; /* modulo 2^32 */
    /* The counter wraps every ~209.7 M (20 MHz) or ~167.8 M (25 MHz)
     * instructions. The 100 Hz clock does not wrap for years of virtual
     * time and is exact to within one centisecond of ticks, which says
     * how many whole wraps happened since the last call: the rounded
     * (coarse - delta) / 2^32. */
    const uint64_t coarse = (uint64_t)(centiseconds - last_centiseconds) * COUNTER_TICKS_PER_CENTISECOND;
    const uint64_t wraps = (coarse + 0x80000000u - delta) >> 32;
    const uint64_t ticks = (wraps << 32) + delta;
    last_counter = now;
    last_centiseconds = centiseconds;
    /* ticks / 20.48 = ticks * 25 / 512 (20 MHz), rounded. Each delta is
     * converted on its own: a delta is within one tick of 20.48 (or 25.6)
     * per instruction, so the rounding is exact, whereas summing ticks first would let QEMU's
     * per-read truncation drift the total. Multiply, add and shift only, so
     * a call costs the same number of instructions whatever the values and
     * a measured region's count does not depend on them. */
    instructions += (ticks * INSTRUCTIONS_PER_TICK_X512 + 256u) >> 9;
    return instructions;
}
