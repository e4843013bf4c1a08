/* The portable kernels through the public runtime API: hand-checked
 * programs must give their expected bytes exactly, and malformed calls must
 * fail while the method loads (in the requirements pass, where TensorList
 * items are decoded into temporaries) with the expected status and a
 * message naming the problem; a few well-formed calls must fail while they
 * execute (an integer division by zero), with the expected status and
 * message. The programs and expected values come from make_portable_cases.py.
 * Usage: test_portable_kernels CASE_DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../c/test_util.h"
#include "ptec/ptec.h"

static char case_dir[1024];

static void *read_case_file(const char *name, const char *suffix, size_t *size)
{
    char path[1400];
    snprintf(path, sizeof path, "%s/%s%s", case_dir, name, suffix);
    return test_read_file(path, size);
}

static int load(const char *name, ptec_program *program, ptec_method *method, void **pte, void **buffer)
{
    size_t size;
    ptec_requirements req;
    *pte = read_case_file(name, ".pte", &size);
    *buffer = NULL;
    ptec_status st = ptec_program_init(program, *pte, size);
    if (st == PTEC_OK) {
        st = ptec_method_requirements(method, program, NULL, &req);
    }
    if (st == PTEC_OK) {
        *buffer = test_alloc(req.total_bytes);
        st = ptec_method_load_single(method, program, NULL, *buffer, req.total_bytes);
    }
    return (int)st;
}

/* The detail of whichever step failed. */
static const char *detail_of(const ptec_program *program, const ptec_method *method)
{
    return ptec_program_error(program)[0] != '\0' ? ptec_program_error(program) : ptec_method_error(method);
}

/* Sets the case's inputs NAME.in<i>.bin; the number refused. */
static int set_inputs(const char *name, const ptec_program *program, ptec_method *method, int inputs)
{
    int failures = 0;
    for (int i = 0; i < inputs; ++i) {
        char suffix[32];
        size_t size;
        ptec_tensor_info info;
        snprintf(suffix, sizeof suffix, ".in%d.bin", i);
        void *data = read_case_file(name, suffix, &size);
        if (ptec_method_input_info(method, (size_t)i, &info) != PTEC_OK ||
            ptec_method_set_input(method, (size_t)i, (ptec_dtype)info.dtype, NULL, 0, data, size) != PTEC_OK) {
            fprintf(stderr, "%s: input %d refused: %s\n", name, i, detail_of(program, method));
            ++failures;
        }
        free(data);
    }
    return failures;
}

static int run_case(const char *name, int inputs, int outputs)
{
    ptec_program program;
    ptec_method method;
    void *pte, *buffer;
    int failures = 0;
    int st = load(name, &program, &method, &pte, &buffer);
    if (st != PTEC_OK) {
        fprintf(stderr, "%s: load failed: %s\n", name, detail_of(&program, &method));
        free(pte);
        free(buffer);
        return 1;
    }
    failures += set_inputs(name, &program, &method, inputs);
    if (failures == 0 && ptec_method_execute(&method) != PTEC_OK) {
        fprintf(stderr, "%s: execute failed: %s\n", name, detail_of(&program, &method));
        ++failures;
    }
    for (int i = 0; failures == 0 && i < outputs; ++i) {
        char suffix[32];
        size_t size;
        const ptec_tensor *out;
        snprintf(suffix, sizeof suffix, ".out%d.bin", i);
        void *want = read_case_file(name, suffix, &size);
        if (ptec_method_output(&method, (size_t)i, &out) != PTEC_OK || out->nbytes != size ||
            memcmp(out->data, want, size) != 0) {
            fprintf(stderr, "%s: output %d differs from the hand-checked bytes\n", name, i);
            ++failures;
        }
        free(want);
        /* the sizes it reports (a bound-dynamic out's: the run's) */
        size_t sizes_bytes;
        snprintf(suffix, sizeof suffix, ".out%d.sizes", i);
        int32_t *sizes = read_case_file(name, suffix, &sizes_bytes);
        if (failures == 0 && (out->rank != sizes_bytes / sizeof(int32_t) ||
                              (sizes_bytes != 0u && memcmp(out->sizes, sizes, sizes_bytes) != 0))) {
            fprintf(stderr, "%s: output %d reports other sizes than the hand-checked ones\n", name, i);
            ++failures;
        }
        free(sizes);
    }
    ptec_method_unload(&method);
    free(pte);
    free(buffer);
    return failures;
}

static int fail_case(const char *name, int want_status, const char *text)
{
    ptec_program program;
    ptec_method method;
    void *pte, *buffer;
    int st = load(name, &program, &method, &pte, &buffer);
    int failures = 0;
    const char *detail = detail_of(&program, &method);
    if (st != want_status || strstr(detail, text) == NULL) {
        fprintf(stderr, "%s: got 0x%02x \"%s\", want 0x%02x and \"%s\"\n", name, st, detail, want_status, text);
        failures = 1;
    }
    if (st == PTEC_OK) {
        ptec_method_unload(&method);
    }
    free(pte);
    free(buffer);
    return failures;
}

/* Loads and takes its inputs, then its execute must fail with want_status
 * and a detail holding text. */
static int exec_fail_case(const char *name, int inputs, int want_status, const char *text)
{
    ptec_program program;
    ptec_method method;
    void *pte, *buffer;
    int st = load(name, &program, &method, &pte, &buffer);
    if (st != PTEC_OK) {
        fprintf(stderr, "%s: load failed: %s\n", name, detail_of(&program, &method));
        free(pte);
        free(buffer);
        return 1;
    }
    int failures = set_inputs(name, &program, &method, inputs);
    if (failures == 0) {
        st = (int)ptec_method_execute(&method);
        const char *detail = ptec_method_error(&method);
        if (st != want_status || strstr(detail, text) == NULL) {
            fprintf(stderr, "%s: execute gave 0x%02x \"%s\", want 0x%02x and \"%s\"\n", name, st, detail,
                    want_status, text);
            failures = 1;
        }
    }
    ptec_method_unload(&method);
    free(pte);
    free(buffer);
    return failures;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s CASE_DIR\n", argv[0]);
        return 2;
    }
    snprintf(case_dir, sizeof case_dir, "%s", argv[1]);
    char path[1100];
    snprintf(path, sizeof path, "%s/cases.txt", case_dir);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        fprintf(stderr, "cannot open %s\n", path);
        return 2;
    }
    char line[512];
    int checks = 0, runs = 0, fails = 0, exec_fails = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        char kind[12], name[128];
        int a, b, c, used;
        if (sscanf(line, "%11s %127s%n", kind, name, &used) != 2) {
            continue;
        }
        ++checks;
        if (strcmp(kind, "run") == 0 && sscanf(line + used, "%d %d", &a, &b) == 2) {
            test_failures += run_case(name, a, b);
            ++runs;
        } else if (strcmp(kind, "fail") == 0 && sscanf(line + used, " %i %n", &a, &b) == 1) {
            char *text = line + used + b;
            text[strcspn(text, "\n")] = '\0';
            test_failures += fail_case(name, a, text);
            ++fails;
        } else if (strcmp(kind, "execfail") == 0 && sscanf(line + used, "%d %i %n", &a, &b, &c) == 2) {
            char *text = line + used + c;
            text[strcspn(text, "\n")] = '\0';
            test_failures += exec_fail_case(name, a, b, text);
            ++exec_fails;
        } else {
            fprintf(stderr, "bad manifest line: %s", line);
            ++test_failures;
        }
    }
    fclose(f);
    printf("%d hand-checked programs, %d refused calls, %d failed executes\n", runs, fails, exec_fails);
    return test_summary("portable.unit", checks);
}
