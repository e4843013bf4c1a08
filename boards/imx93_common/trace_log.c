/* The trace buffer the resource table declares: the console's text, kept
 * NUL-terminated so that `cat /sys/kernel/debug/remoteproc/remoteproc0/trace0`
 * shows it. When full it starts again from the top (the newest lines
 * matter most after a boot). */
#include <stddef.h>

#include "imx93_board.h"

extern char ptec_imx93_trace[];
#define TRACE_BYTES 2048u

void imx93_trace_write(const char *data, size_t len)
{
    static size_t used;
    for (size_t i = 0; i < len; ++i) {
        if (used + 1u >= TRACE_BYTES) {
            used = 0;
        }
        ptec_imx93_trace[used++] = data[i];
        ptec_imx93_trace[used] = '\0';
    }
}
