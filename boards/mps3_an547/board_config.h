/* Arm MPS3 FPGA image AN547 (Cortex-M55 with MVE) as QEMU's mps3-an547
 * models it. Secure aliases throughout: the core boots Secure, SAU off. */
#ifndef PTEC_BOARD_CONFIG_H
#define PTEC_BOARD_CONFIG_H

#define PTEC_BOARD_UART0_BASE 0x59303000u
#define PTEC_BOARD_FPGAIO_COUNTER_HZ 20000000u /* QEMU's FPGAIO prescale clock */
#define PTEC_BOARD_FPGAIO_BASE 0x59302000u

#endif
