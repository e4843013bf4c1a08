/* Who this firmware is for, from the board's board.cmake: its description
 * (ptec_board_name), and a record in a section that is not loaded
 * (.ptec_board_info) naming the board, its CPU and its QEMU machine, so that
 * scripts/run_qemu.sh starts the right machine from the ELF alone. */
#include "ptec_board.h"

const char *ptec_board_name(void)
{
    return PTEC_BOARD_DESCRIPTION;
}

__attribute__((section(".ptec_board_info"), used)) static const char board_record[] =
    "board=" PTEC_BOARD_ID "\0cpu=" PTEC_BOARD_CPU "\0qemu_machine=" PTEC_BOARD_QEMU_MACHINE;
