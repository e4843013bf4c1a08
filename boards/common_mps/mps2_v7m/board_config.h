/* The Armv7-M MPS2 FPGA images as QEMU models them: AN385 (Cortex-M3),
 * AN386 (Cortex-M4) and AN500 (Cortex-M7) share these device addresses
 * and the 25 MHz system clock (no security states, one address map). */
#ifndef PTEC_BOARD_CONFIG_H
#define PTEC_BOARD_CONFIG_H

#define PTEC_BOARD_UART0_BASE 0x40004000u
#define PTEC_BOARD_FPGAIO_COUNTER_HZ 25000000u /* QEMU's FPGAIO prescale clock (SYSCLK) */
#define PTEC_BOARD_FPGAIO_BASE 0x40028000u

#endif
