/* The host link: how a runner application (firmware/runner) talks to
 * whatever started it, without knowing what that is. Where the program and
 * the input bytes come from, where reports and results go, and how a run
 * ends. The QEMU boards implement it with memory slots that
 * scripts/run_qemu.sh fills, the console and semihosting's exit
 * (boards/common_mps/qemu_host_link.c); a board started by Linux
 * remoteproc would use DDR and RPMsg instead. board.cmake names the
 * implementation (PTEC_BOARD_HOST_LINK). */
#ifndef PTEC_HOST_LINK_H
#define PTEC_HOST_LINK_H

#include <stddef.h>
#include <stdint.h>

typedef struct ptec_host_bytes {
    const uint8_t *data;  /* NULL: the host gave nothing */
    size_t size;          /* bytes given; 0 when the host did not say */
    size_t capacity;      /* bytes readable at data; 0 when unknown */
    const char *origin;   /* where they came from, for reports */
} ptec_host_bytes;

/* Where the host put a program (data is never NULL on a board with a
 * program slot; size may be 0: then only the program's own header says). */
void ptec_host_link_program(ptec_host_bytes *program);

/* The input bytes the host gave: data NULL when none. */
void ptec_host_link_input(ptec_host_bytes *input);

/* Report and result text, in order. */
void ptec_host_link_write(const char *text, size_t len);

/* Ends the run; the host sees `status` (0 ok). */
_Noreturn void ptec_host_link_end(int status);

#endif
