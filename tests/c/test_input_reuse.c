/* Inputs whose bytes the plan lets later tensors overwrite must be set
 * again before every execute, and execute says so; inputs it leaves alone
 * stay set. ptec_method keeps a count of set inputs so that a ready method
 * is checked in two comparisons: this checks that the count follows the
 * flags through set, set again, execute and a refused execute.
 *   test_input_reuse PROGRAM.pte reused|kept
 * (whether the plan overwrites the program's one input). */
#include <string.h>

#include "ptec/ptec.h"
#include "test_util.h"

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_input_reuse PROGRAM.pte reused|kept\n");
        return 2;
    }
    const bool reused = strcmp(argv[2], "reused") == 0;
    size_t size = 0;
    void *data = test_read_file(argv[1], &size);
    static ptec_program program;
    static ptec_method m;
    CHECK_STATUS(ptec_program_init(&program, data, size), PTEC_OK);
    ptec_requirements req;
    CHECK_STATUS(ptec_method_requirements(&m, &program, NULL, &req), PTEC_OK);
    uint8_t *memory = test_alloc(req.total_bytes);
    CHECK_STATUS(ptec_method_load_single(&m, &program, NULL, memory, req.total_bytes), PTEC_OK);
    CHECK(ptec_method_input_count(&m) == 1);
    CHECK(m.inputs_reused == reused);
    ptec_tensor_info info;
    CHECK_STATUS(ptec_method_input_info(&m, 0, &info), PTEC_OK);
    uint8_t *bytes = test_alloc(info.nbytes);
    memset(bytes, 0, info.nbytes);

    CHECK_STATUS(ptec_method_execute(&m), PTEC_INVALID_STATE);
    CHECK(strstr(ptec_method_error(&m), "input 0 was not set") != NULL);
    for (int round = 0; round < 3; ++round) {
        /* Set twice: still one input ready, not two. */
        CHECK_STATUS(ptec_method_set_input(&m, 0, (ptec_dtype)info.dtype, NULL, 0, bytes, info.nbytes), PTEC_OK);
        CHECK_STATUS(ptec_method_set_input(&m, 0, (ptec_dtype)info.dtype, NULL, 0, bytes, info.nbytes), PTEC_OK);
        CHECK(m.inputs_ready == 1u);
        CHECK_STATUS(ptec_method_execute(&m), PTEC_OK);
        if (!reused) {
            /* Nothing overwrote the input: it stays set. */
            CHECK(m.inputs_ready == 1u);
            CHECK_STATUS(ptec_method_execute(&m), PTEC_OK);
            continue;
        }
        CHECK(m.inputs_ready == 0u);
        /* The plan overwrote the input: a second execute is refused, twice. */
        CHECK_STATUS(ptec_method_execute(&m), PTEC_INVALID_STATE);
        CHECK(strstr(ptec_method_error(&m), "input 0 was not set again") != NULL);
        CHECK_STATUS(ptec_method_execute(&m), PTEC_INVALID_STATE);
        CHECK(m.inputs_ready == 0u);
    }
    ptec_method_unload(&m);
    free(bytes);
    free(memory);
    free(data);
    if (test_failures != 0) {
        fprintf(stderr, "%d check(s) failed\n", test_failures);
        return 1;
    }
    printf("input reuse: all checks passed\n");
    return 0;
}
