/* The engine behind the float32 functions of two tensors (aten::pow.Tensor_Tensor_out,
 * atan2, hypot, fmod.Tensor_out, remainder.Tensor_out, copysign): NumPy
 * broadcasting over logical indices, each tensor through its own dim order,
 * one scalar function per element, a NaN result written as the one quiet
 * NaN 0x7FC00000. Kept apart from add/sub/mul/div so that
 * a program without these links none of the libm functions they call. */
#ifndef PTEC_KERNELS_PORTABLE_FLOAT_BINARY_H
#define PTEC_KERNELS_PORTABLE_FLOAT_BINARY_H

#include "ptec/kernel.h"

typedef float (*float_binary_fn)(float a, float b);

typedef struct float_binary_state {
    uint8_t flat; /* 1: self, other and out share one layout */
} float_binary_state;

/* self = arg 0, other = arg 1, out = arg 2 (and the return slot). */
ptec_status ptec_float_binary_prepare(ptec_op *op);
ptec_status ptec_float_binary_run(ptec_op *op, float_binary_fn fn);

#endif
