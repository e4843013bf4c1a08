/* Element copies the data-movement kernels share (view, squeeze,
 * unsqueeze, permute, slice, cat). They move bytes of any dtype. */
#ifndef PTEC_KERNELS_PORTABLE_DATA_MOVEMENT_H
#define PTEC_KERNELS_PORTABLE_DATA_MOVEMENT_H

#include "ptec/kernel.h"

/* Checks argc, self (arg 0) and out, and that they share a dtype. */
ptec_status ptec_move_prepare(ptec_op *op, size_t argc, ptec_tensor **self, ptec_tensor **out);

/* out receives in's elements in logical row-major order (the two shapes
 * differ, the element counts agree): view, squeeze and unsqueeze. */
void ptec_copy_reshape(const ptec_tensor *in, const ptec_tensor *out);

/* Copies a box of `sizes`: element i (row-major) is read at
 * in_offset + sum(index * in_strides) and written likewise. */
void ptec_copy_strided(size_t elem_size, int rank, const int32_t *sizes, const uint8_t *in, const int32_t *in_strides,
                       size_t in_offset, uint8_t *out, const int32_t *out_strides, size_t out_offset);

#endif
