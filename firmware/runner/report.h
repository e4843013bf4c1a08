/* The runner's report and results, formatted like printf and sent to the
 * host over the board's host link (boards/include/ptec_host_link.h). */
#ifndef PTEC_RUNNER_REPORT_H
#define PTEC_RUNNER_REPORT_H

__attribute__((format(printf, 1, 2))) void report(const char *format, ...);

#endif
