/* What every bare-metal board gives an application (firmware/) and the arch
 * layer (src/arch/<arch>/): its name, a raw console, an exit status for the
 * host, and fault hooks. The portable hooks of include/ptec/platform.h
 * (log, ticks, tick unit) are built on these by the arch and the board's
 * counter. How a board is made is in docs/porting.md. */
#ifndef PTEC_BOARD_H
#define PTEC_BOARD_H

#include <stddef.h>
#include <stdint.h>

/* Exit status of a firmware that took a fault: 100 + exception number,
 * so HardFault exits 103, BusFault 105, UsageFault 106, SecureFault 107. */
#define PTEC_BOARD_EXIT_FAULT_BASE 100

/* The board's description (board.cmake's PTEC_BOARD_DESCRIPTION). */
const char *ptec_board_name(void);

/* Called by the fault handler after its report, before the exit: an
 * application may define it to say what it was doing (raw console only).
 * The default does nothing. */
void ptec_board_on_fault(void);

/* ptec_platform_log drops lines below `level` (a ptec_log_level; a value
 * above PTEC_LOG_ERROR silences it). Default: everything is shown. */
void ptec_board_set_log_threshold(int level);

/* Called once by the arch's reset code, after .data/.bss, before main. */
void ptec_board_console_init(void);
/* Writes bytes to the console without stdio; safe inside fault handlers. */
void ptec_board_console_write(const char *data, size_t len);
void ptec_board_console_puts(const char *text);

/* Ends the run with `code` as the exit status the host sees (on the QEMU
 * boards: semihosting SYS_EXIT_EXTENDED, so QEMU exits with `code`). A board
 * without a host to tell stops the core. */
_Noreturn void ptec_board_exit(int code);

#endif
