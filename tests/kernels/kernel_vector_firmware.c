/* Board side of the kernel vector test: the case file written by
 * kernel_vectors.py comes through the host link as the program
 * (scripts/run_qemu.sh --model on the QEMU boards); the cases run on the
 * core being tested. Exit status 0
 * when every output matches. */
#include <stdio.h>

#include "kernel_vector_cases.h"
#include "ptec_board.h"
#include "ptec_host_link.h"

enum { ARENA_BYTES = 256 * 1024 }; /* the largest case needs well under 64 KB */

typedef struct arena {
    _Alignas(8) unsigned char bytes[ARENA_BYTES];
    size_t used;
} arena;

static arena case_memory;

static void *arena_alloc(void *ctx, size_t size)
{
    arena *a = ctx;
    const size_t start = (a->used + 7u) & ~(size_t)7u;
    if (start > ARENA_BYTES || size > ARENA_BYTES - start) {
        return NULL;
    }
    a->used = start + size;
    return a->bytes + start;
}

static void arena_release_all(void *ctx)
{
    ((arena *)ctx)->used = 0;
}

int main(void)
{
    printf("kernel vectors on %s\n", ptec_board_name());
    ptec_host_bytes cases;
    ptec_host_link_program(&cases);
    if (cases.size == 0) {
        printf("no case file: run with scripts/run_qemu.sh --model CASES.bin\n");
        return 2;
    }
    const kv_memory memory = {arena_alloc, arena_release_all, &case_memory};
    const int failed = kv_run_cases(cases.data, cases.size, &memory);
    return failed == 0 ? 0 : 1;
}
