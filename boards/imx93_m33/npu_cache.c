/* Cache maintenance for the Ethos-U65 on the i.MX93 M33: Arm's NPU driver
 * calls these around every inference with the base addresses it hands the
 * NPU (ethosu_flush_dcache before, ethosu_invalidate_dcache after). The
 * M33's data side goes through LPCAC_PS, an XCACHE controller: a line
 * command (CLCR: LCMD 1 invalidate, 2 push, 3 push and invalidate; LADSEL
 * physical address) starts when CSAR gets the address with LGO set, and is
 * done when LGO reads 0. These definitions replace the driver's weak empty
 * ones. With NXP's default MPU setting (DDR non-cacheable) they find
 * nothing to do, which costs one cache lookup per 16-byte line. */
#include <stddef.h>
#include <stdint.h>

#include "board_config.h"

#define XCACHE(offset) (*(volatile uint32_t *)(uintptr_t)(PTEC_IMX93_LPCAC_PS_BASE + (offset)))
#define XCACHE_CCR XCACHE(0x0u)
#define XCACHE_CLCR XCACHE(0x4u)
#define XCACHE_CSAR XCACHE(0x8u)
#define CCR_ENCACHE 1u
#define CCR_INVW0 (1u << 24)
#define CCR_PUSHW0 (1u << 25)
#define CCR_INVW1 (1u << 26)
#define CCR_PUSHW1 (1u << 27)
#define CCR_GO (1u << 31)
#define CLCR_LADSEL_PHYSICAL (1u << 26)
#define LCMD_INVALIDATE 1u
#define LCMD_PUSH 2u
#define CSAR_LGO 1u
#define LINE_BYTES 16u

static void whole_cache(uint32_t command)
{
    XCACHE_CCR |= command | CCR_GO;
    while ((XCACHE_CCR & CCR_GO) != 0u) {
    }
}

static void each_line(uint32_t lcmd, uint64_t base, size_t size)
{
    if (size == 0u || base > UINT32_MAX) {
        return;
    }
    const uint64_t end64 = base + size;
    const uint32_t end = end64 > UINT32_MAX ? UINT32_MAX : (uint32_t)end64;
    XCACHE_CLCR = (lcmd << 24) | CLCR_LADSEL_PHYSICAL;
    for (uint32_t line = (uint32_t)base & ~(LINE_BYTES - 1u); line < end; line += LINE_BYTES) {
        XCACHE_CSAR = line | CSAR_LGO;
        while ((XCACHE_CSAR & CSAR_LGO) != 0u) {
        }
        if (line > UINT32_MAX - LINE_BYTES) {
            break;
        }
    }
}

static void maintain(uint32_t lcmd, uint32_t whole, const uint64_t *base, const size_t *size, int count)
{
    if ((XCACHE_CCR & CCR_ENCACHE) == 0u) {
        return;
    }
    if (base == NULL || size == NULL) {
        whole_cache(whole);
        return;
    }
    for (int i = 0; i < count; ++i) {
        each_line(lcmd, base[i], size[i]);
    }
    __asm__ volatile("dsb" ::: "memory");
}

void ethosu_flush_dcache(const uint64_t *base_addr, const size_t *base_addr_size, int num_base_addr);
void ethosu_invalidate_dcache(const uint64_t *base_addr, const size_t *base_addr_size, int num_base_addr);

void ethosu_flush_dcache(const uint64_t *base_addr, const size_t *base_addr_size, int num_base_addr)
{
    maintain(LCMD_PUSH, CCR_PUSHW0 | CCR_PUSHW1, base_addr, base_addr_size, num_base_addr);
}

void ethosu_invalidate_dcache(const uint64_t *base_addr, const size_t *base_addr_size, int num_base_addr)
{
    maintain(LCMD_INVALIDATE, CCR_INVW0 | CCR_INVW1, base_addr, base_addr_size, num_base_addr);
}
