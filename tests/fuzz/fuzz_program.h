/* The fuzz target's entry points, shared by the libFuzzer binary and the
 * replay runner. */
#ifndef PTEC_FUZZ_PROGRAM_H
#define PTEC_FUZZ_PROGRAM_H

#include <stddef.h>
#include <stdint.h>

/* How far a program got, furthest last. */
typedef enum fuzz_stage {
    FUZZ_STAGE_INIT,
    FUZZ_STAGE_REQUIREMENTS,
    FUZZ_STAGE_TOO_BIG,
    FUZZ_STAGE_LOAD,
    FUZZ_STAGE_INPUTS,
    FUZZ_STAGE_EXECUTE,
    FUZZ_STAGE_RAN
} fuzz_stage;

/* The runtime's last error message of the last run. */
extern char fuzz_last_error[];

fuzz_stage fuzz_run_program(const uint8_t *data, size_t size);
const char *fuzz_stage_name(fuzz_stage stage);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
