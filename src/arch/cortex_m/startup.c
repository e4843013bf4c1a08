/* Reset and the vector table for Armv7-M and Armv8-M Mainline cores. The
 * Armv8-M parts (the stack limit register, SecureFault) are compiled in
 * when the compiler targets Armv8-M (arch_internal.h). The linker script
 * (cortex_m_sections.ld, included by the board's) places .vectors at the
 * boot address and defines the __*_start/_end symbols used here. The board
 * gives the console (ptec_board_console_init) and the exit. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "arch_internal.h"
#include "ptec_board.h"

extern uint32_t __stack_top[];
extern uint32_t __stack_limit[];
extern uint32_t __data_load[];
extern uint32_t __data_start[];
extern uint32_t __data_end[];
extern uint32_t __bss_start[];
extern uint32_t __bss_end[];
extern void (*__init_array_start[])(void);
extern void (*__init_array_end[])(void);

int main(void);

#define SCB_VTOR (*(volatile uint32_t *)0xE000ED08u)
#define SCB_CCR (*(volatile uint32_t *)0xE000ED14u)
#define SCB_SHCSR (*(volatile uint32_t *)0xE000ED24u)
#define SCB_CPACR (*(volatile uint32_t *)0xE000ED88u)

#define CCR_DIV_0_TRP (1u << 4)
#define SHCSR_MEMFAULTENA (1u << 16)
#define SHCSR_BUSFAULTENA (1u << 17)
#define SHCSR_USGFAULTENA (1u << 18)
#define SHCSR_SECUREFAULTENA (1u << 19)

void Reset_Handler(void);
__attribute__((noreturn, noinline)) static void board_start(void);

/* The stack limit sits this far above the real bottom, so that a fault
 * handler entered on a stack overflow still has room to report it. */
#define STACK_GUARD_BYTES 512u

__attribute__((section(".vectors"), used, aligned(128)))
const void *const ptec_board_vectors[16] = {
    __stack_top,
    (const void *)Reset_Handler,
    (const void *)ptec_board_fault_entry, /* NMI */
    (const void *)ptec_board_fault_entry, /* HardFault */
    (const void *)ptec_board_fault_entry, /* MemManage */
    (const void *)ptec_board_fault_entry, /* BusFault */
    (const void *)ptec_board_fault_entry, /* UsageFault */
    (const void *)ptec_board_fault_entry, /* SecureFault */
    0,
    0,
    0,
    (const void *)ptec_board_fault_entry, /* SVCall */
    (const void *)ptec_board_fault_entry, /* DebugMonitor */
    0,
    (const void *)ptec_board_fault_entry, /* PendSV */
    (const void *)ptec_board_fault_entry, /* SysTick */
};

void Reset_Handler(void)
{
#if defined(__ARM_FP) || defined(__ARM_FEATURE_MVE)
    /* Before anything else: grant CP10/CP11 (FPU and MVE). Any earlier
     * floating-point or vector instruction would take a NOCP fault. A core
     * built without them (soft float) leaves CPACR alone. */
    SCB_CPACR |= 0xFu << 20;
    __asm__ volatile("dsb\n\tisb" ::: "memory");
#endif
    board_start();
}

static void board_start(void)
{
    SCB_VTOR = (uint32_t)(uintptr_t)ptec_board_vectors;
    /* Report faults by their own name rather than as an escalated
     * HardFault, and make integer division by zero a fault. */
    SCB_SHCSR |= SHCSR_MEMFAULTENA | SHCSR_BUSFAULTENA | SHCSR_USGFAULTENA;
    SCB_CCR |= CCR_DIV_0_TRP;
#if PTEC_ARCH_HAS_STACK_LIMIT
    SCB_SHCSR |= SHCSR_SECUREFAULTENA;
    const uint32_t limit = (uint32_t)(uintptr_t)__stack_limit + STACK_GUARD_BYTES;
    __asm__ volatile("msr msplim, %0" : : "r"(limit));
#endif

    memcpy(__data_start, __data_load, (size_t)((uintptr_t)__data_end - (uintptr_t)__data_start));
    memset(__bss_start, 0, (size_t)((uintptr_t)__bss_end - (uintptr_t)__bss_start));
    for (void (**init)(void) = __init_array_start; init < __init_array_end; ++init) {
        (*init)();
    }

    ptec_board_console_init();
    /* Unbuffered: printf output and ptec_platform_log lines reach the
     * console in program order, and nothing is lost at exit. */
    setvbuf(stdout, NULL, _IONBF, 0);
    ptec_board_exit(main());
}
