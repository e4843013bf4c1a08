/* Console on LPUART2 (the M33's debug UART on NXP's boards), mirrored into
 * the remoteproc trace buffer. The firmware is started by Linux, which has
 * the UART's clock root at its 24 MHz default: 115200 baud is then
 * OSR 16 (field 15) and SBR 13. LPUART registers: BAUD 0x10, STAT 0x14
 * (TDRE bit 23), CTRL 0x18 (TE bit 19), DATA 0x1C. A remoteproc firmware
 * has nobody to exit to: an exit logs its code and parks the core until
 * Linux stops it. */
#include <string.h>

#include "board_config.h"
#include "imx93_board.h"
#include "ptec_board.h"

#define LPUART(offset) (*(volatile uint32_t *)(uintptr_t)(PTEC_IMX93_LPUART2_BASE + (offset)))
#define LPUART_BAUD LPUART(0x10u)
#define LPUART_STAT LPUART(0x14u)
#define LPUART_CTRL LPUART(0x18u)
#define LPUART_DATA LPUART(0x1Cu)
#define STAT_TDRE (1u << 23)
#define CTRL_TE (1u << 19)
#define BAUD_115200_AT_24MHZ ((15u << 24) | 13u)
/* A UART whose clock is off never drains: give up rather than hang. */
#define TX_SPINS 20000u

static int uart_ready;

void ptec_board_console_init(void)
{
    if ((LPUART_CTRL & CTRL_TE) == 0u) {
        LPUART_BAUD = BAUD_115200_AT_24MHZ;
        LPUART_CTRL |= CTRL_TE;
    }
    uart_ready = 1;
}

void ptec_board_console_write(const char *data, size_t len)
{
    imx93_trace_write(data, len);
    for (size_t i = 0; i < len && uart_ready; ++i) {
        uint32_t spin = 0;
        while ((LPUART_STAT & STAT_TDRE) == 0u) {
            if (++spin == TX_SPINS) {
                uart_ready = 0; /* no clock: the trace buffer still has it all */
                return;
            }
        }
        LPUART_DATA = (uint8_t)data[i];
    }
}

void ptec_board_console_puts(const char *text)
{
    ptec_board_console_write(text, strlen(text));
}

_Noreturn void ptec_board_exit(int code)
{
    char line[] = "ptec: firmware stopped, status 000\n";
    const unsigned value = (unsigned)code % 1000u;
    line[31] = (char)('0' + value / 100u);
    line[32] = (char)('0' + value / 10u % 10u);
    line[33] = (char)('0' + value % 10u);
    ptec_board_console_puts(line);
    for (;;) {
        __asm__ volatile("wfi");
    }
}
