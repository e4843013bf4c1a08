/* Arm MPS2 FPGA image AN385 (Cortex-M3, no DSP, no FPU) as QEMU's mps2-an385
 * models it (Armv7-M: no security states, one address map). */
#ifndef PTEC_BOARD_CONFIG_H
#define PTEC_BOARD_CONFIG_H

#define PTEC_BOARD_UART0_BASE 0x40004000u
#define PTEC_BOARD_FPGAIO_COUNTER_HZ 25000000u /* QEMU's FPGAIO prescale clock (SYSCLK) */
#define PTEC_BOARD_FPGAIO_BASE 0x40028000u

#endif
