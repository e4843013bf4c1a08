/* The kernel vector test's case runner, shared by the host harness and the
 * board firmware (see kernel_vector_cases.c). */
#ifndef KERNEL_VECTOR_CASES_H
#define KERNEL_VECTOR_CASES_H

#include <stddef.h>
#include <stdint.h>

/* Where the runner gets its buffers: alloc returns 8-byte aligned memory
 * (NULL when there is none left); release_all takes back everything alloc
 * gave since the last release_all. */
typedef struct kv_memory {
    void *(*alloc)(void *ctx, size_t size);
    void (*release_all)(void *ctx);
    void *ctx;
} kv_memory;

/* Runs every case of a case file held in memory, printing a line per
 * mismatch and a per-operator summary. Returns the number of failed cases,
 * or -1 for a malformed or empty file. */
int kv_run_cases(const uint8_t *data, size_t size, const kv_memory *memory);

#endif
