/* Caller memory for a method, one allocation per region, each exactly the
 * size the requirements name (so ASan reports any byte written past one). */
#ifndef PTEC_TEST_REGIONS_H
#define PTEC_TEST_REGIONS_H

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

#endif
