/* The kernel table and the runtime's lookup. The generated lists are sorted
 * by name, which the lookup's binary search relies on; a hand-written list
 * in any order must still work (the lookup falls back to a scan).
 *   test_kernel_table [ADD_PTE]
 * Built twice: with the build's own list (sorted: checked here), and with
 * tests/c/unsorted_kernels.def (PTEC_TEST_UNSORTED), where upstream's
 * add.pte must load and give 1 + 1 = 2. */
#include <string.h>

#include "ptec/ptec.h"
#include "test_util.h"

static void check_every_name_is_found(void)
{
    for (size_t i = 0; i < ptec_kernel_count(); ++i) {
        const char *name = ptec_kernel_at(i)->name;
        CHECK(ptec_kernel_find(name, strlen(name)) == ptec_kernel_at(i));
        /* A prefix or a longer name is not the kernel. */
        CHECK(ptec_kernel_find(name, strlen(name) - 1u) != ptec_kernel_at(i));
    }
    CHECK(ptec_kernel_find("aten::nothing.out", 17) == NULL);
    CHECK(ptec_kernel_find("", 0) == NULL);
    /* Name and overload apart, as programs give them; a NUL inside a name
     * from a file matches nothing. */
    CHECK(ptec_kernel_find_overload("aten::add", 9, "out", 3) == ptec_kernel_find("aten::add.out", 13));
    CHECK(ptec_kernel_find_overload("aten::add", 9, "out", 3) != NULL);
    CHECK(ptec_kernel_find_overload("aten::add", 9, NULL, 0) == NULL);
    CHECK(ptec_kernel_find_overload("aten::add\0out", 13, NULL, 0) == NULL);
    CHECK(ptec_kernel_find_overload("aten::add", 9, "ou", 2) == NULL);
}

#if !defined(PTEC_TEST_UNSORTED)
static void check_sorted(void)
{
    for (size_t i = 1; i < ptec_kernel_count(); ++i) {
        CHECK(strcmp(ptec_kernel_at(i - 1u)->name, ptec_kernel_at(i)->name) < 0);
    }
}
#else
static int run_add(const char *path)
{
    size_t size = 0;
    void *data = test_read_file(path, &size);
    static ptec_program program;
    static ptec_method method;
    static uint8_t memory[8192] __attribute__((aligned(16)));
    CHECK_STATUS(ptec_program_init(&program, data, size), PTEC_OK);
    ptec_requirements req;
    CHECK_STATUS(ptec_method_requirements(&method, &program, "forward", &req), PTEC_OK);
    CHECK(req.total_bytes <= sizeof(memory));
    CHECK_STATUS(ptec_method_load_single(&method, &program, "forward", memory, sizeof(memory)), PTEC_OK);
    const float one = 1.0f;
    CHECK_STATUS(ptec_method_set_input(&method, 0, PTEC_DTYPE_FLOAT, NULL, 0, &one, 4), PTEC_OK);
    CHECK_STATUS(ptec_method_set_input(&method, 1, PTEC_DTYPE_FLOAT, NULL, 0, &one, 4), PTEC_OK);
    CHECK_STATUS(ptec_method_execute(&method), PTEC_OK);
    const ptec_tensor *out = NULL;
    CHECK_STATUS(ptec_method_output(&method, 0, &out), PTEC_OK);
    CHECK(out != NULL && ((const float *)out->data)[0] == 2.0f);
    ptec_method_unload(&method);
    free(data);
    return 0;
}
#endif

int main(int argc, char **argv)
{
    check_every_name_is_found();
#if !defined(PTEC_TEST_UNSORTED)
    (void)argc;
    (void)argv;
    check_sorted();
#else
    CHECK(argc == 2);
    if (argc == 2) {
        run_add(argv[1]);
    }
#endif
    if (test_failures != 0) {
        fprintf(stderr, "%d check(s) failed\n", test_failures);
        return 1;
    }
    printf("kernel table: all checks passed\n");
    return 0;
}
