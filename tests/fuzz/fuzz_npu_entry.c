/* libFuzzer's entry point for the NPU model's fuzz targets: the build names
 * the target's run function (FUZZ_REPLAY_RUN, see tests/fuzz/CMakeLists.txt),
 * which ends every input in a clean 0 or -1. */
#include <stddef.h>
#include <stdint.h>

int FUZZ_REPLAY_RUN(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    (void)FUZZ_REPLAY_RUN(data, size);
    return 0;
}
