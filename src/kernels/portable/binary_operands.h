/* The argument checks the element-wise functions of two tensors share
 * (op_compare.c, op_minimum_maximum.c, int_binary.c, float_binary.c):
 * self = arg 0, other = arg 1 (a tensor, or a Scalar in a comparison's
 * Scalar form), out = arg 2 and the return slot. Each fails through
 * ptec_op_fail naming the argument; the dtype rule that only one kernel
 * has stays in that kernel, between these calls. */
#ifndef PTEC_KERNELS_PORTABLE_BINARY_OPERANDS_H
#define PTEC_KERNELS_PORTABLE_BINARY_OPERANDS_H

#include <stdbool.h>

#include "ptec/kernel.h"

/* Four arguments; self, other and out tensors, fetched in that order. */
ptec_status ptec_binary_operands(ptec_op *op, ptec_tensor **self, ptec_tensor **other, ptec_tensor **out);
/* self's dtype is one the comparisons and the extremes read: bool, uint8,
 * int8/16/32/64 or float32. */
ptec_status ptec_binary_expect_plain_dtype(ptec_op *op, const ptec_tensor *self);
/* other and out have self's dtype (no promotion); the failure names other
 * first. */
ptec_status ptec_binary_expect_same_dtype(ptec_op *op, const ptec_tensor *self, const ptec_tensor *other,
                                          const ptec_tensor *out);
/* out is writable, and self and other (NULL: a Scalar) broadcast onto it. */
ptec_status ptec_binary_onto_out(ptec_op *op, const ptec_tensor *self, const ptec_tensor *other,
                                 const ptec_tensor *out);
/* a and b have one shape and one dim order: their elements pair up flat. */
bool ptec_binary_same_layout(const ptec_tensor *a, const ptec_tensor *b);
/* An element of a plain integer dtype (bool, uint8, int8/16/32/64) as an
 * int64; a bool reads as 0 or 1 (any nonzero byte is true). */
int64_t ptec_binary_load_int(uint8_t dtype, const uint8_t *p);

#endif
