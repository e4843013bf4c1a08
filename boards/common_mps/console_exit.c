/* Console and exit on the QEMU MPS2/MPS3 boards: the CMSDK UART0 (or
 * semihosting, with PTEC_BOARD_CONSOLE_SEMIHOSTING) and semihosting's
 * SYS_EXIT_EXTENDED. The UART address comes from the board's board_config.h. */
#include <string.h>

#include "board_config.h"
#include "cmsdk_uart.h"
#include "ptec_board.h"
#include "semihosting.h"

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
