/* Fault reporting: names the exception, prints the stacked PC/LR and the
 * fault status registers, then exits with PTEC_BOARD_EXIT_FAULT_BASE + the
 * exception number. Uses the raw console only (no stdio, no heap), because
 * the fault may have happened inside either. */
#include <stdint.h>

#include "arch_internal.h"
#include "ptec_board.h"

#define SCB_CFSR (*(volatile const uint32_t *)0xE000ED28u)
#define SCB_HFSR (*(volatile const uint32_t *)0xE000ED2Cu)
#define SCB_MMFAR (*(volatile const uint32_t *)0xE000ED34u)
#define SCB_BFAR (*(volatile const uint32_t *)0xE000ED38u)
#define SAU_SFSR (*(volatile const uint32_t *)0xE000EDE4u)
#define SAU_SFAR (*(volatile const uint32_t *)0xE000EDE8u)

#define CFSR_MMARVALID (1u << 7)
#define CFSR_BFARVALID (1u << 15)
#define CFSR_STKOF (1u << 20)
#define SFSR_SFARVALID (1u << 6)

__attribute__((used, noreturn)) void ptec_board_fault_report(const uint32_t *frame,
                                                             uint32_t exc_return);

/* Default: nothing to add. */
__attribute__((weak)) void ptec_board_on_fault(void)
{
}

/* Picks the stack the exception frame went to (EXC_RETURN bit 2) and lifts
 * the stack limit first, so the report can run even after an overflow. */
__attribute__((naked)) void ptec_board_fault_entry(void)
{
    __asm__ volatile(
#if PTEC_ARCH_HAS_STACK_LIMIT
        "movs r2, #0\n\t"
        "msr msplim, r2\n\t"
        "msr psplim, r2\n\t"
#endif
        "tst lr, #4\n\t"
        "ite eq\n\t"
        "mrseq r0, msp\n\t"
        "mrsne r0, psp\n\t"
        "mov r1, lr\n\t"
        "b ptec_board_fault_report\n\t");
}

static void put_hex(const char *label, uint32_t value)
{
    char text[11] = {'0', 'x'};
    for (int i = 0; i < 8; ++i) {
        const uint32_t nibble = (value >> (28 - 4 * i)) & 0xFu;
        text[2 + i] = (char)(nibble < 10u ? '0' + nibble : 'a' + nibble - 10u);
    }
    text[10] = '\0';
    ptec_board_console_puts(label);
    ptec_board_console_puts(text);
}

static const char *exception_name(uint32_t number)
{
    switch (number) {
    case 2: return "NMI";
    case 3: return "HardFault";
    case 4: return "MemManage";
    case 5: return "BusFault";
    case 6: return "UsageFault";
    case 7: return "SecureFault";
    case 11: return "SVCall";
    case 12: return "DebugMonitor";
    case 14: return "PendSV";
    case 15: return "SysTick";
    default: return "interrupt";
    }
}

/* The CFSR bits worth a word each, in register order. */
static void put_cfsr_causes(uint32_t cfsr)
{
    static const struct {
        uint32_t bit;
        const char *name;
    } causes[] = {
        {1u << 0, "IACCVIOL"},  {1u << 1, "DACCVIOL"},   {1u << 3, "MUNSTKERR"},
        {1u << 4, "MSTKERR"},   {1u << 5, "MLSPERR"},    {1u << 8, "IBUSERR"},
        {1u << 9, "PRECISERR"}, {1u << 10, "IMPRECISERR"}, {1u << 11, "UNSTKERR"},
        {1u << 12, "STKERR"},   {1u << 13, "LSPERR"},    {1u << 16, "UNDEFINSTR"},
        {1u << 17, "INVSTATE"}, {1u << 18, "INVPC"},     {1u << 19, "NOCP"},
        {1u << 20, "STKOF"},    {1u << 24, "UNALIGNED"}, {1u << 25, "DIVBYZERO"},
    };
    for (unsigned i = 0; i < sizeof(causes) / sizeof(causes[0]); ++i) {
        if (cfsr & causes[i].bit) {
            ptec_board_console_puts(" ");
            ptec_board_console_puts(causes[i].name);
        }
    }
}

void ptec_board_fault_report(const uint32_t *frame, uint32_t exc_return)
{
    uint32_t ipsr;
    __asm__ volatile("mrs %0, ipsr" : "=r"(ipsr));
    const uint32_t number = ipsr & 0x1FFu;
    const uint32_t cfsr = SCB_CFSR;

    ptec_board_console_puts("\n*** FAULT: ");
    ptec_board_console_puts(exception_name(number));
    ptec_board_console_puts(" (exception ");
    const char digits[4] = {(char)('0' + number / 100u % 10u), (char)('0' + number / 10u % 10u),
                            (char)('0' + number % 10u), '\0'};
    ptec_board_console_puts(digits[0] == '0' ? (digits[1] == '0' ? digits + 2 : digits + 1) : digits);
    ptec_board_console_puts(")\n");
    /* Frame layout: r0 r1 r2 r3 r12 lr pc xpsr. */
    put_hex("  PC   ", frame[6]);
    put_hex("  LR   ", frame[5]);
    put_hex("  xPSR ", frame[7]);
    put_hex("  SP   ", (uint32_t)(uintptr_t)frame);
    put_hex("  EXC_RETURN ", exc_return);
    ptec_board_console_puts("\n");
    put_hex("  CFSR ", cfsr);
    put_cfsr_causes(cfsr);
    put_hex("\n  HFSR ", SCB_HFSR);
    if (cfsr & CFSR_MMARVALID) {
        put_hex("  MMFAR ", SCB_MMFAR);
    }
    if (cfsr & CFSR_BFARVALID) {
        put_hex("  BFAR ", SCB_BFAR);
    }
    if (number == 7u) {
        put_hex("  SFSR ", SAU_SFSR);
        if (SAU_SFSR & SFSR_SFARVALID) {
            put_hex("  SFAR ", SAU_SFAR);
        }
    }
    if (cfsr & CFSR_STKOF) {
        ptec_board_console_puts("\n  stack overflow: the stacked PC/LR above may be stale");
    }
    ptec_board_console_puts("\n");
    ptec_board_on_fault();
    ptec_board_exit(PTEC_BOARD_EXIT_FAULT_BASE + (int)number);
}
