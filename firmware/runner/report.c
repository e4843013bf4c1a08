#include "report.h"

#include <stdarg.h>
#include <stdio.h>

#include "ptec_host_link.h"

/* Longer text is cut at this length (a report line is well under it). */
#define REPORT_TEXT_BYTES 256u

void report(const char *format, ...)
{
    char text[REPORT_TEXT_BYTES];
    va_list args;
    va_start(args, format);
    const int n = vsnprintf(text, sizeof(text), format, args);
    va_end(args);
    if (n > 0) {
        ptec_host_link_write(text, (size_t)n < sizeof(text) ? (size_t)n : sizeof(text) - 1u);
    }
}
