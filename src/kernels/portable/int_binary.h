/* The engine behind the integer forms of two-tensor functions
 * (aten::floor_divide.out, aten::bitwise_and / or / xor.Tensor_out,
 * aten::bitwise_left_shift / right_shift.Tensor_out, aten::gcd.out / lcm.out, and aten::fmod.Tensor_out /
 * remainder.Tensor_out of int32 / int64 tensors): NumPy broadcasting over logical indices, each
 * tensor through its own dim order, one function per element computed in
 * int64 and stored in out's dtype. self, other and out share one dtype,
 * int32 or int64 (PyTorch's promotion is made by the program, a cast).
 *
 * A function reports an element it has no integer result for (division by
 * zero, the least value divided by -1: PyTorch's CPU kernels raise
 * ZeroDivisionError for the first and trap for the second; a shift by a
 * negative amount or by the width or more, whose result PyTorch's CPU
 * kernels give differently across versions): the execute fails with
 * InvalidArgument, never writing a made-up number. */
#ifndef PTEC_KERNELS_PORTABLE_INT_BINARY_H
#define PTEC_KERNELS_PORTABLE_INT_BINARY_H

#include <stdbool.h>

#include "ptec/kernel.h"

/* The functions (PyTorch's integer semantics; C's / and % truncate toward zero). */
typedef enum int_binary_kind {
    INT_FLOOR_DIVIDE, /* the quotient toward minus infinity */
    INT_FMOD,         /* the dividend's sign */
    INT_REMAINDER,    /* the divisor's sign, as Python's % */
    INT_AND,
    INT_OR,
    INT_XOR,
    INT_LEFT_SHIFT,  /* two's complement bits shifted out (wrapping as PyTorch's); amount in [0, width) */
    INT_RIGHT_SHIFT, /* arithmetic (the sign copied in); amount in [0, width) */
    INT_GCD,         /* Euclid's on |a|, |b| (the least value's |.| is itself, as PyTorch's) */
    INT_LCM,         /* |a / gcd * b|, wrapping in the dtype; 0 when gcd is 0 */
} int_binary_kind;

typedef struct int_binary_state {
    uint8_t flat;  /* 1: self, other and out share one layout */
    uint8_t dtype; /* PTEC_DTYPE_INT or PTEC_DTYPE_LONG; 0 in a float kernel's state */
} int_binary_state;

/* Whether self (arg 0) is an int32 or int64 tensor: the kernels that also
 * take float32 choose this engine by it. */
bool ptec_int_binary_applies(ptec_op *op);
/* self = arg 0, other = arg 1, out = arg 2 (and the return slot). */
ptec_status ptec_int_binary_prepare(ptec_op *op);
/* The kinds are passed by value, not as function pointers: a pointer to a
 * function of another file would need the global offset table in a PIE
 * build, a symbol the runtime may not need (check_runtime_symbols.sh). */
ptec_status ptec_int_binary_run(ptec_op *op, int_binary_kind kind);

#endif
