/* Element strides of a tensor, per logical dimension, from its dim order,
 * and the row-major odometer that walks logical indices with them. */
#ifndef PTEC_KERNELS_PORTABLE_STRIDES_H
#define PTEC_KERNELS_PORTABLE_STRIDES_H

#include "ptec/types.h"

/* strides[d] is the element distance between neighbours along logical dim
 * d. A zero extent counts as 1, as upstream does, so strides stay distinct.
 * The load refuses a tensor whose extents (a 0 counted as 1) multiply to
 * 2^31 or more (value_parse.c), so every stride fits int32; the product
 * runs in uint32 all the same. */
static inline void ptec_physical_strides(const ptec_tensor *t, int32_t *strides)
{
    uint32_t stride = 1;
    for (int i = (int)t->rank - 1; i >= 0; --i) {
        uint8_t axis = t->dim_order[i];
        strides[axis] = (int32_t)stride;
        stride *= t->sizes[axis] > 1 ? (uint32_t)t->sizes[axis] : 1u;
    }
}

/* Moves a row-major odometer over `sizes` one element on, keeping two
 * element offsets in step (one per tensor, each with its own strides).
 * Offsets wrap through size_t on the way back, as in the binary kernels;
 * every offset they land on is in range. */
static inline void ptec_walk_step(int rank, const int32_t *sizes, int32_t *index, const int32_t *stride_a,
                                  size_t *off_a, const int32_t *stride_b, size_t *off_b)
{
    for (int d = rank - 1; d >= 0; --d) {
        if (++index[d] < sizes[d]) {
            *off_a += (size_t)stride_a[d];
            *off_b += (size_t)stride_b[d];
            return;
        }
        *off_a -= (size_t)stride_a[d] * (size_t)(sizes[d] - 1);
        *off_b -= (size_t)stride_b[d] * (size_t)(sizes[d] - 1);
        index[d] = 0;
    }
}

/* A reduction's two odometers (aten::mean, argmax, argmin): the kept dims,
 * with their strides in the input (kept_sx) and in the output (kept_sy),
 * and the reduced dims (bit d of reduced_mask) with their input strides,
 * each in the input's logical order; with keepdim the output holds a
 * size-1 dim where the input's was reduced. */
typedef struct ptec_reduce_walk {
    int kept, reduced;
    int32_t kept_sizes[PTEC_MAX_RANK], kept_sx[PTEC_MAX_RANK], kept_sy[PTEC_MAX_RANK];
    int32_t red_sizes[PTEC_MAX_RANK], red_sx[PTEC_MAX_RANK];
} ptec_reduce_walk;

static inline void ptec_reduce_walk_init(const ptec_tensor *in, const ptec_tensor *out, uint32_t reduced_mask,
                                         bool keepdim, ptec_reduce_walk *w)
{
    int32_t sx[PTEC_MAX_RANK], sy[PTEC_MAX_RANK];
    ptec_physical_strides(in, sx);
    ptec_physical_strides(out, sy);
    int out_dim = 0;
    w->kept = w->reduced = 0;
    for (int d = 0; d < (int)in->rank; ++d) {
        if (reduced_mask & (1u << d)) {
            w->red_sizes[w->reduced] = in->sizes[d];
            w->red_sx[w->reduced++] = sx[d];
            out_dim += keepdim;
        } else {
            w->kept_sizes[w->kept] = in->sizes[d];
            w->kept_sx[w->kept] = sx[d];
            w->kept_sy[w->kept++] = sy[out_dim++];
        }
    }
}

#endif
