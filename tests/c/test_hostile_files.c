/* Hostile files: every truncation and a large sample of single-byte
 * corruptions of each sample must give a status error or a valid run.
 * Run under ASan/UBSan (host-asan preset), any crash or report fails. */
#include <stdint.h>

#include "ptec/ptec.h"
#include "test_util.h"

static const char *const files[] = {"add.pte", "add_arduino.pte", "ModuleLinear-no-constant-segment.pte",
                                    "ethos_u_minimal_example.pte"};

static unsigned long runs, ran_ok, record_refused;

static uint32_t next_random(uint32_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 17;
    *state ^= *state << 5;
    return *state;
}

/* Everything a user would do with a file; the outcome only has to be sane. */
static void exercise(const uint8_t *bytes, size_t size)
{
    uint8_t *copy = test_alloc(size);
    memcpy(copy, bytes, size);
    ptec_program p;
    ptec_method m;
    ptec_requirements req;
    ++runs;
    if (ptec_program_init(&p, copy, size) != PTEC_OK) {
        CHECK(ptec_program_error(&p)[0] != '\0');
        free(copy);
        return;
    }
    if (ptec_method_requirements(&m, &p, NULL, &req) != PTEC_OK) {
        CHECK(ptec_method_error(&m)[0] != '\0');
        free(copy);
        return;
    }
    if (req.total_bytes > (64u << 20)) {
        /* A corrupted size can ask for a lot; the runtime reported it, which is all we need. */
        free(copy);
        return;
    }
    uint8_t *buf = test_alloc(req.total_bytes);
    uint32_t from_record = m.measured.from_record;
    ptec_status loaded = ptec_method_load_single(&m, &p, NULL, buf, req.total_bytes);
    /* The measuring requirements pass judges a program exactly as load
     * does. Requirements read from the program's record judge nothing: the
     * load, the one walk, refuses a damaged program (or a record that
     * disagrees) with a clean status and its one line. */
    if (loaded != PTEC_OK && !from_record) {
        fprintf(stderr, "requirements accepted what load refused: %s\n", ptec_method_error(&m));
    }
    CHECK(loaded == PTEC_OK || (from_record && loaded != PTEC_INTERNAL && ptec_method_error(&m)[0] != '\0' &&
                                strchr(ptec_method_error(&m), '\n') == NULL));
    if (from_record && loaded != PTEC_OK) {
        ++record_refused;
    }
    if (loaded == PTEC_OK) {
        for (size_t i = 0; i < ptec_method_input_count(&m); ++i) {
            ptec_tensor_info info;
            if (ptec_method_input_info(&m, i, &info) == PTEC_OK && info.kind == PTEC_VALUE_TENSOR) {
                uint8_t *data = test_alloc(info.nbytes);
                memset(data, 0x3f, info.nbytes);
                if (info.planned) {
                    (void)ptec_method_set_input(&m, i, info.dtype, NULL, 0, data, info.nbytes);
                    free(data);
                } else {
                    (void)ptec_method_bind_input(&m, i, info.dtype, NULL, 0, data, info.nbytes);
                    /* leaked on purpose only until the end of this run */
                    free(data);
                    data = NULL;
                    (void)data;
                }
            }
        }
        /* Inputs bound to freed memory would be a test bug, so only run when all are planned. */
        int all_planned = 1;
        for (size_t i = 0; i < ptec_method_input_count(&m); ++i) {
            ptec_tensor_info info;
            if (ptec_method_input_info(&m, i, &info) == PTEC_OK && info.kind == PTEC_VALUE_TENSOR && !info.planned) {
                all_planned = 0;
            }
        }
        if (all_planned && ptec_method_execute(&m) == PTEC_OK) {
            ++ran_ok;
        }
        ptec_method_unload(&m);
    }
    free(buf);
    free(copy);
}

/* usage: test_hostile_files [EXTRA.pte...]: the upstream samples, then any
 * extra programs (ptec-built ones, which exercise the cortex_m kernels). */
int main(int argc, char **argv)
{
    const unsigned corruptions = 4000u;
    uint32_t seed = 0x2545f491u;
    size_t n_files = sizeof files / sizeof files[0] + (size_t)(argc - 1);
    for (size_t f = 0; f < n_files; ++f) {
        char path[1024];
        size_t size;
        if (f < sizeof files / sizeof files[0]) {
            snprintf(path, sizeof path, "%s/models/upstream/%s", PTEC_SHARED_DIR, files[f]);
        } else {
            snprintf(path, sizeof path, "%s", argv[1 + f - sizeof files / sizeof files[0]]);
        }
        uint8_t *bytes = test_read_file(path, &size);
        for (size_t len = 0; len < size; ++len) {
            exercise(bytes, len);
        }
        uint8_t *mutated = malloc(size);
        /* Every byte gets a few systematic corruptions, then random ones follow. */
        static const uint8_t flips[] = {0x01, 0x80, 0xff};
        for (size_t at = 0; at < size; ++at) {
            for (size_t v = 0; v < sizeof flips + 1u; ++v) {
                memcpy(mutated, bytes, size);
                mutated[at] = v < sizeof flips ? (uint8_t)(mutated[at] ^ flips[v]) : 0;
                exercise(mutated, size);
            }
        }
        for (unsigned k = 0; k < corruptions; ++k) {
            memcpy(mutated, bytes, size);
            size_t at = next_random(&seed) % size;
            uint8_t value = (uint8_t)next_random(&seed);
            mutated[at] = (k & 1u) ? value : (uint8_t)(mutated[at] ^ (1u << (k % 8u)));
            exercise(mutated, size);
        }
        free(mutated);
        free(bytes);
    }
    printf("hostile files: %lu runs, %lu executed successfully, the rest refused with a status (%lu by the load "
           "after requirements from the record)\n", runs, ran_ok, record_refused);
    return test_summary("hostile files", (int)runs);
}
