/* Runs every hand-made hostile program of make_hostile_programs.py through
 * the calls a user makes, and checks that the first call to fail is the one
 * the manifest names, with its status and the words of its detail.
 *
 *   test_hostile_programs DIR       (reads DIR/cases.txt)
 *
 * Under the host-asan preset any out-of-bounds access is a failure too. */
#include <stdint.h>

#include "ptec/ptec.h"
#include "../c/test_util.h"

#define LARGEST_LOAD (64u << 20) /* a "fits" case asks for more than this */

typedef struct outcome {
    const char *step;  /* the call that failed, "fits" or "none" */
    ptec_status status;
} outcome;

/* The independent oracle for the requirements' total: the sum of what the
 * single buffer must hold, in the compiler's checked arithmetic. */
static int total_covers_parts(const ptec_requirements *r)
{
    uint64_t sum = r->metadata_bytes, next;
    for (size_t i = 0; i < r->planned_count; ++i) {
        if (__builtin_add_overflow(sum, (uint64_t)r->planned_bytes[i], &next)) {
            return 0;
        }
        sum = next;
    }
    return !__builtin_add_overflow(sum, (uint64_t)r->scratch_bytes, &next) && r->total_bytes >= next;
}

/* Init's detail is the program's; every later call's is the method's. */
static outcome run(ptec_program *p, ptec_method *m, uint8_t *bytes, size_t size)
{
    ptec_requirements req;
    ptec_status st;
    memset(m, 0, sizeof *m);
    if ((st = ptec_program_init(p, bytes, size)) != PTEC_OK) {
        return (outcome){"init", st};
    }
    if ((st = ptec_method_requirements(m, p, NULL, &req)) != PTEC_OK) {
        return (outcome){"requirements", st};
    }
    CHECK(total_covers_parts(&req));
    if (req.total_bytes > LARGEST_LOAD) {
        return (outcome){"fits", PTEC_OK};
    }
    uint8_t *arena = test_alloc(req.total_bytes);
    outcome result = {"none", PTEC_OK};
    if ((st = ptec_method_load_single(m, p, NULL, arena, req.total_bytes)) != PTEC_OK) {
        free(arena);
        return (outcome){"load", st};
    }
    uint8_t ones[4096];
    memset(ones, 0x3f, sizeof ones);
    for (size_t i = 0; i < ptec_method_input_count(m); ++i) {
        ptec_tensor_info info;
        CHECK_STATUS(ptec_method_input_info(m, i, &info), PTEC_OK);
        CHECK(info.nbytes <= sizeof ones && info.planned);
        CHECK_STATUS(ptec_method_set_input(m, i, (ptec_dtype)info.dtype, info.sizes, info.rank, ones, info.nbytes),
                     PTEC_OK);
    }
    if ((st = ptec_method_execute(m)) != PTEC_OK) {
        result = (outcome){"execute", st};
    } else {
        const ptec_tensor *out;
        CHECK_STATUS(ptec_method_output(m, 0, &out), PTEC_OK);
    }
    ptec_method_unload(m);
    free(arena);
    return result;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/cases.txt", argv[1]);
    FILE *manifest = fopen(path, "r");
    if (manifest == NULL) {
        fprintf(stderr, "cannot open %s\n", path);
        return 2;
    }
    const char *bits = sizeof(size_t) == 8 ? "64" : "32";
    int checks = 0, cases = 0;
    char line[512];
    while (fgets(line, sizeof line, manifest) != NULL) {
        char file[128], when[8], step[16], status[64];
        int used = 0;
        line[strcspn(line, "\n")] = '\0';
        if (sscanf(line, "%127s %7s %15s %63s %n", file, when, step, status, &used) != 4) {
            fprintf(stderr, "bad manifest line: %s\n", line);
            ++test_failures;
            continue;
        }
        if (strcmp(when, "any") != 0 && strcmp(when, bits) != 0) {
            continue;
        }
        const char *words = used > 0 ? line + used : "";
        snprintf(path, sizeof path, "%s/%s", argv[1], file);
        size_t size;
        uint8_t *bytes = test_read_file(path, &size);
        ptec_program p;
        ptec_method m;
        outcome got = run(&p, &m, bytes, size);
        const char *detail = strcmp(got.step, "init") == 0 ? ptec_program_error(&p) : ptec_method_error(&m);
        int ok = strcmp(got.step, step) == 0 && strcmp(ptec_status_str(got.status), status) == 0 &&
                 (got.status == PTEC_OK || (detail[0] != '\0' && strstr(detail, words) != NULL));
        printf("%-30s %-12s %-16s %s\n", file, got.step, ptec_status_str(got.status), ok ? "ok" : "WRONG");
        if (!ok) {
            fprintf(stderr, "%s: want %s %s \"%s\", got %s %s: %s\n", file, step, status, words, got.step,
                    ptec_status_str(got.status), detail);
            ++test_failures;
        }
        free(bytes);
        ++cases;
        ++checks;
    }
    fclose(manifest);
    CHECK(cases >= 20); /* a manifest that lost its cases must not pass */
    ++checks;
    return test_summary("hostile programs", checks);
}
