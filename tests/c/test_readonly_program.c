/* The program is a read-only view: the .pte bytes and the ptec_program struct
 * sit in pages write-protected (mprotect PROT_READ) right after
 * ptec_program_init, and requirements, load, inputs, execute, outputs and
 * errors all work through a `const ptec_program *`, for two methods sharing
 * the one program. Any write to either page would be a SIGSEGV.
 *   add.pte (upstream): outputs equal upstream's expected bytes.
 *   argv[1], a ptec-built DS-CNN (constants in a segment): both methods run
 *   and agree byte for byte. */
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ptec/ptec.h"
#include "test_util.h"

static int checks;
#define T(cond) do { ++checks; CHECK(cond); } while (0)
#define TS(expr, want) do { ++checks; CHECK_STATUS(expr, want); } while (0)

static size_t page_round(size_t n)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return (n + page - 1u) / page * page;
}

static void *pages(size_t bytes)
{
    void *p = mmap(NULL, page_round(bytes), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        fprintf(stderr, "mmap failed\n");
        exit(2);
    }
    return p;
}

/* The file's bytes and an initialised program over them, both read-only. */
static const ptec_program *readonly_program(const char *path, void **bytes_out, size_t *size_out)
{
    size_t size;
    void *file = test_read_file(path, &size);
    uint8_t *bytes = pages(size);
    memcpy(bytes, file, size);
    free(file);
    ptec_program *program = pages(sizeof *program);
    TS(ptec_program_init(program, bytes, size), PTEC_OK);
    T(mprotect(bytes, page_round(size), PROT_READ) == 0);
    T(mprotect(program, page_round(sizeof *program), PROT_READ) == 0);
    *bytes_out = bytes;
    *size_out = size;
    return program;
}

static void release(const ptec_program *program, void *bytes, size_t size)
{
    munmap((void *)(uintptr_t)program, page_round(sizeof *program));
    munmap(bytes, page_round(size));
}

static void *load(ptec_method *m, const ptec_program *program)
{
    ptec_requirements req;
    TS(ptec_method_requirements(m, program, NULL, &req), PTEC_OK);
    void *buffer = test_alloc(req.total_bytes);
    TS(ptec_method_load_single(m, program, NULL, buffer, req.total_bytes), PTEC_OK);
    return buffer;
}

static void check_add(void)
{
    void *bytes;
    size_t size, n0, n1, n_expected;
    const ptec_program *program = readonly_program(PTEC_SHARED_DIR "/models/upstream/add.pte", &bytes, &size);
    void *in0 = test_read_file(PTEC_SHARED_DIR "/models/upstream/inputs/add_in0.f32.bin", &n0);
    void *in1 = test_read_file(PTEC_SHARED_DIR "/models/upstream/inputs/add_in1.f32.bin", &n1);
    void *expected = test_read_file(PTEC_SHARED_DIR "/models/upstream/expected/add_inputs.out0.f32.bin", &n_expected);
    ptec_method a, b;
    void *buffer_a = load(&a, program);
    void *buffer_b = load(&b, program);
    ptec_method *methods[2] = {&a, &b};
    for (int k = 0; k < 2; ++k) {
        TS(ptec_method_set_input(methods[k], 0, PTEC_DTYPE_FLOAT, NULL, 0, in0, n0), PTEC_OK);
        TS(ptec_method_set_input(methods[k], 1, PTEC_DTYPE_FLOAT, NULL, 0, in1, n1), PTEC_OK);
        TS(ptec_method_execute(methods[k]), PTEC_OK);
        const ptec_tensor *out;
        TS(ptec_method_output(methods[k], 0, &out), PTEC_OK);
        T(out->nbytes == n_expected && memcmp(out->data, expected, n_expected) == 0);
    }
    /* Errors land in the method, not in the program. */
    float one = 1.0f;
    TS(ptec_method_set_input(&a, 0, PTEC_DTYPE_INT, NULL, 0, &one, 4), PTEC_INVALID_ARGUMENT);
    T(strstr(ptec_method_error(&a), "dtype int32 given") != NULL && ptec_method_error(&b)[0] == '\0');
    ptec_requirements req;
    TS(ptec_method_requirements(&b, program, "nope", &req), PTEC_NOT_FOUND);
    T(strstr(ptec_method_error(&b), "no method named 'nope'") != NULL && ptec_program_error(program)[0] == '\0');
    ptec_method_unload(&a);
    ptec_method_unload(&b);
    free(buffer_a);
    free(buffer_b);
    free(in0);
    free(in1);
    free(expected);
    release(program, bytes, size);
}

static void fill_inputs(ptec_method *m)
{
    for (size_t i = 0; i < ptec_method_input_count(m); ++i) {
        ptec_tensor_info info;
        TS(ptec_method_input_info(m, i, &info), PTEC_OK);
        uint8_t data[4096];
        T(info.planned && info.nbytes <= sizeof data);
        for (size_t k = 0; k < info.nbytes && k < sizeof data; ++k) {
            data[k] = (uint8_t)(k * 37u + 11u);
        }
        TS(ptec_method_set_input(m, i, (ptec_dtype)info.dtype, NULL, 0, data, info.nbytes), PTEC_OK);
    }
}

static void check_built(const char *path)
{
    void *bytes;
    size_t size;
    const ptec_program *program = readonly_program(path, &bytes, &size);
    ptec_method a, b;
    void *buffer_a = load(&a, program);
    void *buffer_b = load(&b, program);
    fill_inputs(&a);
    fill_inputs(&b);
    TS(ptec_method_execute(&a), PTEC_OK);
    TS(ptec_method_execute(&b), PTEC_OK);
    const ptec_tensor *out_a, *out_b;
    TS(ptec_method_output(&a, 0, &out_a), PTEC_OK);
    TS(ptec_method_output(&b, 0, &out_b), PTEC_OK);
    T(out_a->nbytes > 0 && out_a->nbytes == out_b->nbytes && memcmp(out_a->data, out_b->data, out_a->nbytes) == 0);
    ptec_method_unload(&a);
    ptec_method_unload(&b);
    free(buffer_a);
    free(buffer_b);
    release(program, bytes, size);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_readonly_program DS_CNN.pte\n");
        return 2;
    }
    check_add();
    check_built(argv[1]);
    return test_summary("read-only program", checks);
}
