/* Host side of the kernel vector test: reads the case file written by
 * kernel_vectors.py and runs it (kernel_vector_cases.c). Every buffer is a
 * malloc of its exact size, so an out-of-bounds write shows up under ASan. */
#include <stdio.h>
#include <stdlib.h>

#include "kernel_vector_cases.h"

enum { MAX_LIVE = 16 };

typedef struct live_blocks {
    void *blocks[MAX_LIVE];
    int count;
} live_blocks;

static void *host_alloc(void *ctx, size_t size)
{
    live_blocks *live = ctx;
    if (live->count == MAX_LIVE) {
        return NULL;
    }
    void *p = malloc(size);
    if (p != NULL) {
        live->blocks[live->count++] = p;
    }
    return p;
}

static void host_release_all(void *ctx)
{
    live_blocks *live = ctx;
    while (live->count > 0) {
        free(live->blocks[--live->count]);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s CASE_FILE\n", argv[0]);
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (f == NULL) {
        perror(argv[1]);
        return 2;
    }
    fseek(f, 0, SEEK_END);
    const long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *data = malloc(size > 0 ? (size_t)size : 1u);
    if (data == NULL || size <= 0 || fread(data, 1, (size_t)size, f) != (size_t)size) {
        fprintf(stderr, "%s: cannot read\n", argv[1]);
        return 2;
    }
    fclose(f);
    live_blocks live = {{0}, 0};
    const kv_memory memory = {host_alloc, host_release_all, &live};
    const int failed = kv_run_cases(data, (size_t)size, &memory);
    free(data);
    return failed == 0 ? 0 : 1;
}
