/* Weak defaults for the porting layer: silent, and a clock that never moves.
 * Boards and host tools link strong versions (src/platform/). */
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
