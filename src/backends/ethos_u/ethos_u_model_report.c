/* The report hook (ethos_u_driver_api.h) over ptec's NPU model in direct
 * driver mode: the counters and the fault of the last ethosu_invoke_v3, read
 * from the model instance behind the driver API. Built only when the model
 * is the driver (PTEC_ETHOSU_DRIVER=model). */
#include "backends/ethos_u/ethos_u_driver_api.h"
#include "npu_model.h"

int ptec_ethos_u_npu_last_report(ptec_ethos_u_npu_report *out)
{
    const ptec_npu_model *model = ptec_npu_model_driver_state();
    const ptec_npu_stats *stats = ptec_npu_model_stats(model);
    const ptec_npu_fault *fault = ptec_npu_model_fault(model);
    out->commands = stats->commands;
    out->dma_bytes = stats->dma_bytes;
    out->macs = stats->macs;
    out->status = fault->status;
    out->qread = fault->qread;
    out->command_index = fault->command_index;
    out->fault = fault->detail;
    return 0;
}
