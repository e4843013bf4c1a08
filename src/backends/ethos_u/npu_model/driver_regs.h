/* Mode (b) (driver_regs.c): the register file Arm's driver programs, for
 * tests that check what the driver wrote (docs/ethos-u.md, "Register-level
 * mode"). Byte offsets as in the NPU's register map. */
#ifndef PTEC_NPU_DRIVER_REGS_H
#define PTEC_NPU_DRIVER_REGS_H

#include <stdint.h>

/* The 4 KiB page handed to ethosu_init as reg_base. */
const volatile uint32_t *ptec_npu_regs_file(void);

/* The bus address ethosu_address_remap gives region `index` (-1: the stream). */
uint64_t ptec_npu_regs_window(int index);

#endif
