/* A kernel's PTEC_PREPARED_ARGS (include/ptec/kernel.h) naming an argument
 * at or past the call's argument count is a defect of the kernel: the
 * measuring pass and the load refuse it with NotSupported and a message,
 * never read past the call's arguments.
 *   test_prepared_bits ADD_PTE
 * Built with tests/c/prepared_bits_kernels.def as its kernel table: a
 * stand-in aten::add.out (upstream add.pte calls it with 5 arguments:
 * self, other, alpha, out and the return slot) that declares bit 5. */
#include <string.h>

#include "ptec/kernel.h"
#include "ptec/ptec.h"
#include "test_util.h"

static ptec_status mock_prepare(ptec_op *op)
{
    (void)op;
    return PTEC_OK;
}

static ptec_status mock_run(ptec_op *op)
{
    (void)op;
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_mock_add_prepared_past_argc = {
    "aten::add.out", 8u | PTEC_PREPARED_ARGS(1u << 5), mock_prepare, mock_run};

int main(int argc, char **argv)
{
    CHECK(argc == 2);
    if (argc != 2) {
        return 1;
    }
    size_t size = 0;
    void *data = test_read_file(argv[1], &size);
    static ptec_program program;
    static ptec_method method;
    static uint8_t memory[8192] __attribute__((aligned(16)));
    CHECK_STATUS(ptec_program_init(&program, data, size), PTEC_OK);
    ptec_requirements req;
    CHECK_STATUS(ptec_method_requirements(&method, &program, "forward", &req), PTEC_NOT_SUPPORTED);
    CHECK(strstr(ptec_method_error(&method), "prepare-only argument past the call's") != NULL);
    CHECK_STATUS(ptec_method_load_single(&method, &program, "forward", memory, sizeof(memory)), PTEC_NOT_SUPPORTED);
    CHECK(strstr(ptec_method_error(&method), "prepare-only argument past the call's") != NULL);
    CHECK(strstr(ptec_method_error(&method), "aten::add.out") != NULL);
    free(data);
    if (test_failures != 0) {
        fprintf(stderr, "%d check(s) failed\n", test_failures);
        return 1;
    }
    return 0;
}
