/* NumPy broadcasting of up to three inputs onto an out tensor, each
 * addressed through its own dim order: the comparisons, the logical ops,
 * aten::where and the float functions of two tensors (float_binary.c).
 * prepare() checks the shapes once with ptec_broadcast_strides; run()
 * walks every element of out with a ptec_broadcast odometer (its strides
 * derived again, kept off the kernel's metadata). */
#ifndef PTEC_KERNELS_PORTABLE_BROADCAST_H
#define PTEC_KERNELS_PORTABLE_BROADCAST_H

#include "ptec/kernel.h"

#define PTEC_BROADCAST_MAX_INPUTS 3

/* The element strides of `t` right-aligned onto out's logical dims, 0 where
 * t has extent 1 (broadcast) or no dim. Fails naming `arg` when t has more
 * dims than out or an extent other than 1 or out's. */
ptec_status ptec_broadcast_strides(ptec_op *op, int arg, const ptec_tensor *t, const ptec_tensor *out,
                                   int32_t *strides);

typedef struct ptec_broadcast {
    int n;                                     /* inputs */
    int rank;                                  /* out's */
    const int32_t *sizes;                      /* out's */
    int32_t index[PTEC_MAX_RANK];
    int32_t stride[PTEC_BROADCAST_MAX_INPUTS + 1][PTEC_MAX_RANK];   /* inputs, then out */
    size_t off[PTEC_BROADCAST_MAX_INPUTS + 1];                      /* element offsets */
} ptec_broadcast;

/* Starts the walk at out's first logical element; the input arguments are
 * args[0..n), out is argument `out_arg`. Their shapes were checked by
 * prepare(). */
void ptec_broadcast_start(ptec_broadcast *w, ptec_op *op, const int *args, int n, int out_arg);
/* Moves to the next logical element of out (row-major). */
void ptec_broadcast_next(ptec_broadcast *w);

#endif
