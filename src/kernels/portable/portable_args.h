/* Argument checks the portable kernels share. Each fails through
 * ptec_op_fail with a message naming the problem. */
#ifndef PTEC_KERNELS_PORTABLE_PORTABLE_ARGS_H
#define PTEC_KERNELS_PORTABLE_PORTABLE_ARGS_H

#include "ptec/kernel.h"

/* The float kernels compute in single precision only. */
ptec_status ptec_portable_expect_float(ptec_op *op, int arg, const ptec_tensor *t);
/* A dim argument in [-rank, rank) as an index in [0, rank). */
ptec_status ptec_portable_dim(ptec_op *op, int arg, int64_t dim, int rank, int *out);
/* An int[2] argument (kernel_size, stride, ...); a single item counts for
 * both axes, and an empty list gives `fallback` when fallback is not NULL. */
ptec_status ptec_portable_pair(ptec_op *op, size_t arg, const int32_t *fallback, int32_t *out);
/* The arguments the dim-order copies share (self, bool non_blocking,
 * int[]? dim_order, out: _clone_dim_order, _to_dim_order_copy):
 * non_blocking false and a given dim_order equal to out's dim order. */
ptec_status ptec_portable_dim_order_copy_args(ptec_op *op, ptec_tensor **self, ptec_tensor **out);
/* Fails unless `t` has exactly the sizes given. */
ptec_status ptec_portable_expect_sizes(ptec_op *op, int arg, const ptec_tensor *t, const int32_t *sizes,
                                       int rank, const char *message);

#endif
