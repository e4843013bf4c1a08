/* The Ethos-U65 with Arm's NPU driver on the real board (built when
 * PTEC_IMX93_NPU_DRIVER=arm): the driver instance at the NPU's base
 * address, and its interrupt (IRQ 178) through a vector table in RAM, since
 * the arch's table in code TCM has the core's exceptions only. The
 * delegate then reserves this driver for each inference. */
#include <stdint.h>
#include <string.h>

#include "board_config.h"
#include "ethosu_driver.h"
#include "imx93_npu.h"

#define SCB_VTOR (*(volatile uint32_t *)0xE000ED08u)
#define NVIC_ISER(n) (*(volatile uint32_t *)(0xE000E100u + 4u * (n)))
#define CORE_VECTORS 16u
#define TABLE_ENTRIES 256u /* 240 interrupts: the NPU's 178 is the highest used */

extern const void *const ptec_board_vectors[CORE_VECTORS];
static void (*ram_vectors[TABLE_ENTRIES])(void) __attribute__((aligned(1024)));
static struct ethosu_driver npu;

static void npu_irq_handler(void)
{
    ethosu_irq_handler(&npu);
}

static void irq_attach(uint32_t irq, void (*handler)(void))
{
    if (SCB_VTOR != (uint32_t)(uintptr_t)ram_vectors) {
        memcpy(ram_vectors, ptec_board_vectors, sizeof(ptec_board_vectors));
        for (uint32_t i = CORE_VECTORS; i < TABLE_ENTRIES; ++i) {
            ram_vectors[i] = (void (*)(void))ptec_board_vectors[3]; /* unexpected: the fault report */
        }
        __asm__ volatile("dsb" ::: "memory");
        SCB_VTOR = (uint32_t)(uintptr_t)ram_vectors;
        __asm__ volatile("dsb\n\tisb" ::: "memory");
    }
    ram_vectors[CORE_VECTORS + irq] = handler;
    NVIC_ISER(irq / 32u) = 1u << (irq % 32u);
}

int imx93_npu_init(void)
{
    irq_attach(PTEC_IMX93_NPU_IRQ, npu_irq_handler);
    /* Secure and privileged, as the core runs; no fast memory (Shared_Sram). */
    return ethosu_init(&npu, (void *)(uintptr_t)PTEC_IMX93_NPU_BASE, NULL, 0, 1, 1);
}
