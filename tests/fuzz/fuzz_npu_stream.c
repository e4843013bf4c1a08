/* Fuzz target for ptec_npu_model's command-stream interpreter (the NPU side
 * of the hostile-input story; fuzz_pte covers the .pte and blob side).
 *
 * Input: byte 0 picks the NPU configuration (mod 6), bytes 1..3 are ignored,
 * the rest is the command stream (little-endian words). Regions: 0 = 8 KiB of
 * constants, 1 = 64 KiB scratch, 2 = 256 B fast scratch. Any input must end
 * in a clean 0 or -1; ASan/UBSan watch every access. The work limit keeps one
 * input well under libFuzzer's timeout.
 *
 * Built as the libFuzzer binary fuzz_npu_stream (fuzz preset) and as
 * fuzz_npu_replay (every preset), which runs saved inputs: the seeds written
 * by make_npu_seeds.py, under ctest. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "npu_model.h"

int fuzz_npu_stream_run(const uint8_t *data, size_t size);

static const char *const configs[6] = {"ethos-u55-32", "ethos-u55-64", "ethos-u55-128",
                                       "ethos-u55-256", "ethos-u65-256", "ethos-u65-512"};
static uint8_t region0[8192] __attribute__((aligned(16)));
static uint8_t region1[65536] __attribute__((aligned(16)));
static uint8_t region2[256] __attribute__((aligned(16)));
static uint8_t work[65536] __attribute__((aligned(16)));
static uint32_t words[(1u << 20) / 4u];
static ptec_npu_model model;

/* 0 ok, -1 a clean fault */
int fuzz_npu_stream_run(const uint8_t *data, size_t size)
{
    if (size < 4u) {
        return -1;
    }
    ptec_npu_hw hw;
    if (ptec_npu_hw_from_name(configs[data[0] % 6u], &hw) != 0) {
        return -1;
    }
    size_t n = (size - 4u) / 4u;
    if (n > sizeof(words) / sizeof(words[0])) {
        n = sizeof(words) / sizeof(words[0]);
    }
    memcpy(words, data + 4, n * 4u);
    for (size_t i = 0; i < sizeof(region0); i++) {
        region0[i] = (uint8_t)(i * 131u + 7u);
    }
    memset(region1, 0, sizeof(region1));
    ptec_npu_model_init(&model, &hw, work, sizeof(work));
    model.work_limit = 1u << 21; /* ~2 M element steps: well under a second under ASan */
    uint64_t base[3] = {(uint64_t)(uintptr_t)region0, (uint64_t)(uintptr_t)region1,
                        (uint64_t)(uintptr_t)region2};
    size_t sizes[3] = {sizeof(region0), sizeof(region1), sizeof(region2)};
    (void)ptec_npu_model_work_bytes(&model, words, n);
    return ptec_npu_model_run(&model, words, n, base, sizes, 3);
}
