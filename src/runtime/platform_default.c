/* Weak defaults for the porting layer: silent, and a clock that never moves.
 * Boards link strong versions (boards/<name>/). */
#include "ptec/platform.h"

__attribute__((weak)) void ptec_platform_log(ptec_log_level level, const char *message)
{
    (void)level;
    (void)message;
}

__attribute__((weak)) uint64_t ptec_platform_ticks(void)
{
    return 0;
}

__attribute__((weak)) ptec_tick_unit ptec_platform_tick_unit(void)
{
    return PTEC_TICKS_UNKNOWN;
}
