/* Oracles of spec §8.2/§8.3 on the direct driver API (ethosu_invoke_v3),
 * from the files make_npu_oracles.py extracts (COP1 payload, flash, layout):
 *
 *   kws_cnn_small_u65_256  Arm's own expected NPU output: input.bin must give
 *                          exactly expected.bin, on the model configured as a
 *                          U65-256 (and -1 on any other configuration);
 *   person_detect_u55_256  runs to NPU_OP_STOP on a U55-256 for person.bmp and
 *                          no_person.bmp with the operation and DMA counts of
 *                          spec §8.2, and passes TFLM's smoke check (person
 *                          wins on person.bmp, not on no_person.bmp); its
 *                          numeric oracle is separate.
 *
 *   test_npu_vela_oracles <oracle dir> <shared dir> */
#include "ptec/config.h"

#include "driver_direct.h"
#include "npu_model.h"
#include "test_util.h"

static const char *oracle_dir, *shared_dir;

typedef struct {
    uint8_t *cop, *flash;
    size_t cop_size, flash_size;
    char accelerator[32];
    size_t scratch_size, input_offset, input_size, output_offset, output_size;
} oracle;

static void *read_path(const char *dir, const char *name, const char *suffix, size_t *size)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s%s", dir, name, suffix);
    return test_read_file(path, size);
}

static void load(const char *name, oracle *o)
{
    o->cop = read_path(oracle_dir, name, ".cop", &o->cop_size);
    o->flash = read_path(oracle_dir, name, ".flash", &o->flash_size);
    size_t n;
    char *layout = read_path(oracle_dir, name, ".layout", &n);
    char text[128] = {0};
    memcpy(text, layout, n < sizeof(text) - 1 ? n : sizeof(text) - 1);
    free(layout);
    if (sscanf(text, "%31s %zu %zu %zu %zu %zu", o->accelerator, &o->scratch_size, &o->input_offset,
               &o->input_size, &o->output_offset, &o->output_size) != 6) {
        fprintf(stderr, "%s: bad layout line\n", name);
        exit(2);
    }
}

/* The work bytes the stream needs fit the direct driver's static buffer. */
static void check_work_bytes(const oracle *o)
{
    static ptec_npu_model m;
    ptec_npu_hw hw;
    const uint32_t *stream;
    size_t words;
    const char *detail = NULL;
    CHECK(ptec_npu_hw_from_name(o->accelerator, &hw) == 0);
    CHECK(ptec_npu_cop_check(&hw, o->cop, o->cop_size, &stream, &words, &detail) == 0);
    ptec_npu_model_init(&m, &hw, NULL, 0);
    size_t need = ptec_npu_model_work_bytes(&m, stream, words);
    printf("  %s: %zu work bytes (PTEC_NPU_MODEL_WORK_BYTES %u)\n", o->accelerator, need,
           (unsigned)PTEC_NPU_MODEL_WORK_BYTES);
    CHECK(need > 0u && need <= PTEC_NPU_MODEL_WORK_BYTES);
}

/* Runs o on `accelerator` with `input` placed in the scratch; the scratch
 * (caller frees) or NULL when ethosu_invoke_v3 returned -1. */
static uint8_t *run(const oracle *o, const char *accelerator, const uint8_t *input)
{
    ptec_npu_hw hw;
    if (ptec_npu_hw_from_name(accelerator, &hw) != 0) {
        exit(2);
    }
    ptec_npu_model_configure(&hw);
    uint8_t *scratch = test_alloc(o->scratch_size);
    uint8_t *fast = test_alloc(o->scratch_size);
    memset(scratch, 0, o->scratch_size);
    memcpy(scratch + o->input_offset, input, o->input_size);
    uint64_t base[3] = {(uint64_t)(uintptr_t)o->flash, (uint64_t)(uintptr_t)scratch, (uint64_t)(uintptr_t)fast};
    size_t size[3] = {o->flash_size, o->scratch_size, o->scratch_size};
    struct ethosu_driver *drv = ethosu_reserve_driver();
    int rc = ethosu_invoke_v3(drv, o->cop, (int)o->cop_size, base, size, 3, NULL);
    ethosu_release_driver(drv);
    free(fast);
    const ptec_npu_model *m = ptec_npu_model_driver_state();
    const ptec_npu_stats *s = ptec_npu_model_stats(m);
    const ptec_npu_fault *f = ptec_npu_model_fault(m);
    printf("  %s on %s: rc %d, %u commands, %u ops, %u DMAs (%llu B), %llu MACs, status 0x%x%s%s\n",
           o->accelerator, accelerator, rc, s->commands, s->operations, s->dma_count,
           (unsigned long long)s->dma_bytes, (unsigned long long)s->macs, f->status, f->detail ? ": " : "",
           f->detail ? f->detail : "");
    if (rc != 0) {
        free(scratch);
        return NULL;
    }
    return scratch;
}

static void test_kws(void)
{
    oracle o;
    load("kws_cnn_small_u65_256", &o);
    CHECK(strcmp(o.accelerator, "ethos-u65-256") == 0 && o.input_size == 490u && o.output_size == 12u);
    check_work_bytes(&o);
    char dir[1024];
    snprintf(dir, sizeof(dir), "%s/models/ethos-u/arm/kws_cnn_small-ethos-u65-256", shared_dir);
    size_t input_size, expected_size;
    uint8_t *input = read_path(dir, "input", ".bin", &input_size);
    uint8_t *expected = read_path(dir, "expected", ".bin", &expected_size);
    CHECK(input_size == 490u && expected_size == 12u);
    uint8_t *scratch = run(&o, "ethos-u65-256", input);
    CHECK(scratch != NULL);
    if (scratch != NULL) {
        CHECK(memcmp(scratch + o.output_offset, expected, 12) == 0);
        printf("  output:");
        for (int i = 0; i < 12; i++) {
            printf(" %02x", scratch[o.output_offset + (size_t)i]);
        }
        printf(" (expected.bin: 80 ba 80 81 80 80 80 80 80 80 80 45)\n");
        free(scratch);
    }
    /* compiled for a U65-256: refused on the others */
    const char *others[] = {"ethos-u65-512", "ethos-u55-256", "ethos-u55-128"};
    for (int i = 0; i < 3; i++) {
        CHECK(run(&o, others[i], input) == NULL);
    }
    free(input);
    free(expected);
    free(o.cop);
    free(o.flash);
}

static void test_person_detect(void)
{
    oracle o;
    load("person_detect_u55_256", &o);
    CHECK(strcmp(o.accelerator, "ethos-u55-256") == 0 && o.input_size == 9216u && o.output_size == 2u);
    check_work_bytes(&o);
    const char *images[] = {"person.bmp", "no_person.bmp"};
    for (int i = 0; i < 2; i++) {
        char dir[1024];
        snprintf(dir, sizeof(dir), "%s/models/ethos-u/tflm/", shared_dir);
        size_t n;
        uint8_t *bmp = read_path(dir, images[i], "", &n);
        /* TFLM's test input (shared/models/ethos-u/README.md): the 8-bit pixel
         * indices in top-to-bottom row order (the file stores rows bottom-up,
         * pixel data at the offset in bytes 10..13), reinterpreted as int8 */
        uint32_t pixels = (uint32_t)bmp[10] | (uint32_t)bmp[11] << 8 | (uint32_t)bmp[12] << 16 |
                          (uint32_t)bmp[13] << 24;
        CHECK(pixels <= n && n - pixels >= 9216u);
        uint8_t input[9216];
        for (int row = 0; row < 96; row++) {
            memcpy(input + 96 * row, bmp + pixels + 96 * (95 - row), 96);
        }
        uint8_t *scratch = run(&o, "ethos-u55-256", input);
        CHECK(scratch != NULL);
        if (scratch != NULL) {
            const ptec_npu_stats *s = ptec_npu_model_stats(ptec_npu_model_driver_state());
            /* spec §8.2: 1,393 commands; CONV 32 + DEPTHWISE 23 + POOL 3 +
             * ELEMENTWISE 29 = 87 ops; 55 DMAs (54 weight slices + 1 KiB LUT) */
            CHECK(s->commands == 1393u && s->operations == 87u && s->dma_count == 55u);
            int8_t no_person = (int8_t)scratch[o.output_offset], person = (int8_t)scratch[o.output_offset + 1];
            printf("  %s: no-person %d, person %d\n", images[i], no_person, person);
            /* TFLM's smoke check: person wins on person.bmp, no-person on no_person.bmp */
            CHECK(i == 0 ? person > no_person : no_person > person);
            free(scratch);
        }
        free(bmp);
    }
    free(o.cop);
    free(o.flash);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_npu_vela_oracles <oracle dir> <shared dir>\n");
        return 2;
    }
    oracle_dir = argv[1];
    shared_dir = argv[2];
    test_kws();
    test_person_detect();
    return test_summary("test_npu_vela_oracles", 16);
}
