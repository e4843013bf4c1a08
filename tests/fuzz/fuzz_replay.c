/* Runs saved fuzz inputs through the fuzz target without libFuzzer, so the
 * seed and regression corpora run under ctest with any compiler (host and
 * host-asan presets).
 *
 *   fuzz_replay [--expect-ran] <file or directory>...
 *
 * Prints how far each input got. --expect-ran fails unless every input ran
 * to the end (the seeds: a seed that no longer loads would start the fuzzer
 * far from the paths it is meant to reach). A crash is the failure the
 * regression corpus exists to catch: ASan reports it and the run aborts. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../c/test_util.h"
#include "fuzz_program.h"

static int files_run;

static void run_file(const char *path, int expect_ran)
{
    size_t n;
    uint8_t *data = test_read_file(path, &n);
    fuzz_stage stage = fuzz_run_program(data, n);
    free(data);
    ++files_run;
    const int short_of_end = expect_ran && stage != FUZZ_STAGE_RAN;
    test_failures += short_of_end;
    printf("%-48s %6zu bytes  %s\n", path, n, fuzz_stage_name(stage));
    if (short_of_end) {
        printf("  expected it to run to the end; the runtime said: %s\n", fuzz_last_error);
    }
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void run_path(const char *path, int expect_ran)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "no such file or directory: %s\n", path);
        exit(2);
    }
    if (!S_ISDIR(st.st_mode)) {
        run_file(path, expect_ran);
        return;
    }
    DIR *dir = opendir(path);
    char **names = NULL;
    size_t count = 0, capacity = 0;
    for (struct dirent *e = readdir(dir); e != NULL; e = readdir(dir)) {
        if (e->d_name[0] == '.') {
            continue;
        }
        if (count == capacity) {
            capacity = capacity ? 2 * capacity : 256;
            names = realloc(names, capacity * sizeof names[0]);
            if (names == NULL) {
                exit(2);
            }
        }
        names[count++] = strdup(e->d_name);
    }
    closedir(dir);
    if (count > 1) {
        qsort(names, count, sizeof names[0], by_name);
    }
    for (size_t i = 0; i < count; ++i) {
        char full[4096];
        snprintf(full, sizeof full, "%s/%s", path, names[i]);
        if (strcmp(names[i], "README.md") != 0) {
            run_file(full, expect_ran);
        }
        free(names[i]);
    }
    free(names);
}

int main(int argc, char **argv)
{
    int expect_ran = 0;
    int first = 1;
    if (argc > 1 && strcmp(argv[1], "--expect-ran") == 0) {
        expect_ran = 1;
        first = 2;
    }
    if (first >= argc) {
        fprintf(stderr, "usage: fuzz_replay [--expect-ran] <file or directory>...\n");
        return 2;
    }
    for (int i = first; i < argc; ++i) {
        run_path(argv[i], expect_ran);
    }
    printf("fuzz_replay: %d inputs, no crash\n", files_run);
    if (test_failures) {
        printf("fuzz_replay: %d of them stopped before the end\n", test_failures);
        return 1;
    }
    return 0;
}
