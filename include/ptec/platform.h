/* The porting layer. The runtime calls only these for logging and timing.
 * Each has a weak default in the runtime library (log: drop, ticks: 0,
 * unit: unknown); a board (boards/<name>/) replaces one by linking a strong
 * definition. */
#ifndef PTEC_PLATFORM_H
#define PTEC_PLATFORM_H

#include <stdint.h>

typedef enum ptec_log_level {
    PTEC_LOG_DEBUG = 0,
    PTEC_LOG_INFO = 1,
    PTEC_LOG_ERROR = 2
} ptec_log_level;

/* What one tick of ptec_platform_ticks() is, so that a report can name it. */
typedef enum ptec_tick_unit {
    PTEC_TICKS_UNKNOWN = 0,      /* the weak default: ticks never move */
    PTEC_TICKS_INSTRUCTIONS = 1, /* executed instructions (QEMU -icount boards) */
    PTEC_TICKS_CYCLES = 2,       /* core clock cycles (DWT CYCCNT on silicon) */
    PTEC_TICKS_NANOSECONDS = 3   /* wall time (the host) */
} ptec_tick_unit;

/* One complete NUL-terminated line without the trailing newline. */
void ptec_platform_log(ptec_log_level level, const char *message);

/* A monotonic counter in the board's unit (ptec_platform_tick_unit()). */
uint64_t ptec_platform_ticks(void);
ptec_tick_unit ptec_platform_tick_unit(void);

#endif
