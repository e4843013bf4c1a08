/* Shared between the Cortex-M arch files; not for boards or applications. */
#ifndef PTEC_ARCH_CORTEX_M_INTERNAL_H
#define PTEC_ARCH_CORTEX_M_INTERNAL_H

/* Armv8-M Mainline (Cortex-M33, M55) has the stack limit registers
 * MSPLIM/PSPLIM (a stack overflow is a UsageFault, STKOF) and the Security
 * Extension's SecureFault; Armv7-M (Cortex-M3, M4, M7) has neither, so
 * there a stack overflow is not detected. */
#if defined(__ARM_ARCH_8M_MAIN__)
#define PTEC_ARCH_HAS_STACK_LIMIT 1
#else
#define PTEC_ARCH_HAS_STACK_LIMIT 0
#endif

/* Every fault and unexpected exception vector points here. */
void ptec_board_fault_entry(void);

#endif
