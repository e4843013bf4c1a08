/* Shared between the Cortex-M arch files; not for boards or applications. */
#ifndef PTEC_ARCH_CORTEX_M_INTERNAL_H
#define PTEC_ARCH_CORTEX_M_INTERNAL_H

/* Every fault and unexpected exception vector points here. */
void ptec_board_fault_entry(void);

#endif
