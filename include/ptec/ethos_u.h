/* The EthosUBackend delegate (src/backends/ethos_u), as runners see it:
 * which NPU the build drives, and what each delegate call did. The backend
 * itself is found like any other, by name, through the backend table. */
#ifndef PTEC_ETHOS_U_H
#define PTEC_ETHOS_U_H

#include <stdint.h>

/* The NPU this build drives (PTEC_ETHOSU_TARGET): its Vela accelerator name
 * and the CONFIG word Vela writes for it (spec ethos-u-npu.md §2); NULL and 0
 * when the build names an NPU the backend does not know. */
const char *ptec_ethos_u_target_name(void);
uint32_t ptec_ethos_u_target_config(void);

/* One EthosUBackend execute, as the NPU driver reported it. */
typedef struct ptec_ethos_u_call {
    uint32_t delegate_index; /* position in the method's delegate list */
    int driver_result;       /* ethosu_invoke_v3's return: 0 ok */
    int have_stats;          /* 0: the driver keeps no counters (Arm's driver on hardware) */
    uint32_t commands;       /* command-stream commands run */
    uint64_t dma_bytes;      /* bytes moved by the NPU's DMA */
    uint64_t macs;           /* multiply-accumulates */
} ptec_ethos_u_call;

/* Called by the backend after every driver invoke, failed ones included. The
 * backend's definition is weak and does nothing: a runner defines its own to
 * report the calls (tools/ptec-run, firmware/runner). */
void ptec_ethos_u_call_done(const ptec_ethos_u_call *call);

#endif
