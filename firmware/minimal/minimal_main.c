/* The smallest application of the public API: a program compiled into the
 * image is loaded from one static buffer and executed once on inputs of
 * zeros; the exit status says which step failed (0: every step succeeded).
 * No console, no stdio: the image holds what loading and running a program
 * costs, and nothing an application's reporting would add.
 *
 * Built twice (firmware/minimal/CMakeLists.txt): ptec_minimal, and
 * ptec_minimal_bare with PTEC_MINIMAL_BARE, the same image without any
 * ptec call, so that the difference is what ptec adds (scripts/size.sh,
 * "linked delta"); tests/target checks that ptec_minimal links no stdio
 * and no 64-bit division helper. */
#include <stdint.h>

#include "ptec/ptec.h"

#ifndef PTEC_MINIMAL_BARE
#include "ptec_runner_model.h"

#define MEMORY_BYTES 8192u
#define IO_BYTES 256u

static uint8_t memory[MEMORY_BYTES] __attribute__((aligned(16)));
static uint8_t io[IO_BYTES] __attribute__((aligned(16)));
static ptec_program program;
static ptec_method method;

static int run(void)
{
    ptec_requirements req;
    if (ptec_program_init(&program, ptec_model_data, ptec_model_size) != PTEC_OK) {
        return 1;
    }
    if (ptec_method_requirements(&method, &program, NULL, &req) != PTEC_OK || req.total_bytes > sizeof memory) {
        return 2;
    }
    if (ptec_method_load_single(&method, &program, NULL, memory, sizeof memory) != PTEC_OK) {
        return 3;
    }
    for (size_t i = 0; i < ptec_method_input_count(&method); ++i) {
        ptec_tensor_info info;
        if (ptec_method_input_info(&method, i, &info) != PTEC_OK || info.nbytes > sizeof io ||
            ptec_method_set_input(&method, i, (ptec_dtype)info.dtype, NULL, 0, io, info.nbytes) != PTEC_OK) {
            return 4;
        }
    }
    const ptec_tensor *out;
    if (ptec_method_execute(&method) != PTEC_OK || ptec_method_output(&method, 0, &out) != PTEC_OK ||
        out->nbytes == 0) {
        return 5;
    }
    ptec_method_unload(&method);
    return 0;
}
#endif

int main(void)
{
#ifdef PTEC_MINIMAL_BARE
    return 0;
#else
    return run();
#endif
}
