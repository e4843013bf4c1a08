/* Which NPU a blob was compiled for, against the NPU this build drives
 * (PTEC_ETHOSU_TARGET): the `target` compile spec and the COP1 config word. */
#ifndef PTEC_ETHOS_U_NPU_H
#define PTEC_ETHOS_U_NPU_H

#include <stdint.h>

#include "ptec/backend.h"

/* CONFIG word fields (spec ethos-u-npu.md §2). */
#define PTEC_NPU_CONFIG_MACS(c) ((c) & 0xFu)             /* log2(MACs per cycle) */
#define PTEC_NPU_CONFIG_STREAM_VERSION(c) (((c) >> 4) & 0xFu)
#define PTEC_NPU_CONFIG_SHRAM_KIB(c) (((c) >> 8) & 0xFFu)
#define PTEC_NPU_CONFIG_CUSTOM_DMA(c) (((c) >> 27) & 1u)
#define PTEC_NPU_CONFIG_PRODUCT(c) ((c) >> 28)           /* 0 U55, 1 U65, 2 U85 */

/* PTEC_OK when the blob may run on this build's NPU; otherwise *detail names
 * both NPUs (PTEC_DELEGATE_INVALID_COMPATIBILITY) or the contradiction in the
 * blob (PTEC_INVALID_PROGRAM). `config` is the blob's COP1 config word. */
ptec_status ptec_ethos_u_check_npu(const ptec_delegate_blob *blob, uint32_t config, const char **detail);

#endif
