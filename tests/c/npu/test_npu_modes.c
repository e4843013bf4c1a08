/* The two ways to drive ptec_npu_model give the same bytes and the same
 * return codes (issue 11, docs/ethos-u.md "Register-level mode"). This one
 * source is built three times: against driver_direct.c (mode (a)), and
 * against Arm's unmodified driver over driver_regs.c built for the U55 and
 * for the U65 (mode (b)). Each build runs the cases of one product, checks
 * the oracles it can by itself, and writes a transcript (return code, the
 * model's STATUS/QREAD/counters where the model ran, and digests of every
 * byte of every region); compare_modes.sh requires the transcripts of the
 * two modes to be identical.
 *
 * Cases (make_mode_cases.py extracts them from shared/models):
 *   u55: ethos_u_minimal_example all 65,536 input pairs on an ethos-u55-128
 *        (against ((in0 + in1 + 257) >> 1) - 128); person_detect_vela on an
 *        ethos-u55-256 (person.bmp, no_person.bmp, 10 seeded inputs); that stream on a u55-256 given a
 *        u55-128 stream (the driver refuses: -1); a scratch region too small
 *        and a missing flash (the model faults: -1); a misaligned base (-1).
 *   u65: the kws U65-256 network (input.bin against Arm's expected.bin, and
 *        two seeded inputs); the minimal example relabelled as a u65-256 stream
 *        (all 65,536 pairs: the 40-bit QBASE/BASEPn path); the u55-128
 *        stream on a u65-256 (-1).
 *
 * Usage: test_npu_modes u55|u65 <shared dir> <case dir> <transcript> */
#include <inttypes.h>

#include "driver_direct.h"
#include "npu_model.h"
#include "test_util.h"

#define PERSON_DETECT_SEEDS 10
#define BASE_COUNT 3 /* region 0 flash, 1 scratch, 2 fast scratch, as the delegate passes them */

typedef struct net_case {
    char target[32];
    uint8_t *cop;
    size_t cop_size;
    uint8_t *flash;
    size_t flash_size;
    size_t scratch_size, fast_size;
    int inputs, outputs;
    size_t input_offset[4], input_size[4];
    size_t output_offset[4], output_size[4];
} net_case;

static FILE *transcript;

static void load_case(const char *dir, const char *name, net_case *c)
{
    char path[1024];
    memset(c, 0, sizeof(*c));
    snprintf(path, sizeof(path), "%s/%s.cop", dir, name);
    c->cop = test_read_file(path, &c->cop_size);
    snprintf(path, sizeof(path), "%s/%s.flash", dir, name);
    c->flash = test_read_file(path, &c->flash_size);
    snprintf(path, sizeof(path), "%s/%s.txt", dir, name);
    FILE *f = fopen(path, "r");
    if (f == NULL || fscanf(f, "target %31s scratch %zu fast %zu inputs %d", c->target, &c->scratch_size,
                            &c->fast_size, &c->inputs) != 4 || c->inputs < 1 || c->inputs > 4) {
        fprintf(stderr, "bad case file %s\n", path);
        exit(2);
    }
    for (int i = 0; i < c->inputs; i++) {
        if (fscanf(f, "%zu %zu", &c->input_offset[i], &c->input_size[i]) != 2) {
            exit(2);
        }
    }
    if (fscanf(f, " outputs %d", &c->outputs) != 1 || c->outputs < 1 || c->outputs > 4) {
        exit(2);
    }
    for (int i = 0; i < c->outputs; i++) {
        if (fscanf(f, "%zu %zu", &c->output_offset[i], &c->output_size[i]) != 2) {
            exit(2);
        }
    }
    fclose(f);
}

static void free_case(net_case *c)
{
    free(c->cop);
    free(c->flash);
}

static void configure(const char *name)
{
    ptec_npu_hw hw;
    if (ptec_npu_hw_from_name(name, &hw) != 0) {
        fprintf(stderr, "unknown NPU %s\n", name);
        exit(2);
    }
    ptec_npu_model_configure(&hw);
}

/* FNV-1a, 64-bit: a digest of bytes for the transcript. */
static uint64_t fnv(uint64_t h, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        h = (h ^ p[i]) * 0x100000001b3ull;
    }
    return h;
}
#define FNV_START 0xcbf29ce484222325ull

/* One run's memory: the flash copy and the two scratch areas, with slack so
 * a deliberately understated size stays inside what ASan sees as allocated. */
typedef struct run_memory {
    uint8_t *flash, *scratch, *fast;
    uint64_t base[BASE_COUNT];
    size_t size[BASE_COUNT];
} run_memory;

static void memory_init(run_memory *m, const net_case *c)
{
    m->flash = test_alloc(c->flash_size + 16u);
    memcpy(m->flash, c->flash, c->flash_size);
    m->scratch = test_alloc(c->scratch_size + 16u);
    m->fast = test_alloc(c->fast_size + 16u);
    memset(m->scratch, 0, c->scratch_size + 16u);
    memset(m->fast, 0, c->fast_size + 16u);
    m->size[0] = c->flash_size;
    m->size[1] = c->scratch_size;
    m->size[2] = c->fast_size;
}

static void memory_free(run_memory *m)
{
    free(m->flash);
    free(m->scratch);
    free(m->fast);
}

/* ethosu_reserve_driver / ethosu_invoke_v3 / ethosu_release_driver, as the
 * delegate calls them; the bases are rebuilt for every call (the driver may
 * write base_addr[2]). */
static int invoke(const net_case *c, run_memory *m)
{
    m->base[0] = (uint64_t)(uintptr_t)m->flash;
    m->base[1] = (uint64_t)(uintptr_t)m->scratch;
    m->base[2] = (uint64_t)(uintptr_t)m->fast;
    struct ethosu_driver *drv = ethosu_reserve_driver();
    CHECK(drv != NULL);
    if (drv == NULL) {
        return -2;
    }
    int rc = ethosu_invoke_v3(drv, c->cop, (int)c->cop_size, m->base, m->size, BASE_COUNT, NULL);
    ethosu_release_driver(drv);
    return rc;
}

static void record(const char *label, int rc, int model_ran, const run_memory *m, const net_case *c)
{
    fprintf(transcript, "%s rc=%d", label, rc);
    if (model_ran) {
        const ptec_npu_model *state = ptec_npu_model_driver_state();
        const ptec_npu_fault *fault = ptec_npu_model_fault(state);
        const ptec_npu_stats *stats = ptec_npu_model_stats(state);
        fprintf(transcript, " status=0x%08" PRIx32 " qread=%" PRIu32 " index=%" PRIu32 " commands=%" PRIu32
                " operations=%" PRIu32 " dmas=%" PRIu32 " dma_bytes=%" PRIu64 " macs=%" PRIu64,
                fault->status, fault->qread, fault->command_index, stats->commands, stats->operations,
                stats->dma_count, stats->dma_bytes, stats->macs);
    }
    fprintf(transcript, " flash=%016" PRIx64 " scratch=%016" PRIx64 " fast=%016" PRIx64 " out=",
            fnv(FNV_START, m->flash, c->flash_size),
            fnv(FNV_START, m->scratch, c->scratch_size), fnv(FNV_START, m->fast, c->fast_size));
    for (int o = 0; o < c->outputs; o++) {
        for (size_t i = 0; i < c->output_size[o] && i < 64u; i++) {
            fprintf(transcript, "%02x", m->scratch[c->output_offset[o] + i]);
        }
    }
    fprintf(transcript, "\n");
}

/* The minimal example's Add for every int8 pair; the digest of all outputs
 * and the count of failed calls go to the transcript. */
static void all_pairs(const char *label, const net_case *c)
{
    run_memory m;
    memory_init(&m, c);
    uint64_t digest = FNV_START;
    int failed_calls = 0, wrong = 0;
    for (int a = -128; a < 128; a++) {
        for (int b = -128; b < 128; b++) {
            m.scratch[c->input_offset[0]] = (uint8_t)(int8_t)a;
            m.scratch[c->input_offset[1]] = (uint8_t)(int8_t)b;
            int rc = invoke(c, &m);
            failed_calls += rc != 0;
            int8_t out = (int8_t)m.scratch[c->output_offset[0]];
            wrong += rc == 0 && out != (int8_t)(((a + b + 257) >> 1) - 128);
            digest = fnv(digest, &m.scratch[c->output_offset[0]], 1);
        }
    }
    CHECK(failed_calls == 0);
    CHECK(wrong == 0);
    fprintf(transcript, "%s pairs=65536 failed_calls=%d outputs=%016" PRIx64 "\n", label, failed_calls, digest);
    record(label, failed_calls ? -1 : 0, 1, &m, c);
    memory_free(&m);
}

/* A seeded input (a small LCG, the same in every build). */
static void seeded_input(uint8_t *p, size_t n, uint32_t seed)
{
    uint32_t x = seed * 2654435761u + 1u;
    for (size_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        p[i] = (uint8_t)(x >> 24);
    }
}

/* One network call with the given input bytes (NULL: seeded). */
static int run_network(const char *label, const net_case *c, const uint8_t *input, uint32_t seed, run_memory *m)
{
    memory_init(m, c);
    if (input != NULL) {
        memcpy(m->scratch + c->input_offset[0], input, c->input_size[0]);
    } else {
        seeded_input(m->scratch + c->input_offset[0], c->input_size[0], seed);
    }
    int rc = invoke(c, m);
    record(label, rc, 1, m, c);
    return rc;
}

/* A stream for another NPU: the driver refuses it before the model runs. */
static void refusals(const char *name, const net_case *minimal, const char *other_npu)
{
    run_memory m;
    char label[64];

    configure(other_npu);
    memory_init(&m, minimal);
    int rc = invoke(minimal, &m);
    CHECK(rc == -1);
    snprintf(label, sizeof(label), "%s_on_%s", name, other_npu);
    record(label, rc, 0, &m, minimal);
    memory_free(&m);
}

/* The model faults (the driver sees STATUS), or the driver refuses a base. */
static void model_faults(const net_case *minimal)
{
    run_memory m;
    configure(minimal->target);

    /* the scratch region ends before the inputs at 16 and 64 */
    memory_init(&m, minimal);
    m.size[1] = 16;
    int rc = invoke(minimal, &m);
    CHECK(rc == -1);
    CHECK((ptec_npu_model_fault(ptec_npu_model_driver_state())->status & PTEC_NPU_STATUS_BUS_STATUS) != 0u);
    record("minimal_scratch_16_bytes", rc, 1, &m, minimal);
    memory_free(&m);

    /* no flash: the region-0 constant of the MULs is out of reach */
    memory_init(&m, minimal);
    m.size[0] = 0;
    rc = invoke(minimal, &m);
    CHECK(rc == -1);
    record("minimal_no_flash", rc, 1, &m, minimal);
    memory_free(&m);

    /* a base that is not 16-byte aligned: the driver refuses */
    memory_init(&m, minimal);
    struct ethosu_driver *drv = ethosu_reserve_driver();
    uint64_t base[BASE_COUNT] = {(uint64_t)(uintptr_t)m.flash + 4u, (uint64_t)(uintptr_t)m.scratch,
                                 (uint64_t)(uintptr_t)m.fast};
    rc = ethosu_invoke_v3(drv, minimal->cop, (int)minimal->cop_size, base, m.size, BASE_COUNT, NULL);
    ethosu_release_driver(drv);
    CHECK(rc == -1);
    record("minimal_misaligned_base", rc, 0, &m, minimal);
    memory_free(&m);
}

static void u55_cases(const char *dir)
{
    net_case minimal, person;
    load_case(dir, "minimal_example", &minimal);
    configure(minimal.target);
    all_pairs("minimal_u55_128", &minimal);
    model_faults(&minimal);
    refusals("minimal", &minimal, "ethos-u55-256");

    load_case(dir, "person_detect", &person);
    configure(person.target);
    char path[1024];
    size_t images_size;
    snprintf(path, sizeof(path), "%s/person_detect.images", dir);
    uint8_t *images = test_read_file(path, &images_size);
    CHECK(images_size == 2u * person.input_size[0]);
    const char *image_names[] = {"person_detect_person_bmp", "person_detect_no_person_bmp"};
    for (int i = 0; i < 2 && images_size == 2u * person.input_size[0]; i++) {
        run_memory m;
        CHECK(run_network(image_names[i], &person, images + (size_t)i * person.input_size[0], 0, &m) == 0);
        memory_free(&m);
    }
    free(images);
    for (uint32_t seed = 1; seed <= PERSON_DETECT_SEEDS; seed++) {
        char label[64];
        run_memory m;
        snprintf(label, sizeof(label), "person_detect_seed%" PRIu32, seed);
        CHECK(run_network(label, &person, NULL, seed, &m) == 0);
        memory_free(&m);
    }
    /* a u55-256 stream on a u55-128 */
    refusals("person_detect", &person, "ethos-u55-128");
    free_case(&minimal);
    free_case(&person);
}

static void u65_cases(const char *shared, const char *dir)
{
    net_case kws, minimal;
    char path[1024];
    load_case(dir, "kws_u65", &kws);
    configure(kws.target);
    size_t input_size, expected_size;
    snprintf(path, sizeof(path), "%s/models/ethos-u/arm/kws_cnn_small-ethos-u65-256/input.bin", shared);
    uint8_t *input = test_read_file(path, &input_size);
    snprintf(path, sizeof(path), "%s/models/ethos-u/arm/kws_cnn_small-ethos-u65-256/expected.bin", shared);
    uint8_t *expected = test_read_file(path, &expected_size);
    CHECK(input_size == kws.input_size[0] && expected_size == kws.output_size[0]);
    run_memory m;
    int rc = run_network("kws_input_bin", &kws, input, 0, &m);
    /* Arm's expected bytes (spec §8.3) */
    CHECK(rc == 0);
    CHECK(memcmp(m.scratch + kws.output_offset[0], expected, expected_size) == 0);
    memory_free(&m);
    for (uint32_t seed = 1; seed <= 2; seed++) {
        char label[64];
        snprintf(label, sizeof(label), "kws_seed%" PRIu32, seed);
        CHECK(run_network(label, &kws, NULL, seed, &m) == 0);
        memory_free(&m);
    }

    /* The minimal example's stream declared for a u65-256: OPTIMIZER_CONFIG
     * config word (COP word 2) := Vela's u65-256 word. */
    load_case(dir, "minimal_example", &minimal);
    refusals("minimal", &minimal, "ethos-u65-256");
    uint32_t u65_256 = 0x10003008u;
    CHECK(minimal.cop_size > 12u);
    memcpy(minimal.cop + 8, &u65_256, sizeof(u65_256));
    configure("ethos-u65-256");
    all_pairs("minimal_as_u65_256", &minimal);
    free(input);
    free(expected);
    free_case(&kws);
    free_case(&minimal);
}

int main(int argc, char **argv)
{
    if (argc != 5 || (strcmp(argv[1], "u55") != 0 && strcmp(argv[1], "u65") != 0)) {
        fprintf(stderr, "usage: test_npu_modes u55|u65 <shared dir> <case dir> <transcript>\n");
        return 2;
    }
    transcript = fopen(argv[4], "w");
    if (transcript == NULL) {
        fprintf(stderr, "cannot write %s\n", argv[4]);
        return 2;
    }
    if (strcmp(argv[1], "u55") == 0) {
        u55_cases(argv[3]);
    } else {
        u65_cases(argv[2], argv[3]);
    }
    fclose(transcript);
    return test_summary(argv[1], 1);
}
