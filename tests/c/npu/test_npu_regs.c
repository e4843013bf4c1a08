/* Mode (b) seen from the registers (docs/ethos-u.md, "Register-level mode"):
 * after Arm's unmodified driver runs ethos_u_minimal_example through
 * driver_regs.c, the register file holds what the driver programmed and
 * what the simulated NPU answered. Expected values are facts of the
 * register map and of spec §6/§8.1, written out here:
 *   QBASE = the stream's window, QSIZE = 219 words = 876 bytes, QCONFIG 2,
 *   BASEP0..2 = the three regions' windows (BASEP3..7 untouched, 0),
 *   REGIONCFG = region 0 -> 3, 1 -> 0 (U55) or 2 (U65), 2 -> 1 (the driver's
 *   default mapping, ethosu_config_u55.h / _u65.h; spec §6 gives the U55's
 *   for both),
 *   RESET = pending privileged (bit 0) and secure (bit 1 clear), AXI_LIMIT0..3
 *   written, STATUS = cmd_end_reached with the IRQ cleared, QREAD 872 (the
 *   NPU_OP_STOP), CMD = clock and power Q enabled after the job;
 *   a scratch region of 16 bytes: STATUS = bus_status, mem2mem read channel,
 *   no cmd_end_reached, QREAD 32, and -1 from the driver;
 *   an NPU of the other product: the driver refuses it at ethosu_init, so
 *   no driver can be reserved.
 * Built twice: against the U55 build of Arm's driver and the U65 build
 * (there the stream is relabelled u65-256 and every address has a high word).
 *
 * Usage: test_npu_regs <case dir> (make_mode_cases.py output) */
#include <inttypes.h>

#include "driver_direct.h"
#include "driver_regs.h"
#include "npu_model.h"
#include "test_util.h"

#define REG(offset) (ptec_npu_regs_file()[(offset) / 4u])

static uint64_t reg64(uint32_t offset)
{
    return (uint64_t)REG(offset) | (uint64_t)REG(offset + 4u) << 32;
}

static void configure(const char *name)
{
    ptec_npu_hw hw;
    CHECK(ptec_npu_hw_from_name(name, &hw) == 0);
    ptec_npu_model_configure(&hw);
}

static int invoke(uint8_t *cop, size_t cop_size, uint8_t *flash, uint8_t *scratch, size_t scratch_size,
                  uint8_t *fast)
{
    uint64_t base[3] = {(uint64_t)(uintptr_t)flash, (uint64_t)(uintptr_t)scratch, (uint64_t)(uintptr_t)fast};
    size_t size[3] = {32, scratch_size, 0};
    struct ethosu_driver *drv = ethosu_reserve_driver();
    CHECK(drv != NULL);
    if (drv == NULL) {
        return -2;
    }
    int rc = ethosu_invoke_v3(drv, cop, (int)cop_size, base, size, 3, NULL);
    ethosu_release_driver(drv);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_npu_regs <case dir>\n");
        return 2;
    }
    char path[1024];
    size_t cop_size, flash_size;
    snprintf(path, sizeof(path), "%s/minimal_example.cop", argv[1]);
    uint8_t *cop = test_read_file(path, &cop_size);
    snprintf(path, sizeof(path), "%s/minimal_example.flash", argv[1]);
    uint8_t *flash = test_read_file(path, &flash_size);
    CHECK(cop_size == 908u && flash_size == 32u);
#if defined(ETHOSU65)
    const char *npu = "ethos-u65-256", *other = "ethos-u55-128";
    uint32_t u65_256 = 0x10003008u; /* OPTIMIZER_CONFIG config word: COP word 2 */
    memcpy(cop + 8, &u65_256, sizeof(u65_256));
#else
    const char *npu = "ethos-u55-128", *other = "ethos-u65-256";
#endif
    uint8_t *scratch = test_alloc(144);
    uint8_t *fast = test_alloc(16);
    memset(scratch, 0, 144);

    configure(npu);
    ptec_npu_hw hw;
    CHECK(ptec_npu_hw_from_name(npu, &hw) == 0);
    scratch[64] = (uint8_t)(int8_t)100;
    scratch[16] = (uint8_t)(int8_t)-20;
    CHECK(invoke(cop, cop_size, flash, scratch, 144, fast) == 0);
    CHECK((int8_t)scratch[0] == ((100 - 20 + 257) >> 1) - 128);

    CHECK(REG(0x000) == hw.id);
    CHECK(REG(0x028) == hw.config);
    CHECK(reg64(0x010) == ptec_npu_regs_window(-1));
    CHECK(REG(0x020) == 876u);
    CHECK(REG(0x01C) == 2u);
    for (int i = 0; i < 8; i++) {
        uint64_t want = i < 3 ? ptec_npu_regs_window(i) : 0u;
        if (reg64(0x080u + 8u * (uint32_t)i) != want) {
            fprintf(stderr, "BASEP%d = 0x%" PRIx64 ", want 0x%" PRIx64 "\n", i, reg64(0x080u + 8u * (uint32_t)i),
                    want);
            ++test_failures;
        }
    }
#if defined(ETHOSU65)
    CHECK(REG(0x080u + 4u) == 2u); /* BASEP0's high word: region 0's window is 2 << 32 */
#endif
#if defined(ETHOSU65)
    CHECK(REG(0x03C) == (3u | 2u << 2 | 1u << 4));
#else
    CHECK(REG(0x03C) == (3u | 0u << 2 | 1u << 4));
#endif
    CHECK(REG(0x00C) == 1u);
    CHECK(REG(0x024) == 1u);
    for (uint32_t axi = 0x040; axi <= 0x04C; axi += 4u) {
        CHECK(REG(axi) != 0u);
    }
    CHECK(REG(0x004) == 0x20u);
    CHECK(REG(0x018) == 872u);
    CHECK(REG(0x008) == 0x0Cu);

    /* a fault the driver reads from STATUS */
    CHECK(invoke(cop, cop_size, flash, scratch, 16, fast) == -1);
    CHECK(REG(0x004) == (0x4u | 4u << 12));
    CHECK(REG(0x018) == 32u);

    /* a driver built for one product refuses the other at ethosu_init */
    configure(other);
    CHECK(ethosu_reserve_driver() == NULL);

    free(cop);
    free(flash);
    free(scratch);
    free(fast);
    return test_summary("test_npu_regs", 1);
}
