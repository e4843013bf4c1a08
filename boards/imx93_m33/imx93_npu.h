/* The NPU on the i.MX93 M33 board with Arm's driver (npu_irq.c). */
#ifndef PTEC_IMX93_NPU_H
#define PTEC_IMX93_NPU_H

/* Brings the Ethos-U65 up at its base address with its interrupt; 0 ok. */
int imx93_npu_init(void);

#endif
