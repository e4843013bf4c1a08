/* The NPU lines of a runner's report: what one EthosUBackend call did
 * (include/ptec/ethos_u.h), as the host and firmware runners print it. */
#include <stdio.h>

#include "ptec_runner_lib.h"

const char *ptec_runner_npu_call_text(const ptec_ethos_u_call *call, char *text, size_t size)
{
    char commands[21], dma[21], macs[21];
    if (call->driver_result != 0) {
        snprintf(text, size, "delegate %u: NPU driver failed (%d)", (unsigned)call->delegate_index,
                 call->driver_result);
    } else if (!call->have_stats) {
        snprintf(text, size, "delegate %u: n/a commands, n/a bytes DMA, n/a MACs (the driver keeps no counters)",
                 (unsigned)call->delegate_index);
    } else {
        snprintf(text, size, "delegate %u: %s commands, %s bytes DMA, %s MACs", (unsigned)call->delegate_index,
                 ptec_runner_u64_text(call->commands, commands), ptec_runner_u64_text(call->dma_bytes, dma),
                 ptec_runner_u64_text(call->macs, macs));
    }
    return text;
}
