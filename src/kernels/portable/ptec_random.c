/* PCG32 (see ptec_random.h). */
#include "kernels/portable/ptec_random.h"

#define PCG_MULTIPLIER 6364136223846793005ull
#define PTEC_RANDOM_STREAM 0xda3e39cb94b95bdbull /* any constant: one fixed stream for every seed */

uint32_t ptec_random_u32(ptec_random *r)
{
    uint64_t old = r->state;
    r->state = old * PCG_MULTIPLIER + r->inc;
    uint32_t xorshifted = (uint32_t)(((old >> 18u) ^ old) >> 27u);
    uint32_t rot = (uint32_t)(old >> 59u);
    return (xorshifted >> rot) | (xorshifted << ((32u - rot) & 31u));
}

void ptec_random_seed(ptec_random *r, uint64_t seed)
{
    r->state = 0u;
    r->inc = (PTEC_RANDOM_STREAM << 1u) | 1u;
    (void)ptec_random_u32(r);
    r->state += seed;
    (void)ptec_random_u32(r);
}

float ptec_random_float(ptec_random *r)
{
    return (float)(ptec_random_u32(r) >> 8u) * 0x1p-24f;
}
