/* The runtime's log hook (include/ptec/platform.h) on bare-metal boards:
 * log lines go to the console through stdio. Ticks and their unit come from
 * the board's counter (board.cmake's PTEC_BOARD_COUNTER). */
#include <stdio.h>

#include "ptec/platform.h"
#include "ptec_board.h"

static int quietest_shown = PTEC_LOG_DEBUG;

void ptec_board_set_log_threshold(int level)
{
    quietest_shown = level;
}

void ptec_platform_log(ptec_log_level level, const char *message)
{
    if ((int)level < quietest_shown) {
        return;
    }
    static const char *const prefix[] = {"ptec debug: ", "ptec info: ", "ptec error: "};
    /* Through stdio so that log lines stay in order with the application's
     * printf output (stdout is unbuffered on these boards). */
    fputs(prefix[level <= PTEC_LOG_ERROR ? level : PTEC_LOG_ERROR], stdout);
    fputs(message, stdout);
    fputc('\n', stdout);
}
