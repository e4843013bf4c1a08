/* Services a board gives a bare-metal application (firmware/): raw console
 * output, exit status to the host, and the raw cycle/instruction counter.
 * The portable hooks in include/ptec/platform.h are built on these. */
#ifndef PTEC_BOARD_H
#define PTEC_BOARD_H

#include <stddef.h>
#include <stdint.h>

/* Exit status of a firmware that took a fault: 100 + exception number,
 * so HardFault exits 103, BusFault 105, UsageFault 106, SecureFault 107. */
#define PTEC_BOARD_EXIT_FAULT_BASE 100

const char *ptec_board_name(void);

/* Called by the fault handler after its report, before the exit: an
 * application may define it to say what it was doing (raw console only).
 * The board's default does nothing. */
void ptec_board_on_fault(void);

/* ptec_platform_log drops lines below `level` (a ptec_log_level; a value
 * above PTEC_LOG_ERROR silences it). Default: everything is shown. */
void ptec_board_set_log_threshold(int level);

/* Writes bytes to the console without stdio; safe inside fault handlers. */
void ptec_board_console_write(const char *data, size_t len);
void ptec_board_console_puts(const char *text);

/* Ends the emulation with `code` as QEMU's exit status (semihosting
 * SYS_EXIT_EXTENDED). Needs -semihosting-config enable=on. */
_Noreturn void ptec_board_exit(int code);

/* The free-running FPGAIO COUNTER (32 bit, 20 MHz of virtual time). */
uint32_t ptec_board_counter(void);

/* Instructions executed since reset: the counter extended to 64 bit (its
 * wraps are counted with the FPGAIO 100 Hz clock, so calls may be any
 * distance apart) and converted with QEMU's -icount shift=10 (one
 * instruction = 20.48 ticks). Costs the same instructions on every call. */
uint64_t ptec_board_instructions(void);

/* What the host tells the firmware at boot: scripts/run_qemu.sh writes it
 * with QEMU's -device loader at the linker symbol `ptec_boot_info`, next to
 * the program and input it places in memory. All zero when nothing did. */
#define PTEC_BOOT_INFO_MAGIC 0x49425450u /* "PTBI" */
typedef struct ptec_boot_info {
    uint32_t magic;
    uint32_t model_size;  /* bytes of the program at the program slot, or 0 */
    uint32_t input_size;  /* bytes at the input slot, or 0 */
    uint32_t reserved;
} ptec_boot_info_t;

extern volatile const ptec_boot_info_t ptec_boot_info;
/* Memory the firmware does not own, for a program and inputs placed there
 * (addresses in docs/targets.md). Use their addresses, not their values. */
extern const uint8_t __ptec_model_slot[];
extern const uint8_t __ptec_model_slot_size[];
extern const uint8_t __ptec_input_slot[];
extern const uint8_t __ptec_input_slot_size[];

#endif
