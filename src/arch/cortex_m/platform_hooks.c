/* The runtime's log hook (include/ptec/platform.h) on bare-metal boards:
 * log lines go straight to the board's console. Ticks and their unit come
 * from the board's counter (board.cmake's PTEC_BOARD_COUNTER). */
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
    /* The raw console, not stdio: an application that prints nothing links
     * no stdio for the runtime's sake. Lines stay in order with its printf
     * output, as startup.c makes stdout unbuffered. */
    ptec_board_console_puts(prefix[level <= PTEC_LOG_ERROR ? level : PTEC_LOG_ERROR]);
    ptec_board_console_puts(message);
    ptec_board_console_puts("\n");
}
