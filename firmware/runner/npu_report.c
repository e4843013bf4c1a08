/* The runner's NPU lines (builds with the EthosUBackend, PTEC_ETHOSU): what
 * each delegate's NPU call did, from the backend's per-call hook
 * (include/ptec/ethos_u.h). A stream does the same work on every inference,
 * so each delegate is reported once, plus every failed call. */
#include "ptec_runner_lib.h"
#include "report.h"

void ptec_ethos_u_call_done(const ptec_ethos_u_call *call)
{
    static uint32_t reported; /* bit i: delegate i has had its line */
    const uint32_t bit = call->delegate_index < 32u ? 1u << call->delegate_index : 0u;
    if ((reported & bit) != 0 && call->driver_result == 0) {
        return;
    }
    reported |= bit;
    char text[PTEC_RUNNER_NPU_TEXT];
    report("npu: %s\n", ptec_runner_npu_call_text(call, text, sizeof text));
}
