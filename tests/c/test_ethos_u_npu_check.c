/* The EthosUBackend's NPU check (src/backends/ethos_u/ethos_u_npu_check.c),
 * built once per NPU a build may drive (PTEC_ETHOSU_TARGET, argv[1] names
 * it too): a COP1 config word of its own configuration passes; each of the
 * five others is refused naming both NPUs; SHRAM less than the build's
 * passes, more is refused; another stream version or custom DMA is refused.
 * The config words are Vela's, copied from spec ethos-u-npu.md §2 (the
 * oracle; the code under test keeps its own table). */
#include <stdio.h>
#include <string.h>

#include "backends/ethos_u/ethos_u_npu.h"
#include "ptec/ethos_u.h"
#include "test_util.h"

static const struct {
    const char *name;
    uint32_t config;
} vela[] = {
    {"ethos-u55-32", 0x1005u},      {"ethos-u55-64", 0x1006u},      {"ethos-u55-128", 0x1807u},
    {"ethos-u55-256", 0x3008u},     {"ethos-u65-256", 0x10003008u}, {"ethos-u65-512", 0x10006009u},
};

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_ethos_u_npu_check NPU\n");
        return 2;
    }
    const char *mine = argv[1];
    int checks = 0;
    const ptec_delegate_blob no_specs = {NULL, 0, NULL, 0, NULL, 0};
    const char *detail;
    uint32_t my_config = 0;
    for (size_t i = 0; i < sizeof vela / sizeof vela[0]; ++i) {
        if (strcmp(vela[i].name, mine) == 0) {
            my_config = vela[i].config;
        }
    }
    CHECK(my_config != 0 && strcmp(ptec_ethos_u_target_name(), mine) == 0 && ptec_ethos_u_target_config() == my_config);
    checks += 1;
    for (size_t i = 0; i < sizeof vela / sizeof vela[0]; ++i) {
        char want[96];
        snprintf(want, sizeof want, "blob is for %s, this build drives %s", vela[i].name, mine);
        const ptec_status st = ptec_ethos_u_check_npu(&no_specs, vela[i].config, &detail);
        if (vela[i].config == my_config) {
            CHECK_STATUS(st, PTEC_OK);
        } else {
            CHECK_STATUS(st, PTEC_DELEGATE_INVALID_COMPATIBILITY);
            CHECK(strcmp(detail, want) == 0);
        }
        checks += 2;
    }
    const uint32_t shram = (my_config >> 8) & 0xFFu;
    const uint32_t others = my_config & ~0xFF00u;
    CHECK_STATUS(ptec_ethos_u_check_npu(&no_specs, others | (shram - 8u) << 8, &detail), PTEC_OK);
    CHECK_STATUS(ptec_ethos_u_check_npu(&no_specs, others | (shram + 8u) << 8, &detail),
                 PTEC_DELEGATE_INVALID_COMPATIBILITY);
    CHECK(strstr(detail, "more SHRAM") != NULL && strstr(detail, mine) != NULL);
    CHECK_STATUS(ptec_ethos_u_check_npu(&no_specs, my_config | 0x10u, &detail), PTEC_DELEGATE_INVALID_COMPATIBILITY);
    CHECK(strstr(detail, "command stream version") != NULL);
    CHECK_STATUS(ptec_ethos_u_check_npu(&no_specs, my_config | 1u << 27, &detail), PTEC_DELEGATE_INVALID_COMPATIBILITY);
    CHECK(strstr(detail, "custom DMA") != NULL);
    CHECK_STATUS(ptec_ethos_u_check_npu(&no_specs, 0x20000008u, &detail), PTEC_DELEGATE_INVALID_COMPATIBILITY);
    CHECK(strstr(detail, "unknown NPU") != NULL); /* an ethos-u85 config word */
    checks += 9;
    char name[64];
    snprintf(name, sizeof name, "ethos-u npu check (%s)", mine);
    return test_summary(name, checks);
}
