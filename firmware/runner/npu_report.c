/* The runner's NPU lines (builds with the EthosUBackend): what each
 * delegate's NPU call did, from the backend's per-call hook
 * (include/ptec/ethos_u.h), and the ticks between the driver's
 * ethosu_inference_begin and ethosu_inference_end hooks: the NPU's time on
 * hardware, the NPU model's on an emulated board (which runs it on the CPU,
 * so the CPU side of an inference is its total minus these). A stream does
 * the same work on every inference, so each delegate is reported once, plus
 * every failed call. */
#include "backends/ethos_u/ethos_u_driver_api.h"
#include "ptec/platform.h"
#include "ptec_runner_lib.h"
#include "report.h"

static uint64_t job_start, job_ticks;

void ethosu_inference_begin(struct ethosu_driver *drv, void *user_arg)
{
    (void)drv;
    (void)user_arg;
    job_start = ptec_platform_ticks();
}

void ethosu_inference_end(struct ethosu_driver *drv, void *user_arg)
{
    (void)drv;
    (void)user_arg;
    job_ticks += ptec_platform_ticks() - job_start;
}

void ptec_ethos_u_call_done(const ptec_ethos_u_call *call)
{
    static uint32_t reported; /* bit i: delegate i has had its line */
    const uint32_t bit = call->delegate_index < 32u ? 1u << call->delegate_index : 0u;
    const uint64_t ticks = job_ticks;
    job_ticks = 0;
    if ((reported & bit) != 0 && call->driver_result == 0) {
        return;
    }
    reported |= bit;
    char text[PTEC_RUNNER_NPU_TEXT];
    char number[21];
    report("npu: %s; %s %s in the driver's job (begin to end hook)\n", ptec_runner_npu_call_text(call, text, sizeof text),
           ptec_runner_u64_text(ticks, number), ptec_runner_tick_unit_name(ptec_platform_tick_unit()));
}
