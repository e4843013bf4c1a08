/* The i.MX93 M33 board (boards/imx93_m33) simulated on QEMU's mps2-an505,
 * whose M33 is the same core: the same region sizes at AN505 addresses
 * (code 128 KiB at 0x10000000, data 108 KiB at 0x38000000), and DDR as
 * QEMU's 16 MiB PSRAM at 0x80000000, backed by a file that
 * tools/ptec-rproc maps too. In that DDR: the model at 0x80100000 (as on
 * the board), the rings at 0x80E00000 (on the board 0xA4000000, outside
 * AN505's 16 MiB), and the live resource table, which Linux would write to
 * system TCM, at 0x80FFE000. The doorbell is polling: no MU in QEMU. */
#ifndef PTEC_BOARD_CONFIG_H
#define PTEC_BOARD_CONFIG_H

#define PTEC_IMX93_NAME "imx93_m33_sim"

#ifndef PTEC_IMX93_MODEL_ADDR
#define PTEC_IMX93_MODEL_ADDR 0x80100000u
#endif
#ifndef PTEC_IMX93_MODEL_BYTES
#define PTEC_IMX93_MODEL_BYTES 0xD00000u /* up to the rings */
#endif

#define PTEC_IMX93_LIVE_RSC_TABLE 0x80FFE000u
#define PTEC_IMX93_LIVE_RSC_TABLE_BYTES 0x1000u

#define PTEC_IMX93_VRING0 0x80E00000u
#define PTEC_IMX93_VRING1 0x80E08000u
#define PTEC_IMX93_VRING_NUM 256u
#define PTEC_IMX93_VRING_ALIGN 0x1000u
#define PTEC_IMX93_SHARED_BASE 0x80E00000u
#define PTEC_IMX93_SHARED_BYTES 0x100000u /* rings, then buffers from 0x80E10000 */

#define PTEC_IMX93_HAS_MU 0

/* The console and counter of the AN505 (boards/common_mps). */
#define PTEC_BOARD_UART0_BASE 0x50200000u
#define PTEC_BOARD_FPGAIO_COUNTER_HZ 20000000u
#define PTEC_BOARD_FPGAIO_BASE 0x50302000u

#endif
