/* Caller memory for a method, one allocation per region, each exactly the
 * size the requirements name (so ASan reports any byte written past one). */
#ifndef PTEC_TEST_REGIONS_H
#define PTEC_TEST_REGIONS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptec/ptec.h"

static inline void *test_exact_alloc(size_t n)
{
    void *p = NULL;
    return posix_memalign(&p, PTEC_BUFFER_ALIGN, n ? n : 1) == 0 ? p : NULL;
}

static inline void test_regions_alloc(ptec_memory *mem, const ptec_requirements *req)
{
    memset(mem, 0, sizeof *mem);
    mem->metadata = test_exact_alloc(req->metadata_bytes);
    mem->metadata_size = req->metadata_bytes;
    mem->planned_count = req->planned_count;
    for (size_t i = 0; i < req->planned_count; ++i) {
        mem->planned[i] = test_exact_alloc(req->planned_bytes[i]);
        mem->planned_size[i] = req->planned_bytes[i];
    }
    mem->scratch = test_exact_alloc(req->scratch_bytes);
    mem->scratch_size = req->scratch_bytes;
    mem->fast_scratch = test_exact_alloc(req->fast_scratch_bytes);
    mem->fast_scratch_size = req->fast_scratch_bytes;
}

static inline void test_regions_free(ptec_memory *mem)
{
    free(mem->metadata);
    for (size_t i = 0; i < mem->planned_count; ++i) {
        free(mem->planned[i]);
    }
    free(mem->scratch);
    free(mem->fast_scratch);
}

/* `mem` with its k-th region one byte short (0 metadata, 1..planned_count
 * the planned buffers, then scratch, then fast scratch when it has any) in
 * *out, and the name a load's error gives that region; NULL past the last. */
static inline const char *test_regions_short(const ptec_memory *mem, size_t k, ptec_memory *out)
{
    static char planned_name[48];
    *out = *mem;
    if (k == 0) {
        out->metadata_size -= 1;
        return "metadata buffer";
    }
    if (k <= mem->planned_count) {
        out->planned_size[k - 1] -= 1;
        snprintf(planned_name, sizeof planned_name, "planned buffer (memory id) %zu", k);
        return planned_name;
    }
    if (k == mem->planned_count + 1) {
        out->scratch_size -= 1;
        return "scratch buffer";
    }
    if (k == mem->planned_count + 2 && mem->fast_scratch_size > 0) {
        out->fast_scratch_size -= 1;
        return "fast scratch buffer";
    }
    return NULL;
}

#endif
