/* The host board: log lines to stderr, ticks in nanoseconds of a monotonic clock. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <time.h>

#include "ptec/platform.h"

/* Lines below this level are dropped. A tool that reports errors itself
 * (ptec-run) raises it to keep stderr to one line per failure. */
int ptec_host_log_threshold = PTEC_LOG_INFO;

void ptec_platform_log(ptec_log_level level, const char *message)
{
    if ((int)level < ptec_host_log_threshold) {
        return;
    }
    static const char *const prefix[] = {"debug", "info", "error"};
    fprintf(stderr, "ptec %s: %s\n", prefix[level <= PTEC_LOG_ERROR ? level : PTEC_LOG_ERROR],
            message);
}

uint64_t ptec_platform_ticks(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

ptec_tick_unit ptec_platform_tick_unit(void)
{
    return PTEC_TICKS_NANOSECONDS;
}
