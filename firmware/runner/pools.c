#include "pools.h"

#include <stdint.h>
#include <string.h>

#ifndef PTEC_RUNNER_METADATA_BYTES
#define PTEC_RUNNER_METADATA_BYTES (64u * 1024u)
#endif
#ifndef PTEC_RUNNER_PLANNED_BYTES
#define PTEC_RUNNER_PLANNED_BYTES (2u * 1024u * 1024u)
#endif
#ifndef PTEC_RUNNER_SCRATCH_BYTES
#define PTEC_RUNNER_SCRATCH_BYTES (128u * 1024u)
#endif

/* In .ptec_pool: NOLOAD memory that reset does not clear (docs/targets.md).
 * A zero capacity still needs one aligned byte to have an address. */
#define POOL(name, bytes) \
    static uint8_t name[(bytes) > 0u ? (bytes) : 1u] \
        __attribute__((section(".ptec_pool." #name), aligned(PTEC_BUFFER_ALIGN)))

POOL(metadata_pool, PTEC_RUNNER_METADATA_BYTES);
POOL(planned_pool, PTEC_RUNNER_PLANNED_BYTES);
POOL(scratch_pool, PTEC_RUNNER_SCRATCH_BYTES);

pool_capacity pools_capacity(void)
{
    const pool_capacity capacity = {PTEC_RUNNER_METADATA_BYTES, PTEC_RUNNER_PLANNED_BYTES,
                                    PTEC_RUNNER_SCRATCH_BYTES};
    return capacity;
}

static size_t align_up(size_t n)
{
    return (n + PTEC_BUFFER_ALIGN - 1u) & ~(size_t)(PTEC_BUFFER_ALIGN - 1u);
}

static size_t at_most(size_t wanted, size_t available)
{
    return wanted < available ? wanted : available;
}

int pools_carve(const ptec_requirements *req, ptec_memory *mem)
{
    int short_somewhere = 0;
    memset(mem, 0, sizeof(*mem));

    mem->metadata = metadata_pool;
    mem->metadata_size = at_most(req->metadata_bytes, PTEC_RUNNER_METADATA_BYTES);
    short_somewhere |= mem->metadata_size < req->metadata_bytes;

    size_t used = 0;
    mem->planned_count = req->planned_count;
    for (size_t i = 0; i < req->planned_count && i < PTEC_MAX_PLANNED_BUFFERS; ++i) {
        const size_t left = PTEC_RUNNER_PLANNED_BYTES - used;
        mem->planned[i] = planned_pool + used;
        mem->planned_size[i] = at_most(req->planned_bytes[i], left);
        short_somewhere |= mem->planned_size[i] < req->planned_bytes[i];
        used += at_most(align_up(mem->planned_size[i]), left);
    }

    mem->scratch = scratch_pool;
    mem->scratch_size = at_most(req->scratch_bytes, PTEC_RUNNER_SCRATCH_BYTES);
    short_somewhere |= mem->scratch_size < req->scratch_bytes;
    /* No fast-scratch pool: the runner's programs have no delegate asking for one. */
    short_somewhere |= req->fast_scratch_bytes > 0;
    return short_somewhere;
}

int pools_planned_holds(const void *data, size_t nbytes)
{
    const uintptr_t at = (uintptr_t)data;
    const uintptr_t begin = (uintptr_t)planned_pool;
    return data != NULL && at >= begin && at - begin <= PTEC_RUNNER_PLANNED_BYTES &&
           nbytes <= PTEC_RUNNER_PLANNED_BYTES - (at - begin);
}
