/* Upstream-made .pte files: byte-identical outputs, exact memory
 * requirements, clear errors for the delegate sample and for bad inputs. */
#include <stdint.h>

#include "ptec/ptec.h"
#include "test_regions.h"
#include "test_util.h"

static const char *shared_dir = PTEC_SHARED_DIR "/models/upstream";
static int checks;

typedef struct sample {
    const char *file;
    const char *stem;       /* expected/<stem>_{ones,inputs}.out0.f32.bin */
    const char *inputs[2];  /* inputs/<name> */
} sample;

static const sample samples[] = {
    {"add.pte", "add", {"add_in0.f32.bin", "add_in1.f32.bin"}},
    {"add_arduino.pte", "add_arduino", {"add_arduino_in0.f32.bin", NULL}},
    {"ModuleLinear-no-constant-segment.pte", "ModuleLinear", {"ModuleLinear_in0.f32.bin", NULL}},
};

static void *load_path(const char *dir, const char *name, size_t *size)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return test_read_file(path, size);
}

static void run_and_compare(ptec_method *m, const sample *s, int with_files)
{
    for (size_t i = 0; i < ptec_method_input_count(m); ++i) {
        ptec_tensor_info info;
        CHECK_STATUS(ptec_method_input_info(m, i, &info), PTEC_OK);
        float *data;
        size_t n = info.nbytes;
        if (with_files) {
            char name[256];
            snprintf(name, sizeof name, "inputs/%s", s->inputs[i]);
            data = load_path(shared_dir, name, &n);
        } else {
            data = test_alloc(info.nbytes);
            for (size_t k = 0; k < info.nbytes / 4; ++k) {
                data[k] = 1.0f;
            }
        }
        CHECK_STATUS(ptec_method_set_input(m, i, PTEC_DTYPE_FLOAT, info.sizes, info.rank, data, n), PTEC_OK);
        free(data);
        ++checks;
    }
    ptec_status st = ptec_method_execute(m);
    if (st != PTEC_OK) {
        fprintf(stderr, "%s: %s\n", s->file, ptec_method_error(m));
    }
    CHECK_STATUS(st, PTEC_OK);
    const ptec_tensor *out;
    CHECK_STATUS(ptec_method_output(m, 0, &out), PTEC_OK);
    char name[256];
    size_t n;
    snprintf(name, sizeof name, "expected/%s_%s.out0.f32.bin", s->stem, with_files ? "inputs" : "ones");
    void *expected = load_path(shared_dir, name, &n);
    CHECK(out->nbytes == n && memcmp(out->data, expected, n) == 0);
    free(expected);
    checks += 2;
}

/* Exact sizes load; one byte less in each region fails with 0x21 and says which. */
static void check_exact_requirements(const ptec_program *program, const sample *s)
{
    ptec_requirements req;
    ptec_method m;
    CHECK_STATUS(ptec_method_requirements(&m, program, NULL, &req), PTEC_OK);
    ptec_memory mem;
    test_regions_alloc(&mem, &req);
    CHECK_STATUS(ptec_method_load(&m, program, NULL, &mem), PTEC_OK);
    run_and_compare(&m, s, 0);
    run_and_compare(&m, s, 1);
    ptec_method_unload(&m);
    checks += 2;

    ptec_memory short_mem = mem;
    short_mem.metadata_size -= 1;
    CHECK_STATUS(ptec_method_load(&m, program, NULL, &short_mem), PTEC_MEMORY_ALLOCATION_FAILED);
    CHECK(strstr(ptec_method_error(&m), "metadata") != NULL);
    CHECK(strstr(ptec_method_error(&m), "short by 1") != NULL);
    checks += 3;
    for (size_t i = 0; i < req.planned_count; ++i) {
        short_mem = mem;
        short_mem.planned_size[i] -= 1;
        CHECK_STATUS(ptec_method_load(&m, program, NULL, &short_mem), PTEC_MEMORY_ALLOCATION_FAILED);
        CHECK(strstr(ptec_method_error(&m), "planned buffer") != NULL);
        CHECK(strstr(ptec_method_error(&m), "short by 1") != NULL);
        checks += 3;
    }
    if (req.scratch_bytes > 0) {
        short_mem = mem;
        short_mem.scratch_size -= 1;
        CHECK_STATUS(ptec_method_load(&m, program, NULL, &short_mem), PTEC_MEMORY_ALLOCATION_FAILED);
        CHECK(strstr(ptec_method_error(&m), "scratch") != NULL);
        checks += 2;
    }
    test_regions_free(&mem);

    uint8_t *single = test_alloc(req.total_bytes);
    CHECK_STATUS(ptec_method_load_single(&m, program, NULL, single, req.total_bytes), PTEC_OK);
    run_and_compare(&m, s, 1);
    CHECK_STATUS(ptec_method_load_single(&m, program, NULL, single, req.total_bytes - 1),
                 PTEC_MEMORY_ALLOCATION_FAILED);
    CHECK(strstr(ptec_method_error(&m), "single buffer") != NULL);
    checks += 3;
    free(single);
}

static void check_bad_inputs(const ptec_program *program)
{
    ptec_requirements req;
    ptec_method m;
    CHECK_STATUS(ptec_method_requirements(&m, program, NULL, &req), PTEC_OK);
    uint8_t *buf = test_alloc(req.total_bytes);
    CHECK_STATUS(ptec_method_load_single(&m, program, NULL, buf, req.total_bytes), PTEC_OK);
    CHECK_STATUS(ptec_method_execute(&m), PTEC_INVALID_STATE);
    CHECK(strstr(ptec_method_error(&m), "input 0 was not set") != NULL);
    float one = 1.0f;
    int32_t good[1] = {1}, bad[1] = {2};
    CHECK_STATUS(ptec_method_set_input(&m, 0, PTEC_DTYPE_INT, good, 1, &one, 4), PTEC_INVALID_ARGUMENT);
    CHECK(strstr(ptec_method_error(&m), "dtype int32 given, program expects float32") != NULL);
    CHECK_STATUS(ptec_method_set_input(&m, 0, PTEC_DTYPE_FLOAT, bad, 1, &one, 4), PTEC_INVALID_ARGUMENT);
    CHECK(strstr(ptec_method_error(&m), "shape [2] given, program expects [1]") != NULL);
    CHECK_STATUS(ptec_method_set_input(&m, 0, PTEC_DTYPE_FLOAT, NULL, 0, &one, 3), PTEC_INVALID_ARGUMENT);
    CHECK(strstr(ptec_method_error(&m), "3 bytes given, program expects 4") != NULL);
    CHECK_STATUS(ptec_method_set_input(&m, 7, PTEC_DTYPE_FLOAT, NULL, 0, &one, 4), PTEC_INVALID_ARGUMENT);
    CHECK_STATUS(ptec_method_bind_input(&m, 0, PTEC_DTYPE_FLOAT, NULL, 0, &one, 4), PTEC_INVALID_STATE);
    CHECK_STATUS(ptec_method_requirements(&m, program, "nope", &req), PTEC_NOT_FOUND);
    CHECK(strstr(ptec_method_error(&m), "no method named 'nope'") != NULL);
    checks += 13;
    free(buf);
}

static void check_missing_operator(const uint8_t *add_pte, size_t size)
{
    uint8_t *copy = test_alloc(size);
    memcpy(copy, add_pte, size);
    uint8_t *at = NULL;
    for (size_t i = 0; i + 9 <= size; ++i) {
        if (memcmp(copy + i, "aten::add", 9) == 0) {
            at = copy + i;
        }
    }
    CHECK(at != NULL);
    if (at != NULL) {
        memcpy(at, "aten::zzz", 9); /* a name no build will ever have */
        ptec_program p;
        ptec_method m;
        ptec_requirements req;
        CHECK_STATUS(ptec_program_init(&p, copy, size), PTEC_OK);
        CHECK_STATUS(ptec_method_requirements(&m, &p, NULL, &req), PTEC_OPERATOR_MISSING);
        CHECK(strstr(ptec_method_error(&m), "instruction 0") != NULL);
        CHECK(strstr(ptec_method_error(&m), "operator aten::zzz.out is not in this build") != NULL);
        checks += 4;
    }
    free(copy);
}

static void check_delegate_sample(void)
{
    size_t size;
    uint8_t *bytes = load_path(shared_dir, "ethos_u_minimal_example.pte", &size);
    ptec_program p;
    ptec_requirements req;
    ptec_method m;
    CHECK_STATUS(ptec_program_init(&p, bytes, size), PTEC_OK);
    const char *id;
    size_t id_len;
    ptec_delegate_blob blob;
    CHECK_STATUS(ptec_program_delegate(&p, NULL, 0, &id, &id_len, &blob), PTEC_OK);
    CHECK(id_len == 13 && memcmp(id, "EthosUBackend", 13) == 0);
    CHECK(blob.size == 1312 && blob.data != NULL);
    CHECK(blob.size >= 15 && memcmp(blob.data, "vela_bin_stream", 15) == 0);
    CHECK(blob.spec_count > 0);
    int found_target = 0;
    for (size_t i = 0; i < blob.spec_count; ++i) {
        const char *key;
        size_t key_len, value_len;
        const uint8_t *value;
        CHECK_STATUS(ptec_delegate_compile_spec(&blob, i, &key, &key_len, &value, &value_len), PTEC_OK);
        if (key_len == 6 && memcmp(key, "target", 6) == 0) {
            found_target = value_len >= 9 && memcmp(value, "ethos-u55", 9) == 0;
        }
    }
    CHECK(found_target);
    CHECK_STATUS(ptec_program_delegate(&p, NULL, 1, &id, &id_len, &blob), PTEC_NOT_FOUND);
    uint8_t *buf = test_alloc(1 << 16);
    if (ptec_backend_find("EthosUBackend", 13) != NULL) {
        /* A build with the backend (the host's, PTEC_ETHOSU) loads it;
         * tests/c/test_ethos_u_delegate.c checks what it computes. */
        CHECK_STATUS(ptec_method_requirements(&m, &p, NULL, &req), PTEC_OK);
        CHECK_STATUS(ptec_method_load_single(&m, &p, NULL, buf, 1 << 16), PTEC_OK);
        ptec_method_unload(&m);
    } else {
        CHECK_STATUS(ptec_method_requirements(&m, &p, NULL, &req), PTEC_NOT_FOUND);
        CHECK(strstr(ptec_method_error(&m), "backend EthosUBackend not available") != NULL);
        CHECK_STATUS(ptec_method_load_single(&m, &p, NULL, buf, 1 << 16), PTEC_NOT_FOUND);
        CHECK(strstr(ptec_method_error(&m), "backend EthosUBackend not available") != NULL);
    }
    checks += 12;
    free(buf);
    free(bytes);
}

int main(void)
{
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; ++i) {
        size_t size;
        uint8_t *bytes = load_path(shared_dir, samples[i].file, &size);
        ptec_program program;
        CHECK_STATUS(ptec_program_init(&program, bytes, size), PTEC_OK);
        ++checks;
        check_exact_requirements(&program, &samples[i]);
        if (i == 0) {
            check_bad_inputs(&program);
            check_missing_operator(bytes, size);
        }
        free(bytes);
    }
    check_delegate_sample();
    return test_summary("upstream samples", checks);
}
