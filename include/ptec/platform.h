/* The porting layer. The runtime calls only these for logging and timing.
 * Each has a weak default in the runtime library (log: drop, ticks: 0);
 * an application or board replaces one by linking a strong definition. */
#ifndef PTEC_PLATFORM_H
#define PTEC_PLATFORM_H

#include <stdint.h>

typedef enum ptec_log_level {
    PTEC_LOG_DEBUG = 0,
    PTEC_LOG_INFO = 1,
    PTEC_LOG_ERROR = 2
} ptec_log_level;

/* One complete NUL-terminated line without the trailing newline. */
void ptec_platform_log(ptec_log_level level, const char *message);

/* A monotonic counter. Its unit is the board's: nanoseconds on the host,
 * executed instructions on the QEMU boards. */
uint64_t ptec_platform_ticks(void);

#endif
