/* NXP i.MX93, its Cortex-M33 started by Linux remoteproc (docs/boards/imx93.md).
 * Addresses as the M33 sees them: code TCM through the Secure alias (where
 * the vectors must be), system TCM, MU1 and LPUART2 through the Non-secure
 * aliases NXP's SDK uses. The simulation of this board on QEMU's AN505
 * (boards/imx93_m33_sim) has the same names with AN505 addresses. */
#ifndef PTEC_BOARD_CONFIG_H
#define PTEC_BOARD_CONFIG_H

#define PTEC_IMX93_NAME "imx93_m33"

/* The model, read in place: U-Boot's `fatload mmc 1:1 0x80100000 model.pte`,
 * or `dd ... of=/dev/mem bs=1M seek=2049` from Linux, into a 16 MiB
 * reserved-memory node. PTEC_IMX93_MODEL_ADDR moves it (a build option). */
#ifndef PTEC_IMX93_MODEL_ADDR
#define PTEC_IMX93_MODEL_ADDR 0x80100000u
#endif
#ifndef PTEC_IMX93_MODEL_BYTES
#define PTEC_IMX93_MODEL_BYTES 0x1000000u
#endif

/* Where Linux puts the loaded resource table (the DT's rsc-table node,
 * 0x2021E000 from the A55 = 0x2001E000 here): the live vdev status and
 * notify ids are there, not in the ELF section. */
#define PTEC_IMX93_LIVE_RSC_TABLE 0x2001E000u
#define PTEC_IMX93_LIVE_RSC_TABLE_BYTES 0x1000u

/* vdev 0's rings and the RPMsg buffer pool (DT nodes vdev0vring0/1 and
 * vdevbuffer): the only memory the RPMsg side reads or writes. */
#define PTEC_IMX93_VRING0 0xA4000000u
#define PTEC_IMX93_VRING1 0xA4008000u
#define PTEC_IMX93_VRING_NUM 256u
#define PTEC_IMX93_VRING_ALIGN 0x1000u
#define PTEC_IMX93_SHARED_BASE 0xA4000000u
#define PTEC_IMX93_SHARED_BYTES 0x120000u /* vdev0 and vdev1 rings, then 1 MiB of buffers */

#define PTEC_IMX93_LPUART2_BASE 0x44390000u
#define PTEC_IMX93_MU1_A_BASE 0x44220000u
#define PTEC_IMX93_HAS_MU 1
#define PTEC_IMX93_LPCAC_PS_BASE 0x44400800u /* the M33's system-bus cache (XCACHE registers) */

/* The Ethos-U65-256 beside the M33. */
#define PTEC_IMX93_NPU_BASE 0x4A900000u
#define PTEC_IMX93_NPU_IRQ 178u

#endif
