/* Element copies the data-movement kernels share (view, squeeze,
 * unsqueeze, permute, slice, cat). They move bytes of any dtype. */
#ifndef PTEC_KERNELS_PORTABLE_DATA_MOVEMENT_H
#define PTEC_KERNELS_PORTABLE_DATA_MOVEMENT_H

#include "ptec/kernel.h"

/* Checks argc, self (arg 0) and out, and that they share a dtype. */
ptec_status ptec_move_prepare(ptec_op *op, size_t argc, ptec_tensor **self, ptec_tensor **out);

/* (Tensor self, int[] list, *, Tensor(a!) out), the shape of permute
 * (dims), squeeze (dims) and view (size): ptec_move_prepare, then the int
 * list. */
typedef struct ptec_move_list_args {
    ptec_tensor *self, *out;
    int64_t list[PTEC_MAX_RANK];
    size_t count;
} ptec_move_list_args;

ptec_status ptec_move_prepare_list(ptec_op *op, ptec_move_list_args *args);

/* The state of view, squeeze and unsqueeze, which take everything from
 * the tensors, and their run: out (arg 2) receives self's (arg 0)
 * elements in logical order. */
typedef struct ptec_move_reshape_state {
    uint8_t unused;
} ptec_move_reshape_state;

ptec_status ptec_move_run_reshape(ptec_op *op);

/* out receives in's elements in logical row-major order (the two shapes
 * differ, the element counts agree): view, squeeze and unsqueeze. */
void ptec_copy_reshape(const ptec_tensor *in, const ptec_tensor *out);

/* Copies a box of `sizes`: element i (row-major) is read at
 * in_offset + sum(index * in_strides) and written likewise. */
void ptec_copy_strided(size_t elem_size, int rank, const int32_t *sizes, const uint8_t *in, const int32_t *in_strides,
                       size_t in_offset, uint8_t *out, const int32_t *out_strides, size_t out_offset);

#endif
