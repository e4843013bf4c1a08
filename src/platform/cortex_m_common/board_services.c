/* Console, exit and counter for the MPS2/MPS3 boards. The addresses come
 * from the board's board_config.h; everything else is shared. */
#include <string.h>

#include "board_config.h"
#include "cmsdk_uart.h"
#include "ptec_board.h"
#include "semihosting.h"

#define FPGAIO_CLK100HZ_OFFSET 0x14u
#define FPGAIO_COUNTER_OFFSET 0x18u
#define COUNTER_TICKS_PER_CENTISECOND 200000u /* 20 MHz / 100 Hz */

const char *ptec_board_name(void)
{
    return PTEC_BOARD_NAME;
}

#if defined(PTEC_BOARD_CONSOLE_SEMIHOSTING)
/* SYS_WRITE on ":tt" reaches the host's stdout; SYS_WRITE0 would go to
 * stderr and interleave unpredictably with it. */
static uintptr_t console_handle(void)
{
    static uintptr_t handle;
    static int opened;
    if (!opened) {
        const uintptr_t args[3] = {(uintptr_t)":tt", 4u /* "w" */, 3u};
        handle = semihosting_call(SEMIHOSTING_SYS_OPEN, args);
        opened = 1;
    }
    return handle;
}

void ptec_board_console_init(void)
{
}

void ptec_board_console_write(const char *data, size_t len)
{
    const uintptr_t args[3] = {console_handle(), (uintptr_t)data, len};
    (void)semihosting_call(SEMIHOSTING_SYS_WRITE, args);
}
#else
void ptec_board_console_init(void)
{
    cmsdk_uart_init(PTEC_BOARD_UART0_BASE);
}

void ptec_board_console_write(const char *data, size_t len)
{
    cmsdk_uart_write(PTEC_BOARD_UART0_BASE, data, len);
}
#endif

void ptec_board_console_puts(const char *text)
{
    ptec_board_console_write(text, strlen(text));
}

_Noreturn void ptec_board_exit(int code)
{
    const uintptr_t block[2] = {SEMIHOSTING_ADP_STOPPED_APPLICATION_EXIT, (uintptr_t)code};
    (void)semihosting_call(SEMIHOSTING_SYS_EXIT_EXTENDED, block);
    /* Only reached when the host ignored the request. */
    for (;;) {
        __asm__ volatile("wfi");
    }
}

uint32_t ptec_board_counter(void)
{
    return *(volatile const uint32_t *)(PTEC_BOARD_FPGAIO_BASE + FPGAIO_COUNTER_OFFSET);
}

static uint32_t fpgaio_centiseconds(void)
{
    return *(volatile const uint32_t *)(PTEC_BOARD_FPGAIO_BASE + FPGAIO_CLK100HZ_OFFSET);
}

uint64_t ptec_board_instructions(void)
{
    static uint32_t last_counter;
    static uint32_t last_centiseconds;
    static uint64_t instructions;
    const uint32_t now = ptec_board_counter();
    const uint32_t centiseconds = fpgaio_centiseconds();
    const uint32_t delta = now - last_counter; /* modulo 2^32 */
    /* The 20 MHz counter wraps every ~209.7 M instructions. The 100 Hz
     * clock does not wrap for years of virtual time and is exact to within
     * 200,000 ticks, which says how many whole wraps happened since the
     * last call: the rounded (coarse - delta) / 2^32. */
    const uint64_t coarse = (uint64_t)(centiseconds - last_centiseconds) * COUNTER_TICKS_PER_CENTISECOND;
    const uint64_t wraps = (coarse + 0x80000000u - delta) >> 32;
    const uint64_t ticks = (wraps << 32) + delta;
    last_counter = now;
    last_centiseconds = centiseconds;
    /* ticks / 20.48 = ticks * 25 / 512, rounded. Each delta is converted on
     * its own: a delta is within one tick of 20.48 per instruction, so the
     * rounding is exact, whereas summing ticks first would let QEMU's
     * per-read truncation drift the total. Multiply, add and shift only, so
     * a call costs the same number of instructions whatever the values and
     * a measured region's count does not depend on them. */
    instructions += (ticks * 25u + 256u) >> 9;
    return instructions;
}
