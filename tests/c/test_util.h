/* Tiny test helpers shared by the runtime tests. */
#ifndef PTEC_TEST_UTIL_H
#define PTEC_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_failures;

#define CHECK(cond)                                                                          \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);         \
            ++test_failures;                                                                 \
        }                                                                                    \
    } while (0)

#define CHECK_STATUS(expr, want)                                                             \
    do {                                                                                     \
        int got_ = (int)(expr);                                                              \
        if (got_ != (int)(want)) {                                                           \
            fprintf(stderr, "%s:%d: %s gave 0x%02x, want 0x%02x\n", __FILE__, __LINE__, #expr, \
                    got_, (int)(want));                                                      \
            ++test_failures;                                                                 \
        }                                                                                    \
    } while (0)

static inline void *test_alloc(size_t n)
{
    return aligned_alloc(16, ((n ? n : 1) + 15u) & ~(size_t)15u);
}

/* Reads a whole file into 16-byte-aligned memory; exits on failure. */
static inline void *test_read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "cannot open %s\n", path);
        exit(2);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *data = test_alloc((size_t)n);
    if (fread(data, 1, (size_t)n, f) != (size_t)n) {
        exit(2);
    }
    fclose(f);
    *size = (size_t)n;
    return data;
}

static inline int test_summary(const char *name, int checks)
{
    printf("%s: %d passed, %d failed\n", name, checks - test_failures, test_failures);
    return test_failures ? 1 : 0;
}

#endif
