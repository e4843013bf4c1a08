/* The random stream of ptec's random kernels (ptec::random_dropout,
 * ptec::random_fractional_pick): PCG32 (O'Neill's permuted congruential
 * generator, XSH-RR output of a 64-bit LCG), a small generator with good
 * statistics and no tables. Each kernel keeps its generator in its prepared
 * state, seeded at prepare from the seed the compiler wrote for the node, so
 * the stream restarts at each load and advances from one execute to the
 * next. python/ptec/reference/random_ops.py implements the same stream. */
#ifndef PTEC_KERNELS_PORTABLE_PTEC_RANDOM_H
#define PTEC_KERNELS_PORTABLE_PTEC_RANDOM_H

#include <stdint.h>

typedef struct ptec_random {
    uint64_t state;
    uint64_t inc; /* odd: the LCG's increment (PCG's stream selector) */
} ptec_random;

/* PCG32's seeding (pcg32_srandom_r) with initstate = seed and a fixed stream. */
void ptec_random_seed(ptec_random *r, uint64_t seed);
uint32_t ptec_random_u32(ptec_random *r);
/* A float in [0, 1): the top 24 bits of one draw times 2^-24 (exact in float). */
float ptec_random_float(ptec_random *r);

#endif
