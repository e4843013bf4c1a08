/* Arm MPS2+ FPGA image AN505 (Cortex-M33 with DSP) as QEMU's mps2-an505
 * models it. Secure aliases throughout: the core boots Secure, SAU off. */
#ifndef PTEC_BOARD_CONFIG_H
#define PTEC_BOARD_CONFIG_H

#define PTEC_BOARD_UART0_BASE 0x50200000u
#define PTEC_BOARD_FPGAIO_COUNTER_HZ 20000000u /* QEMU's FPGAIO prescale clock */
#define PTEC_BOARD_FPGAIO_BASE 0x50302000u

#endif
