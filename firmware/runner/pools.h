/* The runner's memory for a method: three static pools whose capacities
 * are fixed at build time. Each region gets exactly the bytes the runtime
 * asked for; a region that does not fit gets what is left, so the runtime
 * refuses the load and reports the shortfall itself. */
#ifndef PTEC_RUNNER_POOLS_H
#define PTEC_RUNNER_POOLS_H

#include <stddef.h>

#include "ptec/ptec.h"

typedef struct pool_capacity {
    size_t metadata;
    size_t planned;
    size_t scratch;
} pool_capacity;

/* Build-time capacities of the three pools. */
pool_capacity pools_capacity(void);

/* Carves `mem` from the pools for `req`. Returns 0 when every region got
 * what it needs, non-zero when some region was given less. */
int pools_carve(const ptec_requirements *req, ptec_memory *mem);

/* Whether [data, data + nbytes) lies inside the planned-buffer pool: memory
 * the runner owns and may write before handing it to the runtime. */
int pools_planned_holds(const void *data, size_t nbytes);

#endif
