/* What the host tells a firmware at boot on the QEMU MPS boards:
 * scripts/run_qemu.sh writes it with QEMU's -device loader at the linker
 * symbol `ptec_boot_info`, next to the program and input it places in
 * memory. All zero when nothing did. Only the QEMU host link
 * (qemu_host_link.c) and board tests read it. */
#ifndef PTEC_QEMU_BOOT_INFO_H
#define PTEC_QEMU_BOOT_INFO_H

#include <stdint.h>

#define PTEC_BOOT_INFO_MAGIC 0x49425450u /* "PTBI" */
typedef struct ptec_boot_info {
    uint32_t magic;
    uint32_t model_size;  /* bytes of the program at the program slot, or 0 */
    uint32_t input_size;  /* bytes at the input slot, or 0 */
    uint32_t reserved;
} ptec_boot_info_t;

extern volatile const ptec_boot_info_t ptec_boot_info;
/* Memory the firmware does not own, for a program and inputs placed there
 * (addresses in the board's linker script). Use their addresses, not their
 * values. */
extern const uint8_t __ptec_model_slot[];
extern const uint8_t __ptec_model_slot_size[];
extern const uint8_t __ptec_input_slot[];
extern const uint8_t __ptec_input_slot_size[];

#endif
