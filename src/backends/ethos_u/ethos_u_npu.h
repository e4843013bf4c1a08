/* What the EthosUBackend reads from a blob's compile specs: which NPU it
 * was compiled for, against the NPU this build drives (PTEC_ETHOSU_TARGET:
 * the `target` compile spec and the COP1 config word), and the fast scratch
 * its stream uses. */
#ifndef PTEC_ETHOS_U_NPU_H
#define PTEC_ETHOS_U_NPU_H

#include <stddef.h>
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

/* ethos_u_fast_scratch.c: the fast scratch the blob's stream uses (its
 * "ptec_fast_scratch_bytes" compile spec; 0 without one), or
 * PTEC_INVALID_PROGRAM with *detail when the spec is not a byte count. */
ptec_status ptec_ethos_u_fast_scratch_spec(const ptec_delegate_blob *blob, uint32_t *bytes, const char **detail);
/* "0".."4294967295" (1 to 10 digits, nothing else) to *out: 0, else -1. */
int ptec_ethos_u_parse_byte_count(const uint8_t *text, size_t len, uint32_t *out);

#endif
