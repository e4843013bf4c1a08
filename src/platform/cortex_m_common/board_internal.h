/* Shared between the board files; not for applications. */
#ifndef PTEC_BOARD_INTERNAL_H
#define PTEC_BOARD_INTERNAL_H

void ptec_board_console_init(void);
/* Every fault and unexpected exception vector points here. */
void ptec_board_fault_entry(void);

#endif
