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

/* Exactly n bytes on the runtime's 16-byte alignment (PTEC_BUFFER_ALIGN).
 * The size is not rounded up, so under ASan (host-asan preset) a read even
 * one byte past the end is a report. posix_memalign, not aligned_alloc:
 * ASan refuses aligned_alloc sizes that are not a multiple of the alignment.
 * Users compile with -D_POSIX_C_SOURCE=200809L. */
static inline void *test_alloc(size_t n)
{
    void *p = NULL;
    if (posix_memalign(&p, 16, n ? n : 1) != 0) {
        fprintf(stderr, "test_alloc: out of memory for %zu bytes\n", n);
        exit(2);
    }
    return p;
}

/* Reads a whole file into 16-byte-aligned memory of exactly its size; exits
 * on failure. */
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
