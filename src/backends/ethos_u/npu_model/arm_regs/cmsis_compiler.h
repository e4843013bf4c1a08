/* The two CMSIS intrinsics Arm's ethos-u-core-driver uses (in its weak
 * bare-metal semaphore, which driver_regs.c replaces), for builds without
 * CMSIS: the host and ptec's own Cortex-M builds. A board with CMSIS puts
 * its own cmsis_compiler.h first on the include path. */
#ifndef PTEC_ARM_REGS_CMSIS_COMPILER_H
#define PTEC_ARM_REGS_CMSIS_COMPILER_H

#if defined(__arm__) && defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
#define __WFE() __asm volatile("wfe")
#define __SEV() __asm volatile("sev")
#else
#define __WFE() ((void)0)
#define __SEV() ((void)0)
#endif

#endif
